/**
 * The protobuf wire format, as much of it as OTLP's trace messages use: varints, fixed32/64, doubles, UTF-8
 * strings, bytes and nested messages, written into one growing buffer. A nested message's length goes before it
 * but is known only after it: one byte is reserved for it, and the message is moved along when its length takes
 * more (messages under 128 bytes, most attributes, never move).
 */
export class ProtobufWriter {
  buffer: Buffer;
  pos: number;

  constructor(buffer: Buffer, start = 0) {
    this.buffer = buffer;
    this.pos = start;
  }

  /** Makes room for `bytes` more. */
  ensure(bytes: number): void {
    if (this.pos + bytes <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.pos + bytes) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buffer.copy(grown, 0, 0, this.pos);
    this.buffer = grown;
  }

  /** A byte below 128: a field's tag (field number ≤ 15) or a small varint. */
  byte(value: number): void {
    this.ensure(1);
    this.buffer[this.pos++] = value;
  }

  /** A field's tag. */
  tag(field: number, wireType: number): void {
    this.varint((field << 3) | wireType);
  }

  /** An unsigned varint up to 2³²−1, or any integer as int64 (a negative one in two's complement, ten bytes). */
  varint(value: number): void {
    this.ensure(10);
    const buffer = this.buffer;
    if (value >= 0 && value <= 0xffff_ffff) {
      let v = value >>> 0;
      while (v > 0x7f) {
        buffer[this.pos++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      buffer[this.pos++] = v;
      return;
    }
    let low: number;
    let high: number;
    if (value >= 0) {
      low = value >>> 0;
      high = (value / 0x1_0000_0000) >>> 0;
    } else {
      const magnitude = -value;
      low = ~(magnitude >>> 0) >>> 0;
      high = ~((magnitude / 0x1_0000_0000) >>> 0) >>> 0;
      low = (low + 1) >>> 0;
      if (low === 0) high = (high + 1) >>> 0;
    }
    while (high > 0 || low > 0x7f) {
      buffer[this.pos++] = (low & 0x7f) | 0x80;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    buffer[this.pos++] = low;
  }

  fixed32(value: number): void {
    this.ensure(4);
    this.buffer.writeUInt32LE(value >>> 0, this.pos);
    this.pos += 4;
  }

  double(value: number): void {
    this.ensure(8);
    this.buffer.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  /** A length-delimited UTF-8 string. */
  string(text: string): void {
    const length = text.length;
    // Up to 42 UTF-16 units take at most 126 bytes: the length is one byte, written after the text.
    if (length < 43) {
      this.ensure(1 + 3 * length);
      const buffer = this.buffer;
      const at = this.pos + 1;
      let i = 0;
      for (; i < length; i++) {
        const code = text.charCodeAt(i);
        if (code > 0x7f) break;
        buffer[at + i] = code;
      }
      const bytes = i === length ? length : buffer.write(text, at, 'utf8');
      buffer[this.pos] = bytes;
      this.pos = at + bytes;
      return;
    }
    const bytes = Buffer.byteLength(text, 'utf8');
    this.varint(bytes);
    this.ensure(bytes);
    this.pos += this.buffer.write(text, this.pos, 'utf8');
  }

  /**
   * A length-delimited byte string given in lower-case hex (a trace or span id, ours or a traceparent's, which W3C
   * Trace Context writes in lower case). Decoded here: a native call per id costs more than the few bytes.
   */
  hexBytes(hex: string): void {
    const bytes = hex.length >>> 1;
    this.ensure(1 + bytes);
    const buffer = this.buffer;
    let at = this.pos;
    buffer[at++] = bytes;
    for (let i = 0; i < hex.length; i += 2) {
      buffer[at++] = ((NIBBLES[hex.charCodeAt(i)] as number) << 4) | (NIBBLES[hex.charCodeAt(i + 1)] as number);
    }
    this.pos = at;
  }

  /** Bytes encoded before (a set of attributes, written once and copied into every span that carries it). */
  raw(bytes: Uint8Array): void {
    const length = bytes.length;
    this.ensure(length);
    // Sets are a few dozen bytes: a loop costs less than a native copy.
    if (length < 128) {
      const buffer = this.buffer;
      const at = this.pos;
      for (let i = 0; i < length; i++) buffer[at + i] = bytes[i] as number;
    } else {
      this.buffer.set(bytes, this.pos);
    }
    this.pos += length;
  }

  /** Starts a nested message; returns the mark that finish() takes. */
  begin(): number {
    this.ensure(1);
    return this.pos++;
  }

  /** Writes the length of the message begun at `mark`, moving the message along when the length needs more bytes. */
  finish(mark: number): void {
    const length = this.pos - mark - 1;
    if (length < 0x80) {
      this.buffer[mark] = length;
      return;
    }
    const extra = varintSize(length) - 1;
    this.ensure(extra);
    const buffer = this.buffer;
    buffer.copyWithin(mark + 1 + extra, mark + 1, this.pos);
    this.pos += extra;
    putVarint(buffer, mark, length);
  }
}

/** Each hex digit's value, by character code. */
const NIBBLES = new Uint8Array(128);
for (let digit = 0; digit < 16; digit++) NIBBLES[digit.toString(16).charCodeAt(0)] = digit;

/** The bytes a varint of `value` (0 to 2³²−1) takes. */
export function varintSize(value: number): number {
  return value < 0x80 ? 1 : value < 0x4000 ? 2 : value < 0x20_0000 ? 3 : value < 0x1000_0000 ? 4 : 5;
}

/** Writes `value` (0 to 2³²−1) as a varint at `at` in a buffer with room for it; returns the position after it. */
export function putVarint(buffer: Buffer, at: number, value: number): number {
  let v = value;
  while (v > 0x7f) {
    buffer[at++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buffer[at] = v;
  return at + 1;
}
