const DAY_MS = 86_400_000;

/**
 * Whole days until a sunset, rounded up; 0 once it has passed. The one count the status page, the consumer's
 * report, the notices (e-mail and webhook) and the changelog show, so they never disagree. Rounded up so that a
 * milestone sent a minute after "sunset − 7 days" still says 7 days, and a version with hours left never reads
 * as gone (docs/versions.md#days-left).
 */
export function daysLeft(sunsetMs: number, nowMs: number): number {
  return Math.max(0, Math.ceil((sunsetMs - nowMs) / DAY_MS));
}

/** `1 day`, `2 days`. */
export const dayCount = (days: number): string => `${days} ${days === 1 ? 'day' : 'days'}`;
