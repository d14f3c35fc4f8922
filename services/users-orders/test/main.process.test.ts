import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../platform/test/support/eventually.mjs';
import { Received, open } from '../../../platform/test/support/raw-http.js';
import type { ServiceProcess } from '../../../platform/test/support/service-process.js';
import { builtMain, startBackend } from './process.js';

// The built process (npm run build first): real sockets for timeouts, keep-alive and shutdown, which only exist
// there, and the one line it stops with on a bad configuration.

const MiB = 1_048_576;
const userBody = '{"name":"Ada","email":"ada@example.com"}';

function post(body: string | Buffer, extraHeaders = ''): Buffer {
  const head =
    `POST /api/users HTTP/1.1\r\nHost: test\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` + `${extraHeaders}\r\n`;
  return Buffer.concat([Buffer.from(head), Buffer.from(body)]);
}

describe.concurrent('the running backend', () => {
  let backend: ServiceProcess;
  beforeAll(async () => {
    backend = await startBackend();
  });
  afterAll(async () => {
    backend.child.kill('SIGTERM');
    await backend.exited;
  });

  it(
    'closes a request whose headers never finish at the 5 s read timeout, answering 408 JSON if ' + 'anything',
    async () => {
      const socket = await open(backend.apiUrl);
      const reader = new Received(socket);
      const started = Date.now();
      socket.write('GET /api/users HTTP/1.1\r\nHost: test\r\n');
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      await closed;
      const elapsed = Date.now() - started;
      // The read timeout is checked every 0.5 s: 5.0-5.5 s on a quiet machine. Under 10 s leaves a loaded one
      // room; without the read timeout nothing would close this connection at all.
      expect(elapsed).toBeGreaterThanOrEqual(4_900);
      expect(elapsed).toBeLessThan(10_000);
      const answer = await reader.next(0).catch(() => undefined);
      if (answer !== undefined) {
        expect(answer.status).toBe(408);
        expect(answer.headers['content-type']).toBe('application/json');
        expect(JSON.parse(answer.body)).toEqual({ error: 'request timeout', code: 408 });
      }
    },
  );

  it('serves a second request on a keep-alive connection idle for 10 s', async () => {
    const socket = await open(backend.apiUrl);
    const reader = new Received(socket);
    socket.write('GET /api/users/page HTTP/1.1\r\nHost: test\r\n\r\n');
    expect((await reader.next()).status).toBe(200);
    await sleep(10_000);
    socket.write('GET /api/users/page?limit=1 HTTP/1.1\r\nHost: test\r\n\r\n');
    const second = await reader.next();
    expect(second.status).toBe(200);
    expect(JSON.parse(second.body)).toHaveProperty('has_more');
    socket.destroy();
  });

  it('answers a 2 MiB upload with the 400 JSON, not a reset, and keeps the connection usable', async () => {
    const socket = await open(backend.apiUrl);
    const reader = new Received(socket);
    socket.write(post(Buffer.alloc(2 * MiB, 0x20)));
    const res = await reader.next();
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(res.body)).toEqual({ error: 'invalid JSON', code: 400, details: 'body exceeds 1048576 bytes' });
    socket.write(post(userBody));
    expect((await reader.next()).status).toBe(201);
    socket.destroy();
  });

  it.each([
    ['no Content-Type', ''],
    ['a malformed Content-Type', 'Content-Type: foo\r\n'],
    ['a form Content-Type', 'Content-Type: application/x-www-form-urlencoded\r\n'],
  ])('decodes a body sent with %s as JSON (201, never 415)', async (_what, header) => {
    const socket = await open(backend.apiUrl);
    const reader = new Received(socket);
    socket.write(post(userBody, header));
    const res = await reader.next();
    expect(res.status).toBe(201);
    expect(res.headers.location).toMatch(/^\/api\/users\/user-\d+$/);
    socket.destroy();
  });

  it('honours Expect: 100-continue', async () => {
    const socket = await open(backend.apiUrl);
    const reader = new Received(socket);
    socket.write(
      `POST /api/users HTTP/1.1\r\nHost: test\r\nExpect: 100-continue\r\nContent-Length: ${userBody.length}\r\n\r\n`,
    );
    expect((await reader.next()).status).toBe(100);
    socket.write(userBody);
    expect((await reader.next()).status).toBe(201);
    socket.destroy();
  });
});

describe('shutdown on SIGTERM', () => {
  it('finishes an upload in progress (201), refuses new connections and exits 0 within 10 s', async () => {
    const backend = await startBackend();
    const socket = await open(backend.apiUrl);
    const reader = new Received(socket);
    const request = post(userBody);
    const split = request.length - 10;
    socket.write(request.subarray(0, split));
    await sleep(300);

    const signalled = Date.now();
    backend.child.kill('SIGTERM');
    const refused = () =>
      open(backend.apiUrl).then(
        (probe) => {
          probe.destroy();
          return false;
        },
        (err: NodeJS.ErrnoException) => err.code === 'ECONNREFUSED',
      );
    await eventually('new connections refused', refused, { timeoutMs: 2_000, intervalMs: 50 });

    socket.write(request.subarray(split));
    const res = await reader.next();
    expect(res.status).toBe(201);
    expect(JSON.parse(res.body)).toMatchObject({ id: 'user-1', name: 'Ada', email: 'ada@example.com' });

    const code = await backend.exited;
    expect(code).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(10_000);
    socket.destroy();
  });
});

describe('the built process with a bad configuration', () => {
  const dupes = join(mkdtempSync(join(tmpdir(), 'backend-config-')), 'dupes.json');
  writeFileSync(
    dupes,
    JSON.stringify([1, 2].map((n) => ({ id: 'o', customer_id: `user-${n}`, total_cents: n, currency: 'EUR' }))),
  );

  it.each([
    [{ BACKEND_PORT: 'abc' }, 'invalid configuration: BACKEND_PORT: must be a port number (0-65535) (got "abc")'],
    [
      { SHUTDOWN_DELAY_MS: '30001' },
      'invalid configuration: SHUTDOWN_DELAY_MS: must be at most 30000 ms (got "30001")',
    ],
    [
      { ORDERS_FILE: 'no/such/orders.json' },
      'invalid configuration: ORDERS_FILE: cannot read no/such/orders.json (ENOENT)',
    ],
    [{ SEED_DIR: 'no/such/seed' }, 'invalid configuration: ORDERS_FILE: cannot read no/such/seed/orders.json (ENOENT)'],
    [{ ORDERS_FILE: dupes }, `invalid configuration: ORDERS_FILE: ${dupes} is invalid at 1.id: duplicate id "o"`],
    [
      { DATABASE_URL: 'mysql://app:s3cret@db/users' },
      'invalid configuration: DATABASE_URL: must start with postgres:// or postgresql:// (got ' +
        '"mysql://app:***@db/users")',
    ],
    [
      { DATABASE_POOL_MAX: '0' },
      'invalid configuration: DATABASE_POOL_MAX: must be an integer from 1 to 100 (got "0")',
    ],
    [
      { DATABASE_MIGRATION_TIMEOUT_MS: '30s' },
      'invalid configuration: DATABASE_MIGRATION_TIMEOUT_MS: must be a whole number of milliseconds from 1000 to ' +
        '86400000 (got "30s")',
    ],
    [
      { ADMIN_TOKEN: 'short-token' },
      'invalid configuration: ADMIN_TOKEN: must be at least 16 characters (got 11; value not shown)',
    ],
  ])('exits 1 with one stderr line naming the variable (%j)', (env, line) => {
    expect(existsSync(builtMain), `${builtMain} missing: run npm run build`).toBe(true);
    const result = spawnSync(process.execPath, [builtMain], {
      env: { ...process.env, BACKEND_PORT: '0', BACKEND_ADMIN_PORT: '0', LOG_LEVEL: 'silent', ...env },
      encoding: 'utf8',
      timeout: 10_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(`${line}\n`);
  });
});
