/**
 * A constant, bounded load for the fleet tests: a few workers each sending one request after the
 * other (keep-alive, loopback only) through the load balancer until told to stop or until the
 * request budget is spent. Every answer is checked against the status its request expects; an
 * unexpected status or a failed connection counts as a failed request. A request marked
 * `retryOnce` is sent once more, as a client holding an Idempotency-Key would, when its first
 * try did not get the expected status; only the second try's outcome then counts.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface LoadRequest {
  path: string;
  init?: RequestInit;
  /** The status of a successful answer. */
  expect: number;
  /** Other statuses that are no failure of the test (e.g. 503 while the database restarts). */
  tolerate?: readonly number[];
  /** Sent once more when the first try did not get `expect`: after its Retry-After, else 100 ms. */
  retryOnce?: boolean;
  /** Called with the outcome that counts (the retry's, when there was one). */
  onOutcome?: (outcome: Outcome) => void;
}

export interface LoadOptions {
  concurrency: number;
  /** Pause of each worker between two requests, so the load stays constant and modest. */
  pauseMs: number;
  /** Hard bound on the requests sent, whatever happens to `stop`. */
  maxRequests: number;
  /** The n-th request (from 0). */
  request: (n: number) => LoadRequest;
}

/** One try's result: a status and body, or the connection's error code. */
export interface Outcome {
  status?: number;
  body?: string;
  error?: string;
}

export interface Failure {
  /** Milliseconds since the epoch when the request was sent. */
  at: number;
  request: string;
  outcome: string;
}

export interface LoadReport {
  sent: number;
  failed: number;
  /** Requests a client sent a second time (`retryOnce`). */
  retried: number;
  /** Every failure, in the order seen. */
  failures: Failure[];
  /** Every try's outcome, first tries and retries alike, by "<method> <status or error>". */
  tries: Record<string, number>;
}

export interface RunningLoad {
  /** Requests answered so far (read while the load runs). */
  readonly sent: number;
  stop(): Promise<LoadReport>;
}

const REQUEST_TIMEOUT_MS = 30_000;

async function send(baseUrl: string, { path, init }: LoadRequest): Promise<Outcome & { retryAfterMs?: number }> {
  try {
    const response = await fetch(`${baseUrl}${path}`, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    const retryAfter = Number(response.headers.get('retry-after'));
    return {
      status: response.status,
      body: await response.text(),
      ...(retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
    };
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return { error: cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err)) };
  }
}

export function startLoad(baseUrl: string, options: LoadOptions): RunningLoad {
  let next = 0;
  let sent = 0;
  let retried = 0;
  let stopping = false;
  const failures: Failure[] = [];
  const tries: Record<string, number> = {};

  const worker = async (): Promise<void> => {
    while (!stopping && next < options.maxRequests) {
      const request = options.request(next++);
      const at = Date.now();
      const label = `${request.init?.method ?? 'GET'} ${request.path}`;
      const tryOnce = async (): Promise<Outcome & { retryAfterMs?: number }> => {
        const outcome = await send(baseUrl, request);
        const key = `${request.init?.method ?? 'GET'} ${outcome.status ?? outcome.error}`;
        tries[key] = (tries[key] ?? 0) + 1;
        return outcome;
      };
      let outcome = await tryOnce();
      if (request.retryOnce === true && outcome.status !== request.expect) {
        retried++;
        await sleep(outcome.retryAfterMs ?? 100);
        outcome = await tryOnce();
      }
      const { status, body, error } = outcome;
      if (status === undefined) failures.push({ at, request: label, outcome: error ?? 'no answer' });
      else if (status !== request.expect && !(request.tolerate ?? []).includes(status))
        failures.push({ at, request: label, outcome: `${status} ${(body ?? '').slice(0, 200)}` });
      request.onOutcome?.({
        ...(status === undefined ? {} : { status }),
        ...(body === undefined ? {} : { body }),
        ...(error === undefined ? {} : { error }),
      });
      sent++;
      await sleep(options.pauseMs);
    }
  };
  const workers = Array.from({ length: options.concurrency }, () => worker());

  return {
    get sent() {
      return sent;
    },
    async stop() {
      stopping = true;
      await Promise.all(workers);
      return { sent, failed: failures.length, retried, failures, tries };
    },
  };
}

/**
 * The mix the fleet tests send: orders in both versions and users (list pages, reads, creates) through gateway and
 * backend.
 */
export function mixedRequest(n: number): LoadRequest {
  switch (n % 4) {
    case 0:
      return { path: '/v2/orders/ord-1001', expect: 200 };
    case 1:
      return { path: '/v1/orders/ord-1002', expect: 200 };
    case 2:
      return { path: '/api/users/page?limit=5', expect: 200 };
    default:
      return {
        path: '/api/users',
        init: {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Load ${n}`, email: `load-${n}@example.com` }),
        },
        expect: 201,
      };
  }
}

/**
 * Creates with an Idempotency-Key each, sent once more by the client when the first try fails,
 * as the docs tell clients to: one key per user, named after the key so the users it made can be
 * counted. `created` gets every acknowledged user by key; `sentKeys` every key sent.
 */
export interface KeyedCreates {
  /** The n-th create of this load: a request with its own key, `<run>-<n>`. */
  request(n: number, options?: { tolerate?: readonly number[] }): LoadRequest;
  /** The user name a key's create carries. */
  nameOf(key: string): string;
  readonly sentKeys: Set<string>;
  /** Acknowledged creates: key → the user's id. */
  readonly acknowledged: Map<string, string>;
}

export function keyedCreates(run: string): KeyedCreates {
  const sentKeys = new Set<string>();
  const acknowledged = new Map<string, string>();
  const nameOf = (key: string): string => `Keyed ${key}`;
  return {
    sentKeys,
    acknowledged,
    nameOf,
    request(n, { tolerate } = {}) {
      const key = `${run}-${n}`;
      sentKeys.add(key);
      return {
        path: '/api/users',
        init: {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify({ name: nameOf(key), email: `${key}@example.com` }),
        },
        expect: 201,
        ...(tolerate === undefined ? {} : { tolerate }),
        retryOnce: true,
        onOutcome: ({ status, body }) => {
          if (status === 201) acknowledged.set(key, (JSON.parse(body ?? '{}') as { id: string }).id);
        },
      };
    },
  };
}
