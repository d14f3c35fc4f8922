import { randomFillSync } from 'node:crypto';

/**
 * Trace and span ids (W3C Trace Context: 16 and 8 random bytes, lower-case hex), cut from a pool of random bytes
 * that one call of the system's random source refills and one conversion turns into hex: a request's ids cost a
 * substring each, not a call each. A substring keeps its pool's text alive (an exemplar holds a trace id until its
 * bucket's next one), so the pool is small: 2 KiB of text a few dozen requests share.
 */
const POOL_BYTES = 1024;
const pool = Buffer.allocUnsafe(POOL_BYTES);
let hex = '';
/** Hex digits of the pool already used. */
let used = 0;

const INVALID_TRACE_ID = '0'.repeat(32);
const INVALID_SPAN_ID = '0'.repeat(16);

function randomHex(digits: number): string {
  if (used + digits > hex.length) {
    randomFillSync(pool);
    hex = pool.toString('hex');
    used = 0;
  }
  const start = used;
  used += digits;
  return hex.slice(start, used);
}

/** A new trace id; never all zeros, which W3C Trace Context reserves for "invalid". */
export function newTraceId(): string {
  let id = randomHex(32);
  while (id === INVALID_TRACE_ID) id = randomHex(32);
  return id;
}

/** A new span id; never all zeros. */
export function newSpanId(): string {
  let id = randomHex(16);
  while (id === INVALID_SPAN_ID) id = randomHex(16);
  return id;
}
