/**
 * Each consumer on its own version (docs/consumers.md#pins): a request with a valid key that names no version
 * is served its consumer's pin; the consumer moves and rolls back its pin with its own key, the platform team
 * on the admin port. Every rule runs on the three stores a gateway may be given: the tests' memory store,
 * PostgreSQL (DATABASE_URL) and the embedded one (GATEWAY_DATA_DIR), through the same SQL.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadKeyCache } from '../../src/consumers/key-cache.js';
import type { ConsumerStore } from '../../src/consumers/store.js';
import { openStores } from '../database/open-stores.js';
import { startTestPostgres } from '../../../platform/test/support/postgres.js';
import {
  BROWNOUT_START,
  TODAY,
  V1_LIFECYCLE_LINKS,
  V1_SUNSET,
  at,
  buildTestGateway,
  designPolicyFile,
  lifecyclePolicyFile,
  type TestGateway,
} from '../support/helpers.js';
import { startStubBackend, type StubBackend } from '../support/stub-backend.js';
import { createMemoryConsumerStore, type MemoryConsumerStore } from '../support/memory-store.js';

/** The embedded store's first start creates its database: tens of seconds of CPU on a loaded machine. */
const EMBEDDED_START_MS = 180_000;
const HOUR = 3_600_000;
/** An ErrorResponse body. */
const iso = (epochMs: number): string => new Date(epochMs).toISOString();
const refusal = (error: string, code: number, details: string) => ({ error, code, details });
const quiet = pino({ level: 'silent' });

interface StoreKind {
  name: string;
  open(): Promise<{ store: ConsumerStore; close: () => Promise<void> }>;
}

const kinds: StoreKind[] = [
  {
    name: 'the memory store',
    open: async () => ({ store: createMemoryConsumerStore(), close: async () => undefined }),
  },
  {
    name: 'PostgreSQL',
    async open() {
      const postgres = await startTestPostgres();
      const database = { url: await postgres.createDatabase(), poolMax: 2, migrationTimeoutMs: 60_000 };
      const location = { database, dataDir: '' };
      const { store } = await openStores(location, quiet);
      return { store, close: async () => (await store.close(), await postgres.close()) };
    },
  },
  {
    name: 'the embedded store',
    async open() {
      const parent = await mkdtemp(join(tmpdir(), 'gateway-pins-'));
      const { store } = await openStores({ database: undefined, dataDir: join(parent, 'gateway') }, quiet);
      return { store, close: async () => (await store.close(), await rm(parent, { recursive: true, force: true })) };
    },
  },
];

/**
 * The kind's one store, kept open across the tests of the kind (each gateway would close the store it is given):
 * typed as the memory store the test gateway takes, whose outage switch and write log only the memory store has.
 */
const shared = (store: ConsumerStore): MemoryConsumerStore => {
  return { ...store, down: false, writes: [], close: async () => undefined };
};

/** Every test's consumers get ids of their own: the stores are shared by the tests of a kind. */
let consumers = 0;
const nextId = (name: string): string => `${name}-${++consumers}`;

const CLOSED = '2026-09-01';
const closedPolicy = {
  ...designPolicyFile,
  versions: [
    { ...designPolicyFile.versions[0], consumer_key: 'required', closed_to_new: CLOSED },
    designPolicyFile.versions[1],
  ],
};

describe.each(kinds)('pins on $name', (kind) => {
  let store: ConsumerStore;
  let closeStore: () => Promise<void>;
  let stub: StubBackend;
  let gateway: TestGateway | undefined;
  let admin: FastifyInstance;

  beforeAll(async () => {
    ({ store, close: closeStore } = await kind.open());
    stub = await startStubBackend();
  }, EMBEDDED_START_MS);
  afterAll(async () => {
    await stub?.close();
    await closeStore?.();
  });
  afterEach(async () => {
    await gateway?.app.close();
    gateway = undefined;
  });

  const start = async (options: { policy?: unknown; now?: number } = {}): Promise<TestGateway> => {
    gateway = await buildTestGateway(stub.url, { ...options, consumerStore: shared(store) });
    admin = await gateway.admin();
    return gateway;
  };
  const api = (method: 'GET' | 'PUT' | 'POST', url: string, key?: string, payload?: string) =>
    (gateway as TestGateway).app.inject({ method, url, payload, headers: key === undefined ? {} : { 'api-key': key } });
  /** Registers a consumer on the admin port (`version` as given, or none) and issues it a key. */
  const register = async (name: string, version?: unknown): Promise<{ id: string; key: string }> => {
    const id = nextId(name);
    const payload = { name, id, ...(version === undefined ? {} : { version }) };
    const created = await admin.inject({ method: 'POST', url: '/consumers', payload });
    expect(created.statusCode).toBe(201);
    const issued = await admin.inject({ method: 'POST', url: `/consumers/${id}/keys` });
    expect(issued.statusCode).toBe(201);
    return { id, key: issued.json<{ key: string }>().key };
  };
  const pinView = (id: string, pinned: number | null, previous: number | null, pinnedAtMs: number) => ({
    id,
    name: id.replace(/-\d+$/, ''),
    pinned_version: pinned,
    previous_version: previous,
    pinned_at: new Date(pinnedAtMs).toISOString(),
    rollback_until: previous === null ? null : new Date(pinnedAtMs + 72 * HOUR).toISOString(),
  });

  describe('at registration', () => {
    it(
      'pins a consumer to the version it names, else to the newest current one; shown by GET ' + '/consumers/{id}',
      async () => {
        await start();
        const chosen = await register('chosen', 1);
        const defaulted = await register('defaulted');
        const read = async (id: string) =>
          (await admin.inject({ url: `/consumers/${id}` })).json<Record<string, unknown>>();
        expect(await read(chosen.id)).toMatchObject({ id: chosen.id, pinned_version: 1 });
        expect(await read(defaulted.id)).toMatchObject({ id: defaulted.id, pinned_version: 2 });
        expect((await api('GET', '/consumer', defaulted.key)).json()).toEqual(pinView(defaulted.id, 2, null, TODAY));
      },
    );

    it(
      'refuses a version that is not listed or removed 422, one closed to new consumers 403, and a version that is ' +
        'no integer 400',
      async () => {
        await start({ policy: closedPolicy });
        const post = (body: unknown) => admin.inject({ method: 'POST', url: '/consumers', payload: body as object });
        const unlisted = await post({ name: 'Late', id: nextId('late'), version: 9 });
        expect(unlisted.statusCode).toBe(422);
        expect(unlisted.json()).toEqual(refusal('unsupported version', 422, 'versions one may pin: 1, 2'));
        const closed = await post({ name: 'New', id: nextId('new'), version: 1 });
        expect(closed.statusCode).toBe(403);
        expect(closed.json()).toEqual({
          error: 'version closed to new consumers',
          code: 403,
          details: 'version 1 takes no new consumers since Tue, 01 Sep 2026 00:00:00 GMT; use version 2',
        });
        const text = await post({ name: 'Text', version: '2' });
        expect(text.json()).toEqual(refusal('invalid consumer', 400, 'version: must be a number'));
        const half = await post({ name: 'Half', version: 1.5 });
        expect(half.json()).toEqual(refusal('invalid consumer', 400, 'version: must be an integer'));
        gateway?.setNow(V1_SUNSET);
        const removed = await post({ name: 'Gone', id: nextId('gone'), version: 1 });
        expect(removed.json()).toEqual(refusal('unsupported version', 422, 'versions one may pin: 2'));
      },
    );
  });

  describe('on a request', () => {
    it(
      'serves a keyed request naming no version its pin, varied on the key; a named version wins; no key: ' +
        'default_version',
      async () => {
        const { app, registry } = await start();
        const { id, key } = await register('pinned', 2);
        const bare = await api('GET', '/orders/ord-1001', key);
        expect(bare.statusCode).toBe(200);
        expect(bare.json<{ url: string }>().url).toBe('/v2/orders/ord-1001');
        expect(bare.headers).toMatchObject({ 'api-version': '2', vary: 'API-Version, API-Key' });
        expect(bare.headers).not.toHaveProperty('deprecation');
        const named = await app.inject({ url: '/orders/ord-1001', headers: { 'api-key': key, 'api-version': '1' } });
        expect(named.json<{ url: string }>().url).toBe('/v1/orders/ord-1001');
        expect(named.headers.vary).toBe('API-Version');
        expect((await api('GET', '/v1/orders/ord-1001', key)).json<{ url: string }>().url).toBe('/v1/orders/ord-1001');
        const anonymous = await api('GET', '/orders/ord-1001');
        expect(anonymous.json<{ url: string }>().url).toBe('/v1/orders/ord-1001');
        expect(anonymous.headers.vary).toBe('API-Version, API-Key');
        const metrics = await registry.metrics();
        const series = 'api_version_requests_total';
        expect(metrics).toContain(`${series}{version="2",deprecated="false",selected_by="pin",status_code="200"} 1`);
        expect(metrics).toContain(`${series}{version="1",deprecated="true",selected_by="default",status_code="200"} 1`);
        // The ledger counts the version that served, and how the request chose it.
        await app.consumers.ledger.flush();
        const rows = await store.usageOf(id);
        expect(rows.map(({ version, operation, requests }) => [version, operation, requests])).toEqual([
          [1, 'GET /orders/{id} header', 1],
          [1, 'GET /v1/orders/{id}', 1],
          [2, 'GET /orders/{id} pin', 1],
        ]);
      },
    );

    it(
      'answers a consumer pinned to a version in a brownout or past its sunset as anyone naming it: 410, the pin ' +
        'unmoved',
      async () => {
        await start({ policy: lifecyclePolicyFile });
        const { key } = await register('late', 1);
        gateway?.setNow(BROWNOUT_START);
        const brownout = await api('GET', '/orders/ord-1001', key);
        expect(brownout.statusCode).toBe(410);
        expect(brownout.json<{ error: string }>().error).toBe('version_brownout');
        expect(brownout.headers.vary).toBe('API-Version, API-Key');
        gateway?.setNow(V1_SUNSET);
        const removed = await api('GET', '/orders/ord-1001', key);
        expect(removed.statusCode).toBe(410);
        const details = 'version 1 was removed on Fri, 01 Jan 2027 00:00:00 GMT; use version 2';
        expect(removed.json()).toEqual(refusal('version_removed', 410, details));
        expect(removed.headers.link).toBe(`</v2/orders/ord-1001>; rel="successor-version"${V1_LIFECYCLE_LINKS}`);
        expect((await api('GET', '/consumer', key)).json()).toMatchObject({ pinned_version: 1 });
        expect((await api('GET', '/orders/ord-1001', key)).statusCode).toBe(410);
      },
    );

    it(
      'answers 406 to a consumer pinned to a version the policy no longer lists, naming the versions to ' + 'pin',
      async () => {
        const { app } = await start();
        const { key } = await register('stranded', 1);
        gateway?.setNextPolicy({ default_version: 2, versions: [designPolicyFile.versions[1]] });
        expect(await app.versionPolicies.reload()).toEqual({ ok: true });
        const res = await api('GET', '/orders/ord-1001', key);
        expect(res.statusCode).toBe(406);
        const details = 'the pinned version is no longer listed; pin one of: 2';
        expect(res.json()).toEqual(refusal('unsupported_version', 406, details));
        expect(res.headers.vary).toBe('API-Version, API-Key');
        expect((await api('GET', '/orders/ord-1001')).statusCode).toBe(200);
      },
    );
  });

  describe('self-service', () => {
    it(
      'moves the pin with PUT /consumer/version, served at once, and rolls it back within 72 h; GET /consumer ' +
        'shows it',
      async () => {
        await start();
        const { id, key } = await register('mover', 1);
        const moved = await api('PUT', '/consumer/version', key, '{"version":2}');
        expect(moved.statusCode).toBe(200);
        expect(moved.headers).toMatchObject({ 'cache-control': 'no-store', vary: 'API-Key' });
        expect(moved.json()).toEqual(pinView(id, 2, 1, TODAY));
        expect((await api('GET', '/orders/ord-1001', key)).headers['api-version']).toBe('2');
        // The same version again moves nothing: the rollback still goes back to 1.
        expect((await api('PUT', '/consumer/version', key, '{"version":2}')).json()).toEqual(pinView(id, 2, 1, TODAY));
        gateway?.setNow(TODAY + 72 * HOUR);
        const rolled = await api('POST', '/consumer/version/rollback', key);
        expect(rolled.statusCode).toBe(200);
        expect(rolled.json()).toEqual(pinView(id, 1, null, TODAY + 72 * HOUR));
        expect((await api('GET', '/orders/ord-1001', key)).headers['api-version']).toBe('1');
        expect((await api('GET', '/consumer', key)).json()).toEqual(pinView(id, 1, null, TODAY + 72 * HOUR));
      },
    );

    it('refuses a rollback with nothing to roll back, or after the window, 409', async () => {
      await start();
      const { key } = await register('roller', 1);
      expect((await api('POST', '/consumer/version/rollback', key)).json()).toEqual({
        error: 'nothing to roll back',
        code: 409,
        details: 'the pin has not moved since registration or the last rollback',
      });
      expect((await api('PUT', '/consumer/version', key, '{"version":2}')).statusCode).toBe(200);
      gateway?.setNow(TODAY + 72 * HOUR + 1);
      const late = await api('POST', '/consumer/version/rollback', key);
      expect(late.statusCode).toBe(409);
      expect(late.json()).toEqual({
        error: 'rollback window closed',
        code: 409,
        details: `the pin moved at ${iso(TODAY)}; it could be rolled back until ${iso(TODAY + 72 * HOUR)}`,
      });
      expect((await api('GET', '/consumer', key)).json()).toMatchObject({ pinned_version: 2, previous_version: 1 });
    });

    it(
      'refuses a rollback to a version removed since 422, and one closed to new consumers the consumer never used ' +
        '403',
      async () => {
        await start({ now: V1_SUNSET - HOUR });
        const { key } = await register('sunk', 1);
        expect((await api('PUT', '/consumer/version', key, '{"version":2}')).statusCode).toBe(200);
        gateway?.setNow(V1_SUNSET);
        const removed = await api('POST', '/consumer/version/rollback', key);
        expect(removed.statusCode).toBe(422);
        expect(removed.json()).toEqual(refusal('unsupported version', 422, 'versions one may pin: 2'));
        await gateway?.app.close();

        await start();
        const { key: early } = await register('early', 1);
        expect((await api('PUT', '/consumer/version', early, '{"version":2}')).statusCode).toBe(200);
        await gateway?.app.close();
        // v1 closes to new consumers (the policy now says so); `early` never called it.
        await start({ policy: closedPolicy });
        const refused = await api('POST', '/consumer/version/rollback', early);
        expect(refused.statusCode).toBe(403);
        expect(refused.json<{ error: string }>().error).toBe('version closed to new consumers');
      },
    );

    it.each([
      ['not JSON', '{"version":', 'the body is not JSON'],
      ['empty', '', 'the body is not JSON'],
      ['no object', '[2]', 'must be a JSON object'],
      ['a string version', '{"version":"2"}', 'version: must be a number'],
      ['a fraction', '{"version":1.5}', 'version: must be an integer'],
      ['an unknown field', '{"version":2,"pin":true}', 'unknown field "pin"'],
    ])('refuses a body that is %s 400 invalid JSON', async (_what, body, details) => {
      await start();
      const { key } = await register('bodies', 1);
      const res = await api('PUT', '/consumer/version', key, body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid JSON', code: 400, details });
    });

    it('refuses a body without a version 422 validation failed, a version one may not pin 422 or 403', async () => {
      await start({ policy: closedPolicy });
      const { key } = await register('picky', 2);
      const empty = await api('PUT', '/consumer/version', key, '{}');
      expect(empty.json()).toEqual(refusal('validation failed', 422, 'version is required'));
      for (const version of [0, 3, -1]) {
        const res = await api('PUT', '/consumer/version', key, JSON.stringify({ version }));
        expect(res.statusCode).toBe(422);
        expect(res.json()).toEqual(refusal('unsupported version', 422, 'versions one may pin: 1, 2'));
      }
      const closed = await api('PUT', '/consumer/version', key, '{"version":1}');
      expect(closed.statusCode).toBe(403);
      expect(closed.json()).toEqual({
        error: 'version closed to new consumers',
        code: 403,
        details: 'version 1 takes no new consumers since Tue, 01 Sep 2026 00:00:00 GMT; use version 2',
      });
      expect((await api('GET', '/consumer', key)).json()).toMatchObject({ pinned_version: 2, previous_version: null });
    });

    it('lets a consumer that used a closed version before it closed pin it again', async () => {
      await start({ policy: closedPolicy });
      const { id, key } = await register('veteran', 2);
      await store.recordFirstUse({ consumerId: id, version: 1, firstSeenMs: at('2026-08-31T12:00:00Z') });
      await gateway?.app.consumers.keys.refresh();
      const moved = await api('PUT', '/consumer/version', key, '{"version":1}');
      expect(moved.json()).toMatchObject({ pinned_version: 1, previous_version: 2 });
    });

    it.each([
      ['GET', '/consumer'],
      ['PUT', '/consumer/version'],
      ['POST', '/consumer/version/rollback'],
    ] as const)('answers %s %s 401 without a key or with one that is no valid key', async (method, url) => {
      await start();
      const none = await api(method, url, undefined, '{"version":2}');
      expect(none.statusCode).toBe(401);
      expect(none.json()).toEqual({ error: 'API key required', code: 401 });
      expect(none.headers['www-authenticate']).toBe('API-Key');
      const invalid = await api(method, url, 'vr_nope', '{"version":2}');
      expect(invalid.statusCode).toBe(401);
      expect(invalid.json()).toEqual({ error: 'invalid API key', code: 401 });
    });
  });

  describe('the platform team and the reports', () => {
    it('moves a consumer with PUT /consumers/{id}/version on the admin port, under the same rules', async () => {
      await start();
      const { id, key } = await register('managed', 1);
      const put = (target: string, payload: string) =>
        admin.inject({ method: 'PUT', url: `/consumers/${target}/version`, payload });
      const moved = await put(id, '{"version":2}');
      expect(moved.statusCode).toBe(200);
      expect(moved.json()).toEqual(pinView(id, 2, 1, TODAY));
      expect((await api('GET', '/orders/ord-1001', key)).headers['api-version']).toBe('2');
      expect((await put('nobody', '{"version":2}')).json()).toEqual({ error: 'consumer not found', code: 404 });
      const unlisted = await put(id, '{"version":9}');
      expect(unlisted.json()).toEqual(refusal('unsupported version', 422, 'versions one may pin: 1, 2'));
      expect((await put(id, 'nope')).json()).toEqual(refusal('invalid JSON', 400, 'the body is not JSON'));
    });

    it('shows pinned_version in GET /versions/{n}/consumers and GET /deprecations', async () => {
      const { app } = await start();
      const { id, key } = await register('reported', 1);
      expect((await api('GET', '/orders/ord-1001', key)).statusCode).toBe(200);
      await app.consumers.ledger.flush();
      type Listed = { consumers: { id: string; pinned_version: number }[] };
      const listed = (await admin.inject({ url: '/versions/1/consumers' })).json<Listed>();
      expect(listed.consumers.find((consumer) => consumer.id === id)).toMatchObject({ pinned_version: 1, requests: 1 });
      type Report = { consumer: string; pinned_version: number; versions: { version: number }[] };
      const report = (await api('GET', '/deprecations', key)).json<Report>();
      expect(report).toMatchObject({ consumer: id, pinned_version: 1 });
      // Its calls named no version, and its notices reach it all the same: its ledger rows are v1's.
      expect(report.versions.map(({ version }) => version)).toEqual([1]);
    });
  });

  it(
    "brings a pin changed by another replica to this replica's key cache at its next poll, a kept-alive connection " +
      'included',
    async () => {
      await start();
      const { id, key } = await register('polled', 2);
      const learnFirstUses = (): void => undefined;
      const keys = await loadKeyCache({ store, logger: quiet, learnFirstUses, pollIntervalMs: 3_600_000 });
      try {
        const connection = {};
        expect(keys.entryOf(key, connection)).toMatchObject({ consumerId: id, pin: 2 });
        await store.movePin(id, 1, TODAY);
        expect(keys.entryOf(key, connection)?.pin).toBe(2);
        await keys.refresh();
        expect(keys.entryOf(key, connection)?.pin).toBe(1);
        expect(keys.pinnedConsumers().get(1)).toBeGreaterThanOrEqual(1);
      } finally {
        keys.stop();
      }
    },
  );
});

describe('pins on a memory store that fails', () => {
  let stub: StubBackend;
  let gateway: TestGateway;
  beforeEach(async () => {
    stub = await startStubBackend();
  });
  afterEach(async () => {
    await gateway?.app.close();
    await stub.close();
  });

  it('keeps serving the pins it knows while the store is down; a change answers 503 storage unavailable', async () => {
    const store = createMemoryConsumerStore();
    gateway = await buildTestGateway(stub.url, { consumerStore: store });
    const admin = await gateway.admin();
    await admin.inject({ method: 'POST', url: '/consumers', payload: { name: 'Steady', version: 2 } });
    const { key } = (await admin.inject({ method: 'POST', url: '/consumers/steady/keys' })).json<{ key: string }>();
    store.down = true;
    const served = await gateway.app.inject({ url: '/orders/ord-1001', headers: { 'api-key': key } });
    expect(served.headers['api-version']).toBe('2');
    for (const [method, url, payload] of [
      ['PUT', '/consumer/version', '{"version":1}'],
      ['POST', '/consumer/version/rollback', undefined],
      ['GET', '/consumer', undefined],
    ] as const) {
      const res = await gateway.app.inject({ method, url, payload, headers: { 'api-key': key } });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({ error: 'storage unavailable', code: 503 });
      expect(res.headers['retry-after']).toBe('1');
    }
    const adminPut = await admin.inject({ method: 'PUT', url: '/consumers/steady/version', payload: '{"version":1}' });
    expect(adminPut.json()).toEqual({ error: 'storage unavailable', code: 503 });
  });

  it('answers 409 pin changed meanwhile when another change lands between the read and the rollback', async () => {
    const store = createMemoryConsumerStore();
    gateway = await buildTestGateway(stub.url, { consumerStore: store });
    const admin = await gateway.admin();
    await admin.inject({ method: 'POST', url: '/consumers', payload: { name: 'Raced', version: 1 } });
    const { key } = (await admin.inject({ method: 'POST', url: '/consumers/raced/keys' })).json<{ key: string }>();
    const headers = { 'api-key': key };
    await gateway.app.inject({ method: 'PUT', url: '/consumer/version', payload: '{"version":2}', headers });
    const pinOf = store.pinOf.bind(store);
    // Another replica's rollback lands right after this one read the pin.
    store.pinOf = async (id) => {
      const read = await pinOf(id);
      await store.rollBackPin(id, { pinned_version: 2, previous_version: 1 }, TODAY, TODAY);
      return read;
    };
    const res = await gateway.app.inject({ method: 'POST', url: '/consumer/version/rollback', headers });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(refusal('pin changed meanwhile', 409, 'read GET /consumer and try again'));
  });

  it(
    'shows on the status page how many consumers holding a valid key are pinned to each deprecated ' + 'version',
    async () => {
      gateway = await buildTestGateway(stub.url);
      const admin = await gateway.admin();
      const keyOf = async (name: string, version: number): Promise<string> => {
        const created = await admin.inject({ method: 'POST', url: '/consumers', payload: { name, version } });
        const { id } = created.json<{ id: string }>();
        return (await admin.inject({ method: 'POST', url: `/consumers/${id}/keys` })).json<{ key_id: string }>().key_id;
      };
      await keyOf('One', 1);
      await keyOf('Two', 1);
      await keyOf('Three', 2);
      const revoked = await keyOf('Gone', 1);
      expect((await admin.inject({ method: 'DELETE', url: `/consumers/gone/keys/${revoked}` })).statusCode).toBe(204);
      const how = 'docs/runbook.md, "Moving a consumer to another version"';
      const text = (count: string) => `${count} pinned to v1: their requests that name no version get it (${how}).`;
      const note = (count: string) => `<p class="note pinned" data-version="1">${text(count)}</p>`;
      expect((await admin.inject({ url: '/' })).body).toContain(note('2 consumers with a key are'));
      const moved = await admin.inject({ method: 'PUT', url: '/consumers/two/version', payload: '{"version":2}' });
      expect(moved.statusCode).toBe(200);
      expect((await admin.inject({ url: '/' })).body).toContain(note('1 consumer with a key is'));
    },
  );

  it('refuses a body over 1 MiB 400 invalid JSON, whatever its Content-Type', async () => {
    gateway = await buildTestGateway(stub.url);
    const admin = await gateway.admin();
    await admin.inject({ method: 'POST', url: '/consumers', payload: { name: 'Big' } });
    const { key } = (await admin.inject({ method: 'POST', url: '/consumers/big/keys' })).json<{ key: string }>();
    const payload = `{"version":2,"pad":"${'x'.repeat(1_048_576)}"}`;
    const headers = { 'api-key': key, 'content-type': 'foo' };
    const res = await gateway.app.inject({ method: 'PUT', url: '/consumer/version', payload, headers });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(refusal('invalid JSON', 400, 'the body is larger than 1 MiB'));
    const small = '{"version":1}';
    const typed = await gateway.app.inject({ method: 'PUT', url: '/consumer/version', payload: small, headers });
    expect(typed.json()).toMatchObject({ pinned_version: 1 });
  });
});
