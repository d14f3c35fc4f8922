/**
 * A constant, bounded load for the fleet tests: a few workers each sending one request after the
 * other (keep-alive, loopback only) through the load balancer until told to stop or until the
 * request budget is spent. Every answer is checked against the status its request expects; an
 * unexpected status or a failed connection counts as a failed request.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface LoadRequest {
  path: string;
  init?: RequestInit;
  /** The status every answer must have. */
  expect: number;
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

export interface Failure {
  /** Milliseconds since the epoch when the request was sent. */
  at: number;
  request: string;
  outcome: string;
}

export interface LoadReport {
  sent: number;
  failed: number;
  /** Every failure, in the order seen. */
  failures: Failure[];
}

export interface RunningLoad {
  /** Requests answered so far (read while the load runs). */
  readonly sent: number;
  stop(): Promise<LoadReport>;
}

const REQUEST_TIMEOUT_MS = 30_000;

export function startLoad(baseUrl: string, options: LoadOptions): RunningLoad {
  let next = 0;
  let sent = 0;
  let stopping = false;
  const failures: Failure[] = [];

  const worker = async (): Promise<void> => {
    while (!stopping && next < options.maxRequests) {
      const { path, init, expect } = options.request(next++);
      const at = Date.now();
      const label = `${init?.method ?? 'GET'} ${path}`;
      try {
        const response = await fetch(`${baseUrl}${path}`, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
        const body = await response.text();
        if (response.status !== expect) failures.push({ at, request: label, outcome: `${response.status} ${body.slice(0, 200)}` });
      } catch (err) {
        const cause = (err as { cause?: { code?: string; message?: string } }).cause;
        failures.push({ at, request: label, outcome: cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err)) });
      }
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
      return { sent, failed: failures.length, failures };
    },
  };
}

/** The mix the fleet tests send: orders in both versions and users (list pages, reads, creates) through gateway and backend. */
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
        init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: `Load ${n}`, email: `load-${n}@example.com` }) },
        expect: 201,
      };
  }
}
