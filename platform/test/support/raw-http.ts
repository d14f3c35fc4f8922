import { connect, type Socket } from 'node:net';

/**
 * Requests written by hand on raw connections, for what an HTTP client would not send (stalled, split,
 * pipelined or malformed requests) and for what it would hide (connection closes, interim 1xx answers).
 */

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A TCP connection to the host and port of a service's HTTP URL. */
export function open(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Everything the server sends on one raw connection, and when it closed it (ms after `since`). */
export class Received {
  bytes = Buffer.alloc(0);
  closedAfterMs: number | undefined;
  private wake: (() => void) | undefined;
  private taken = 0;

  constructor(
    readonly socket: Socket,
    readonly since = performance.now(),
  ) {
    socket.on('data', (chunk: Buffer) => {
      this.bytes = Buffer.concat([this.bytes, chunk]);
      this.wake?.();
    });
    socket.on('error', () => undefined);
    socket.once('close', () => {
      this.closedAfterMs = performance.now() - this.since;
      this.wake?.();
    });
  }

  get responses(): RawResponse[] {
    return parseResponses(this.bytes);
  }

  /** Resolves once `done` holds (checked on every event), rejects after `limitMs`. */
  private async until(done: () => boolean, what: string, limitMs: number): Promise<void> {
    const deadline = performance.now() + limitMs;
    while (!done()) {
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`${what} within ${limitMs} ms (received ${this.bytes.length} bytes)`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** Waits for `count` complete responses (or the close, whichever comes first). */
  async responsesAtLeast(count: number, limitMs: number): Promise<RawResponse[]> {
    await this.until(
      () => this.responses.length >= count || this.closedAfterMs !== undefined,
      `no ${count} responses`,
      limitMs,
    );
    return this.responses;
  }

  /** The next response not taken yet, interim 1xx ones included; rejects when the connection closes first. */
  async next(limitMs = 5_000): Promise<RawResponse> {
    const response = (await this.responsesAtLeast(this.taken + 1, limitMs))[this.taken];
    if (response === undefined) throw new Error('connection closed before a complete response');
    this.taken++;
    return response;
  }

  /** Waits for the server to close the connection; destroys it and rejects after `limitMs`. */
  async closed(limitMs: number): Promise<number> {
    try {
      await this.until(() => this.closedAfterMs !== undefined, 'connection not closed', limitMs);
    } catch (err) {
      this.socket.destroy();
      throw err;
    }
    return this.closedAfterMs ?? 0;
  }
}

/**
 * Splits Content-Length framed HTTP/1.x responses (what both processes send for their own answers and
 * for JSON bodies; a 1xx has no body); returns every complete one, in order.
 */
function parseResponses(bytes: Buffer): RawResponse[] {
  const responses: RawResponse[] = [];
  let rest = bytes;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) return responses;
    const [statusLine = '', ...lines] = rest.subarray(0, end).toString('latin1').split('\r\n');
    const headers = Object.fromEntries(
      lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
    );
    const length = Number(headers['content-length'] ?? 0);
    if (rest.length < end + 4 + length) return responses;
    responses.push({
      status: Number(statusLine.split(' ')[1]),
      headers,
      body: rest.subarray(end + 4, end + 4 + length).toString('utf8'),
    });
    rest = rest.subarray(end + 4 + length);
  }
}
