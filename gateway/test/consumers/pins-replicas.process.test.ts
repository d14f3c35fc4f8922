/**
 * Two gateway apps on one PostgreSQL, as two replicas of a fleet (docs/consumers.md#pins): a pin moved on one is
 * served by the other within 5 s, with no restart and no request to the store per request; with the database
 * stopped, both keep serving the pins they know and a move answers 503.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsumerStore } from '../../src/consumers/store.js';
import { openStores } from '../database/open-stores.js';
import { startTestPostgres, type TestPostgres } from '../../../platform/test/support/postgres.js';
import { buildTestGateway, type TestGateway } from '../support/helpers.js';
import { startStubBackend, type StubBackend } from '../support/stub-backend.js';
import type { MemoryConsumerStore } from '../support/memory-store.js';
import { eventually } from '../../../platform/test/support/eventually.mjs';

/** A replica's own pool on the shared database, typed as the test gateway takes a store (no outage switch here). */
const replicaStore = (store: ConsumerStore): MemoryConsumerStore => ({ ...store, down: false, writes: [] });

let postgres: TestPostgres;
let stub: StubBackend;
let a: TestGateway;
let b: TestGateway;

beforeAll(async () => {
  postgres = await startTestPostgres();
  const database = { url: await postgres.createDatabase(), poolMax: 2, migrationTimeoutMs: 60_000 };
  const location = { database, dataDir: '' };
  stub = await startStubBackend();
  const logger = pino({ level: 'silent' });
  // One after the other: the second finds the schema migrated.
  a = await buildTestGateway(stub.url, { consumerStore: replicaStore((await openStores(location, logger)).store) });
  b = await buildTestGateway(stub.url, { consumerStore: replicaStore((await openStores(location, logger)).store) });
}, 120_000);
afterAll(async () => {
  await postgres?.start();
  await Promise.all([a?.app.close(), b?.app.close()]);
  await stub?.close();
  await postgres?.close();
});

/** The version replica `gateway` serves the key's requests naming none; undefined while it refuses the key. */
async function servedBy(gateway: TestGateway, key: string): Promise<string | undefined> {
  const res = await gateway.app.inject({ url: '/orders/ord-1001', headers: { 'api-key': key } });
  return res.statusCode === 200 ? (res.headers['api-version'] as string) : undefined;
}

/** A request with the consumer's key to one replica's API port. */
const withKey = (gateway: TestGateway, method: 'PUT' | 'POST', url: string, key: string, payload?: string) =>
  gateway.app.inject({ method, url, payload, headers: { 'api-key': key } });

/** Registers a consumer pinned to `version` on a replica's admin port and issues it a key. */
async function register(gateway: TestGateway, name: string, version: number): Promise<string> {
  const admin = await gateway.admin();
  const created = await admin.inject({ method: 'POST', url: '/consumers', payload: { name, version } });
  expect(created.statusCode).toBe(201);
  const { id } = created.json<{ id: string }>();
  return (await admin.inject({ method: 'POST', url: `/consumers/${id}/keys` })).json<{ key: string }>().key;
}

/** A replica serves a change made on the other within this long (docs/consumers.md#pins). */
const FLEET_MS = { timeoutMs: 5_000 };

describe('pins on two replicas of one PostgreSQL', () => {
  it('serve a pin moved on one replica from the other within 5 s, and its rollback too', async () => {
    const key = await register(a, 'Fleet Mover', 1);
    await eventually('the key on replica b', async () => (await servedBy(b, key)) === '1', FLEET_MS);

    const moved = await withKey(a, 'PUT', '/consumer/version', key, '{"version":2}');
    expect(moved.statusCode).toBe(200);
    expect(await servedBy(a, key)).toBe('2');
    await eventually('the move on replica b', async () => (await servedBy(b, key)) === '2', FLEET_MS);

    const rolled = await withKey(b, 'POST', '/consumer/version/rollback', key);
    expect(rolled.json()).toMatchObject({ pinned_version: 1, previous_version: null });
    expect(await servedBy(b, key)).toBe('1');
    await eventually('the rollback on replica a', async () => (await servedBy(a, key)) === '1', FLEET_MS);

    const adminB = await b.admin();
    const payload = '{"version":2}';
    const movedByTeam = await adminB.inject({ method: 'PUT', url: '/consumers/fleet-mover/version', payload });
    expect(movedByTeam.statusCode).toBe(200);
    await eventually("the platform team's move on replica a", async () => (await servedBy(a, key)) === '2', FLEET_MS);
  });

  it('keep serving the pins they know with the database stopped; a move answers 503 storage unavailable', async () => {
    const key = await register(a, 'Fleet Steady', 2);
    await eventually('the key on replica b', async () => (await servedBy(b, key)) === '2', FLEET_MS);
    await postgres.stop();
    try {
      expect(await servedBy(a, key)).toBe('2');
      expect(await servedBy(b, key)).toBe('2');
      const refused = await withKey(b, 'PUT', '/consumer/version', key, '{"version":1}');
      expect(refused.statusCode).toBe(503);
      expect(refused.json()).toEqual({ error: 'storage unavailable', code: 503 });
    } finally {
      await postgres.start();
    }
  });
});
