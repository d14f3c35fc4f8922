/**
 * The tests' PostgreSQL start-up (test/support/postgres.ts): a server that cannot start fails its caller at
 * once with the server's own reason, instead of leaving a beforeAll hook to time out after 60 s.
 */
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startTestPostgres } from './postgres.js';

describe('startTestPostgres', () => {
  let occupied: Server;
  beforeAll(async () => {
    occupied = createServer();
    await new Promise<void>((resolve) => occupied.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => occupied.close(() => resolve())));

  it('rejects at once with the server log when the server cannot start (its port is taken)', async () => {
    const { port } = occupied.address() as AddressInfo;
    const started = Date.now();
    const error = await startTestPostgres({ port }).then(
      () => new Error('started on a taken port'),
      (err: unknown) => err as Error,
    );
    expect(error.message).toMatch(/^PostgreSQL did not start: postgres exited \(exit code 1\)\n/);
    expect(error.message).toContain(`could not bind IPv4 address "127.0.0.1": Address already in use`);
    // initdb and the failed start take a few seconds on a loaded machine; the hook's timeout is 60 s.
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('starts a server that stores UTF-8 text and stops and starts again on the same data', async () => {
    const postgres = await startTestPostgres();
    try {
      const url = await postgres.createDatabase();
      const query = async (text: string): Promise<unknown[]> => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          return (await client.query<Record<string, unknown>>(text)).rows;
        } finally {
          await client.end();
        }
      };
      await query(`CREATE TABLE t AS SELECT 'Zoë 日本' AS name`);
      await postgres.stop();
      await postgres.start();
      expect(await query('SELECT name FROM t')).toEqual([{ name: 'Zoë 日本' }]);
    } finally {
      await postgres.close();
    }
  });
});
