import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';

/** One request of a load run: when it started and ended (ms, performance.now()), and what came back. */
export interface Outcome {
  path: string;
  /** Sent as X-Request-Id, so a backend stub can tell which requests reached it. */
  requestId: string;
  startedAt: number;
  endedAt: number;
  status?: number;
  contentType?: string;
  body?: string;
  /** Set when no complete answer came back (refused, reset, truncated body). */
  error?: string;
}

export interface Load {
  outcomes: Outcome[];
  /** Stops issuing requests and resolves once every worker's last request has ended. */
  stop(): Promise<Outcome[]>;
}

/**
 * `workers` keep-alive loops against `baseUrl`, each sending the next request when its previous one ended
 * (closed-loop load, bounded: the caller stops it). Failures are recorded, never thrown.
 */
export function startLoad(baseUrl: string, paths: readonly string[], workers: number): Load {
  const agent = new Agent({ connections: workers, keepAliveTimeout: 10_000 });
  const outcomes: Outcome[] = [];
  let running = true;
  const loop = async (worker: number): Promise<void> => {
    for (let i = worker; running; i++) {
      const path = paths[i % paths.length] ?? '/';
      const requestId = `load-${worker}-${i}`;
      const outcome: Outcome = { path, requestId, startedAt: performance.now(), endedAt: 0 };
      try {
        const headers = { 'x-request-id': requestId };
        const res = await request(`${baseUrl}${path}`, {
          dispatcher: agent,
          headers,
          headersTimeout: 15_000,
          bodyTimeout: 15_000,
        });
        outcome.status = res.statusCode;
        outcome.contentType = String(res.headers['content-type'] ?? '');
        outcome.body = await res.body.text();
      } catch (err) {
        outcome.error = (err as { code?: string }).code ?? (err as Error).message;
        // A refused connection fails at once; pausing keeps a worker from spinning through thousands.
        await sleep(5);
      }
      outcome.endedAt = performance.now();
      outcomes.push(outcome);
    }
  };
  const done = Promise.all(Array.from({ length: workers }, (_, worker) => loop(worker)));
  return {
    outcomes,
    async stop() {
      running = false;
      await done;
      await agent.close();
      return outcomes;
    },
  };
}

/** How often a fault test looks again at what it waits for (`eventually`): the moment it happened matters. */
export const FAULT_POLL_MS = 20;
