import { randomFillSync } from 'node:crypto';

/**
 * Trace and span ids (W3C Trace Context: 16 and 8 random bytes, lower-case hex), cut from a pool of random bytes
 * that one call of the system's random source refills: a request's three ids cost a slice each, not a call each.
 */
const POOL_BYTES = 4096;
const pool = Buffer.allocUnsafe(POOL_BYTES);
let used = POOL_BYTES;

const INVALID_TRACE_ID = '0'.repeat(32);
const INVALID_SPAN_ID = '0'.repeat(16);

function randomHex(bytes: number): string {
  if (used + bytes > POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  const start = used;
  used += bytes;
  return pool.toString('hex', start, used);
}

/** A new trace id; never all zeros, which W3C Trace Context reserves for "invalid". */
export function newTraceId(): string {
  let id = randomHex(16);
  while (id === INVALID_TRACE_ID) id = randomHex(16);
  return id;
}

/** A new span id; never all zeros. */
export function newSpanId(): string {
  let id = randomHex(8);
  while (id === INVALID_SPAN_ID) id = randomHex(8);
  return id;
}
