/**
 * JSON text written as UTF-8 bytes into one growing buffer, without building strings: ASCII the caller knows needs
 * no escaping (field names, hex ids), strings escaped as JSON.stringify escapes them, decimal integers.
 */
export class JsonWriter {
  buffer: Buffer;
  pos = 0;

  constructor(buffer: Buffer) {
    this.buffer = buffer;
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

  /** ASCII text that needs no escaping. */
  ascii(text: string): void {
    this.ensure(text.length);
    this.pos += this.buffer.write(text, this.pos, 'latin1');
  }

  /** A JSON string: quoted, escaped as JSON.stringify escapes, UTF-8. */
  string(text: string): void {
    const length = text.length;
    this.ensure(2 + length);
    const buffer = this.buffer;
    let at = this.pos;
    buffer[at++] = 0x22;
    for (let i = 0; i < length; i++) {
      const code = text.charCodeAt(i);
      // Printable ASCII but the quote and the backslash: as it is.
      if (code >= 0x20 && code < 0x80 && code !== 0x22 && code !== 0x5c) {
        buffer[at++] = code;
        continue;
      }
      // Anything else (escapes, non-ASCII, lone surrogates): JSON.stringify's own text, which is rarely needed.
      const json = JSON.stringify(text);
      this.ensure(3 * json.length);
      this.pos += this.buffer.write(json, this.pos, 'utf8');
      return;
    }
    buffer[at++] = 0x22;
    this.pos = at;
  }

  /** A non-negative integer below 2⁵³ in decimal digits, at least `width` of them (zeros in front). */
  digits(value: number, width = 1): void {
    let count = 1;
    for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) count++;
    if (count < width) count = width;
    this.ensure(count);
    const buffer = this.buffer;
    let rest = value;
    for (let at = this.pos + count - 1; at >= this.pos; at--) {
      buffer[at] = 0x30 + (rest % 10);
      rest = Math.floor(rest / 10);
    }
    this.pos += count;
  }

  /** Bytes written before (a set of attributes, written once). */
  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buffer.set(bytes, this.pos);
    this.pos += bytes.length;
  }
}
