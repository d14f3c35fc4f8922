// A consumer's own pin changes are limited per consumer (PIN_CHANGES_PER_MINUTE): one key holder cannot keep the
// store busy for everyone.
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/consumers/keys.js';
import { buildTestGateway, type TestGateway } from '../support/helpers.js';
import { startStubBackend, type StubBackend } from '../support/stub-backend.js';
import { consumerWithKey, createMemoryConsumerStore } from '../support/memory-store.js';

let stub: StubBackend;
beforeAll(async () => {
  stub = await startStubBackend();
});
afterAll(async () => {
  await stub.close();
});

let gateway: TestGateway | undefined;
afterEach(async () => {
  await gateway?.app.close();
  gateway = undefined;
});

const LIMIT = 3;

interface Started {
  app: FastifyInstance;
  admin: FastifyInstance;
  /** Two keys of the consumer `flipper`, and one of `other`. */
  flipper: string;
  flipperAgain: string;
  other: string;
}

async function start(): Promise<Started> {
  const store = createMemoryConsumerStore();
  const { key: flipper } = await consumerWithKey(store, 'flipper', { pinned_version: 1 });
  const { key: other } = await consumerWithKey(store, 'other', { pinned_version: 1 });
  const second = generateKey();
  await store.addKey('flipper', { keyId: second.keyId, digest: second.digest }, Date.now());
  gateway = await buildTestGateway(stub.url, { consumerStore: store, pinChangesPerMinute: LIMIT });
  return { app: gateway.app, admin: await gateway.admin(), flipper, flipperAgain: second.key, other };
}

const move = (app: FastifyInstance, key: string, version: number) =>
  app.inject({ method: 'PUT', url: '/consumer/version', headers: { 'api-key': key }, payload: { version } });
const rollBack = (app: FastifyInstance, key: string) =>
  app.inject({ method: 'POST', url: '/consumer/version/rollback', headers: { 'api-key': key } });

describe('pin changes per consumer', () => {
  it('answers the change past PIN_CHANGES_PER_MINUTE 429 with Retry-After; moves, rollbacks and keys count together', async () => {
    const { app, flipper, flipperAgain } = await start();
    expect((await move(app, flipper, 2)).statusCode).toBe(200);
    expect((await rollBack(app, flipper)).statusCode).toBe(200);
    expect((await move(app, flipper, 2)).statusCode).toBe(200);
    for (const refused of [await move(app, flipperAgain, 1), await rollBack(app, flipper)]) {
      expect(refused.statusCode).toBe(429);
      const retryAfter = Number(refused.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(refused.headers['cache-control']).toBe('no-store');
      expect(refused.json()).toEqual({
        error: 'too many requests',
        code: 429,
        details: `at most 3 pin changes a minute per consumer; try again in ${retryAfter} s`,
      });
      expect(refused.headers).not.toHaveProperty('x-ratelimit-limit');
    }
    // Nothing moved: the pin is where the third change left it.
    const view = await app.inject({ url: '/consumer', headers: { 'api-key': flipper } });
    expect(view.statusCode).toBe(200);
    expect(view.json()).toMatchObject({ pinned_version: 2, previous_version: 1 });
  });

  it("leaves other consumers' changes, reads and requests, the admin port and keyless requests alone", async () => {
    const { app, admin, flipper, other } = await start();
    for (let i = 0; i < LIMIT; i++) await move(app, flipper, 2);
    expect((await move(app, flipper, 2)).statusCode).toBe(429);
    expect((await move(app, other, 2)).statusCode).toBe(200);
    expect((await app.inject({ url: '/consumer', headers: { 'api-key': flipper } })).statusCode).toBe(200);
    expect((await app.inject({ url: '/orders/ord-1', headers: { 'api-key': flipper } })).statusCode).toBe(200);
    for (let i = 0; i < LIMIT + 2; i++) {
      const moved = await admin.inject({ method: 'PUT', url: '/consumers/flipper/version', payload: { version: 1 } });
      expect(moved.statusCode).toBe(200);
    }
    const keyless = await app.inject({ method: 'PUT', url: '/consumer/version', payload: { version: 2 } });
    expect(keyless.statusCode).toBe(401);
    const invalid = await move(app, 'vr_not-a-key', 2);
    expect(invalid.statusCode).toBe(401);
    expect(invalid.json()).toEqual({ error: 'invalid API key', code: 401 });
  });
});
