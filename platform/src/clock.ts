/**
 * The time source both processes inject into their app factories: epoch milliseconds. main.ts passes
 * `Date.now`; tests pass a number they move by hand, so every instant a test asserts is exact.
 */
export type Clock = () => number;
