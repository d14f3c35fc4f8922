import { Agent, request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { buildFoundationApp } from '../helpers.js';

describe('draining', () => {
  it(
    'closes the keep-alive connection of a request in flight when shutdown begins, so close() does not wait for ' +
      'the client',
    async () => {
      const app = await buildFoundationApp();
      let arrived: () => void = () => undefined;
      const inFlight = new Promise<void>((resolve) => (arrived = resolve));
      app.get('/slow', async () => {
        arrived();
        await new Promise((resolve) => setTimeout(resolve, 200));
        return { ok: true };
      });
      await app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = app.server.address() as { port: number };
      const agent = new Agent({ keepAlive: true });
      const response = new Promise<{ status?: number; connection?: string }>((resolve, reject) => {
        request({ host: '127.0.0.1', port, path: '/slow', agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
        })
          .on('error', reject)
          .end();
      });
      await inFlight;
      const closed = app.close().then(() => 'closed');
      try {
        expect(await response).toEqual({ status: 200, connection: 'close' });
        const stillOpen = new Promise((resolve) => setTimeout(() => resolve('still waiting for the client'), 2_000));
        expect(await Promise.race([closed, stillOpen])).toBe('closed');
      } finally {
        agent.destroy();
      }
    },
  );

  it(
    'serves on while leaving (the shutdown delay), each answer with Connection: close; only draining ' + 'refuses',
    async () => {
      const app = await buildFoundationApp();
      await app.ready();
      expect((await app.inject({ url: '/things/1' })).headers.connection).not.toBe('close');
      app.lifecycle.leaving = true;
      const leaving = await app.inject({ url: '/things/1' });
      expect([leaving.statusCode, leaving.headers.connection]).toEqual([200, 'close']);
      expect(app.lifecycle.draining).toBe(false);
    },
  );
});
