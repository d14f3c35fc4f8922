import { connect, type Socket } from 'node:net';
import { entries } from '../../../scripts/paths.mjs';
import { startService, type ServiceProcess } from '../../../test/e2e/process-stack.js';

export const builtMain = entries.backend;

export interface BackendProcess extends ServiceProcess {
  port: number;
}

/** The built backend on ephemeral loopback ports, started by the same harness as the end-to-end suite. */
export async function startBackend(): Promise<BackendProcess> {
  const backend = await startService('backend', { BACKEND_HOST: '127.0.0.1', BACKEND_PORT: '0', BACKEND_ADMIN_PORT: '0' });
  return { ...backend, port: Number(new URL(backend.apiUrl).port) };
}

export function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => resolve(socket));
    socket.once('error', reject);
  });
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Reads successive HTTP/1.1 responses (Content-Length framed, interim 1xx included) from one socket. */
export class ResponseReader {
  private buffer = Buffer.alloc(0);
  private waiting: (() => void) | undefined;
  closed = false;

  constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.waiting?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.waiting?.();
    });
    socket.on('error', () => undefined);
  }

  async next(timeoutMs = 5_000): Promise<RawResponse> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const parsed = this.take();
      if (parsed !== undefined) return parsed;
      if (this.closed) throw new Error('connection closed before a complete response');
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error('no complete response in time');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.waiting = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  private take(): RawResponse | undefined {
    const end = this.buffer.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const [statusLine = '', ...lines] = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
    const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
    const length = Number(headers['content-length'] ?? 0);
    if (this.buffer.length < end + 4 + length) return undefined;
    const body = this.buffer.subarray(end + 4, end + 4 + length).toString('utf8');
    this.buffer = this.buffer.subarray(end + 4 + length);
    return { status: Number(statusLine.split(' ')[1]), headers, body };
  }
}

