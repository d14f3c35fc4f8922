/**
 * The ledger's refusals (closed to new consumers) on every consumer store the tests and the gateway use: the
 * in-memory one of the app.inject tests, PostgreSQL (DATABASE_URL) and the embedded one (GATEWAY_DATA_DIR), the
 * last two through the same SQL and migrations. A refusal is counted as refused, apart from the uses: the refused
 * consumer never becomes a user of the version (the operators' list, the notices' recipients). The request field
 * paths an upgrade preview reads, bounded per consumer, version and operation by the store's one statement.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLedger } from '../../src/consumers/ledger.js';
import { MAX_FIELDS_PER_OPERATION, type ConsumerStore } from '../../src/consumers/store.js';
import { openStores } from '../database/open-stores.js';
import { eventually } from '../../../platform/test/support/eventually.mjs';
import { startTestPostgres } from '../../../platform/test/support/postgres.js';
import { at } from '../support/helpers.js';
import { createMemoryConsumerStore } from '../support/memory-store.js';

/** The embedded store's first start creates its database: tens of seconds of CPU on a loaded machine. */
const EMBEDDED_START_MS = 180_000;
const NOON = at('2026-11-22T12:00:00Z');

interface StoreKind {
  name: string;
  open(): Promise<{ store: ConsumerStore; close: () => Promise<void> }>;
}

const silent = pino({ level: 'silent' });

const kinds: StoreKind[] = [
  {
    name: 'the in-memory store',
    async open() {
      return { store: createMemoryConsumerStore(), close: async () => undefined };
    },
  },
  {
    name: 'PostgreSQL',
    async open() {
      const postgres = await startTestPostgres();
      const url = await postgres.createDatabase();
      const { store } = await openStores(
        { database: { url, poolMax: 2, migrationTimeoutMs: 60_000 }, dataDir: '' },
        silent,
      );
      return {
        store,
        close: async () => {
          await store.close();
          await postgres.close();
        },
      };
    },
  },
  {
    name: 'the embedded store',
    async open() {
      const parent = await mkdtemp(join(tmpdir(), 'gateway-refusals-'));
      const { store } = await openStores({ database: undefined, dataDir: join(parent, 'gateway') }, silent);
      return {
        store,
        close: async () => {
          await store.close();
          await rm(parent, { recursive: true, force: true });
        },
      };
    },
  },
];

describe.each(kinds)('refusals in the ledger, on $name', (kind) => {
  let store: ConsumerStore;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ store, close } = await kind.open());
    for (const id of ['early', 'newcomer', 'other']) {
      const consumer = { id, name: id, contact_email: null, webhook_url: null, webhook_secret: null };
      await store.createConsumer({ ...consumer, pinned_version: null }, at('2026-09-01T00:00:00Z'));
    }
  }, EMBEDDED_START_MS);
  afterAll(async () => {
    await close?.();
  });

  it('counts a refused request as refused, never as a use: the consumer stays new and no user of it', async () => {
    const ledger = createLedger({ store, logger: silent, countDropped: () => undefined, flushIntervalMs: 60_000 });
    ledger.record('early', 1, 'GET /v1/orders/{id}', NOON);
    ledger.refuse('newcomer', 1, 'GET /v1/orders/{id}', NOON);
    ledger.refuse('newcomer', 1, 'GET /orders/{id} header', NOON + 1_000);
    ledger.refuse('newcomer', 1, 'GET /v1/orders/{id}', at('2026-11-23T08:00:00Z'));
    ledger.record('newcomer', 2, 'GET /v2/orders/{id}', NOON);
    ledger.refuse('other', 1, 'GET /v1/orders/{id}', NOON);
    await ledger.close();

    expect(await store.refusalsOf('newcomer')).toEqual([{ version: 1, count: 3, last_at: '2026-11-23T08:00:00.000Z' }]);
    expect(await store.refusalsOf('early')).toEqual([]);
    expect(
      (await store.refusedOf(1)).map(({ consumer, refused }) => [
        consumer.id,
        consumer.name,
        refused.count,
        refused.last_at,
      ]),
    ).toEqual([
      ['newcomer', 'newcomer', 3, '2026-11-23T08:00:00.000Z'],
      ['other', 'other', 1, '2026-11-22T12:00:00.000Z'],
    ]);
    expect(await store.refusedOf(2)).toEqual([]);
    // Uses: only the requests served. The notices' recipients and the operators' list read these.
    expect((await store.consumersOf(1, 0)).map(({ consumer }) => consumer.id)).toEqual(['early']);
    expect((await store.usageOf('newcomer')).map(({ version, operation }) => [version, operation])).toEqual([
      [2, 'GET /v2/orders/{id}'],
    ]);
    expect(await store.usageOf('other')).toEqual([]);
    // First uses decide closed_to_new: a refusal writes none. A first use is written without waiting for it.
    const firstUses = async () =>
      (await store.changesSince(0)).firstUses.map(({ consumerId, version }) => `${consumerId} v${version}`).sort();
    await eventually('the two first uses written', async () => (await firstUses()).length === 2, { timeoutMs: 5_000 });
    expect(await firstUses()).toEqual(['early v1', 'newcomer v2']);
  });

  it('keeps the form a bare-path call named its version in, as the reports read it', async () => {
    await store.addUsage([
      {
        consumerId: 'early',
        version: 1,
        operation: 'GET /orders/{id} media_type',
        day: '2026-11-22',
        requests: 4,
        firstSeenMs: NOON,
        lastSeenMs: NOON,
      },
    ]);
    expect((await store.usageOf('early')).map(({ operation, requests }) => [operation, requests])).toEqual([
      ['GET /orders/{id} media_type', 4],
      ['GET /v1/orders/{id}', 1],
    ]);
  });
});

describe.each(kinds)('request field paths, on $name', (kind) => {
  let store: ConsumerStore;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ store, close } = await kind.open());
    for (const id of ['acme', 'beta']) {
      const consumer = { id, name: id, contact_email: null, webhook_url: null, webhook_secret: null };
      await store.createConsumer({ ...consumer, pinned_version: null }, at('2026-09-01T00:00:00Z'));
    }
  }, EMBEDDED_START_MS);
  afterAll(async () => {
    await close?.();
  });

  const row = (consumerId: string, field: string, requests: number, atMs: number) => ({
    consumerId,
    version: 1,
    operation: 'POST /v1/orders',
    field,
    requests,
    firstSeenMs: atMs,
    lastSeenMs: atMs,
  });

  it(`adds counts to the fields stored, and a new field only while its operation has fewer than ${MAX_FIELDS_PER_OPERATION}`, async () => {
    await store.addRequestFields([row('acme', 'user_id', 2, NOON - 60_000), row('beta', 'lines[].sku', 1, NOON)]);
    await store.addRequestFields([row('acme', 'user_id', 3, NOON)]);
    // One replica's flush fills the set up to the bound; a field past it is left out, the stored ones still count.
    const many = Array.from({ length: MAX_FIELDS_PER_OPERATION + 5 }, (_, i) =>
      row('acme', `f${String(i).padStart(3, '0')}`, 1, NOON),
    );
    await store.addRequestFields([...many, row('acme', 'user_id', 1, NOON)]);
    const acme = await store.requestFieldsOf(1, NOON - 3_600_000, 'acme');
    expect(acme).toHaveLength(MAX_FIELDS_PER_OPERATION);
    expect(acme.find(({ field }) => field === 'user_id')).toEqual({
      consumer_id: 'acme',
      version: 1,
      operation: 'POST /v1/orders',
      field: 'user_id',
      requests: 6,
      last_seen: '2026-11-22T12:00:00.000Z',
    });
    expect((await store.requestFieldsOf(1, NOON - 3_600_000)).filter((r) => r.consumer_id === 'beta')).toEqual([
      {
        consumer_id: 'beta',
        version: 1,
        operation: 'POST /v1/orders',
        field: 'lines[].sku',
        requests: 1,
        last_seen: '2026-11-22T12:00:00.000Z',
      },
    ]);
    // Seen before `since`: not read.
    expect(await store.requestFieldsOf(1, NOON + 1, 'beta')).toEqual([]);
    expect(await store.requestFieldsOf(2, 0)).toEqual([]);
  });
});
