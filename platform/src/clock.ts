/**
 * The time source both processes inject into their app factories: epoch milliseconds. main.ts passes
 * `Date.now`; tests pass a number they move by hand, so every instant a test asserts is exact.
 */
export type Clock = () => number;

/**
 * A clock that reads `startMs` now and advances in real time from there (a rehearsal on a moved date,
 * GATEWAY_CLOCK_START): measured on the monotonic clock, so a change of the machine's time does not move it.
 */
export function clockStartingAt(startMs: number): Clock {
  const origin = performance.now();
  return () => startMs + Math.floor(performance.now() - origin);
}
