import type { Dispatcher } from 'undici';

const PROBE_TIMEOUT_MS = 1_000;

/**
 * Whether the backend answers: a `HEAD /` through the gateway's own pool to BACKEND_URL gets a status below 500
 * within a second (the backend answers 404 there). A connection that fails, no answer in time, or a 5xx, which
 * is what a load balancer in front of the backends answers when it has none left (or a backend that is
 * shutting down), counts as down. What `backend_up` reports at each scrape; readiness never asks it.
 */
export async function backendAnswers(pool: Dispatcher, timeoutMs = PROBE_TIMEOUT_MS): Promise<boolean> {
  try {
    const { statusCode, body } = await pool.request({
      method: 'HEAD',
      path: '/',
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    await body.dump();
    return statusCode < 500;
  } catch {
    return false;
  }
}
