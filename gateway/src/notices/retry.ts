/** A notice that keeps failing is retried this long after its first attempt, then given up as failed. */
export const RETRY_FOR_MS = 24 * 3_600_000;
/** The longest wait between two attempts. */
const MAX_BACKOFF_MS = 3_600_000;

/**
 * When a notice that failed `attempts` times (first attempt at `firstAttemptMs`) is tried again, or undefined
 * when 24 h have passed since its first attempt (it is failed). The wait starts at `baseMs` (the interval between
 * checks: no retry can come sooner) and doubles up to an hour, each wait 0.8 to 1.2 times that at random, so
 * replicas that failed together do not retry together.
 */
export function nextAttemptAt(
  attempts: number,
  firstAttemptMs: number,
  nowMs: number,
  baseMs: number,
  random: () => number = Math.random,
): number | undefined {
  if (nowMs - firstAttemptMs >= RETRY_FOR_MS) return undefined;
  const wait = Math.min(baseMs * 2 ** Math.min(attempts - 1, 30), MAX_BACKOFF_MS);
  return nowMs + Math.round(wait * (0.8 + 0.4 * random()));
}
