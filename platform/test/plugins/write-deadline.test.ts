import { request, type ClientRequest } from 'node:http';
import { pino } from 'pino';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { capturedLog } from '../support/captured-log.js';
import { serverLimits } from '../../src/server-limits.js';
import { buildFoundationApp } from '../helpers.js';

describe('write deadline', () => {
  it('closes the connection of a response not finished within the write timeout', async () => {
    // Only the global timers are faked: Node's own server timeouts keep running on real time.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let client: ClientRequest | undefined;
    try {
      const { destination, lines } = capturedLog();
      const messages = () => lines.map((line) => line.msg);
      const app = await buildFoundationApp(pino({ level: 'warn' }, destination));
      // Runs before the app closes (finish hooks run last-registered first): a test that failed or timed
      // out must not leave close() waiting for the hanging request.
      onTestFinished(() => {
        client?.destroy();
      });
      let arrived: () => void = () => undefined;
      const inHandler = new Promise<void>((resolve) => (arrived = resolve));
      app.get('/hang', () => {
        arrived();
        return new Promise(() => undefined);
      });
      await app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = app.server.address() as { port: number };
      let outcome = 'pending';
      const hungUp = new Promise<void>((resolve) => {
        client = request({ host: '127.0.0.1', port, path: '/hang' }, () => (outcome = 'answered'));
        client
          .on('error', (err: NodeJS.ErrnoException) => {
            outcome = err.code ?? err.message;
            resolve();
          })
          .end();
      });
      await inHandler;
      vi.advanceTimersByTime(serverLimits.writeTimeoutMs - 1);
      await new Promise((resolve) => setImmediate(resolve));
      expect(outcome).toBe('pending');
      expect(messages()).toEqual([]);
      vi.advanceTimersByTime(1);
      await hungUp;
      expect(outcome).toBe('ECONNRESET');
      expect(messages()).toEqual(['write timeout exceeded, closing connection']);
    } finally {
      vi.useRealTimers();
    }
  });
});
