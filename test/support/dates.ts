/**
 * Dates for the policies of tests that run real processes, which read the machine's clock: computed from now, so
 * no such test fails on a day of the calendar (docs/testing.md#two-years-ahead). Tests of an app built in the test
 * inject a clock instead (gateway/test/support/helpers.ts `TODAY`).
 */
const DAY_MS = 86_400_000;

/** The instant `days` from now (negative: ago), RFC 3339 UTC. */
const daysFromNow = (days: number, nowMs: number = Date.now()): string => new Date(nowMs + days * DAY_MS).toISOString();

/**
 * A deprecated version's dates around now: announced 30 days ago, its sunset a year ahead (more than the 6 months'
 * notice the policy asks for), so it answers with its deprecation headers today.
 */
export const deprecatedAroundNow = (nowMs: number = Date.now()): { announced: string; sunset: string } => ({
  announced: daysFromNow(-30, nowMs),
  sunset: daysFromNow(365, nowMs),
});
