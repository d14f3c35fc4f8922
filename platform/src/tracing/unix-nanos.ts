/**
 * A span's time as OTLP carries it, nanoseconds since the Unix epoch (a 64-bit integer), from a Date.now() reading
 * and a monotonic offset in milliseconds. The product does not fit a double's 53 bits, so it is computed as seconds
 * and nanoseconds, then written as the two 32-bit halves of a fixed64 (otlp-protobuf.ts) or as decimal digits
 * (otlp-json.ts).
 */
export interface UnixNanos {
  seconds: number;
  /** 0 to 999,999,999. */
  nanos: number;
}

const NANOS_PER_SECOND = 1e9;
const TWO_16 = 0x1_0000;
const TWO_32 = 0x1_0000_0000;

/** One reused result: the encoders read it straight after each call. */
const scratch: UnixNanos = { seconds: 0, nanos: 0 };

/** epochMs (an integer, as Date.now() gives it) plus offsetMs (≥ 0, the monotonic clock's reading since). */
export function unixNanos(epochMs: number, offsetMs: number): UnixNanos {
  const seconds = Math.floor(epochMs / 1000);
  const nanos = (epochMs - seconds * 1000) * 1e6 + Math.round(offsetMs * 1e6);
  const carry = Math.floor(nanos / NANOS_PER_SECOND);
  scratch.seconds = seconds + carry;
  scratch.nanos = nanos - carry * NANOS_PER_SECOND;
  return scratch;
}

/** Writes seconds × 10⁹ + nanos at `at` as a little-endian 64-bit integer (protobuf's fixed64), exactly: every
 * intermediate below stays under 2⁵³. */
export function writeNanosLE(buffer: Buffer, at: number, { seconds, nanos }: UnixNanos): void {
  const upper = Math.floor(seconds / TWO_16) * NANOS_PER_SECOND;
  const low = (upper % TWO_16) * TWO_16 + (seconds % TWO_16) * NANOS_PER_SECOND + nanos;
  const low32 = low % TWO_32;
  const high32 = Math.floor(upper / TWO_16) + Math.floor(low / TWO_32);
  buffer[at] = low32 & 0xff;
  buffer[at + 1] = (low32 >>> 8) & 0xff;
  buffer[at + 2] = (low32 >>> 16) & 0xff;
  buffer[at + 3] = low32 >>> 24;
  buffer[at + 4] = high32 & 0xff;
  buffer[at + 5] = (high32 >>> 8) & 0xff;
  buffer[at + 6] = (high32 >>> 16) & 0xff;
  buffer[at + 7] = high32 >>> 24;
}
