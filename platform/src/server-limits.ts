/** The limits both processes enforce, in one place (docs/http.md#server-limits lists them). */
export const serverLimits = {
  /** Whole request, headers and body. */
  readTimeoutMs: 5_000,
  /** From the end of the request headers to the end of the response. */
  writeTimeoutMs: 10_000,
  idleTimeoutMs: 120_000,
  /** Node checks request deadlines only this often; a second keeps the 5 s read timeout prompt. */
  timeoutCheckIntervalMs: 500,
  bodyLimitBytes: 1_048_576,
  /**
   * Header fields per request (Apache's default). Node itself only keeps the first 2000 and drops the rest
   * silently; its 16 KiB limit on the request head still applies on top of this.
   */
  maxHeaderFields: 100,
  /** How much of an oversized upload is read and discarded so the client sees the 400, not a reset. */
  oversizedDrainLimitBytes: 16 * 1_048_576,
  shutdownGraceMs: 10_000,
} as const;
