import { Writable } from 'node:stream';

/** Where a logger under test writes, and what it wrote. */
export interface CapturedLog {
  /** The logger's destination (pino's second argument, or the platform logger's `destination`). */
  destination: Writable;
  /** Each JSON line written, parsed, in the order written; filled as the logger writes. */
  lines: Record<string, unknown>[];
  /** The same lines as the logger wrote them, for what only the text shows (a redacted value's spelling). */
  raw: string[];
}

/** A destination that keeps every JSON line a logger writes to it, one write carrying one line or a batch of them. */
export function capturedLog(): CapturedLog {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) {
        if (line === '') continue;
        raw.push(line);
        lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  return { destination, lines, raw };
}
