import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { generateKey } from '../../src/consumers/keys.js';
import { consumerWithKey, createMemoryConsumerStore } from '../support/memory-store.js';
import { at, buildTestGateway, designPolicyFile, TODAY, type TestGateway } from '../support/helpers.js';
import { startStubBackend, type StubBackend } from '../support/stub-backend.js';

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

async function start(options: Parameters<typeof buildTestGateway>[1] = {}): Promise<TestGateway> {
  gateway = await buildTestGateway(stub.url, options);
  return gateway;
}

const lastSeen = () => stub.seen.at(-1);

/** The policy as shipped, v2 requiring keys. */
const v2RequiresKeys = {
  ...designPolicyFile,
  versions: [designPolicyFile.versions[0], { version: 2, status: 'current', consumer_key: 'required' }],
};

describe('API-Key on a forwarded request', () => {
  it('sends the backend API-Consumer for a valid key, never the key; a client API-Consumer never passes', async () => {
    const store = createMemoryConsumerStore();
    const { key } = await consumerWithKey(store, 'acme');
    const { app } = await start({ consumerStore: store });
    for (const url of [
      '/v2/orders/ord-1',
      '/orders/ord-1',
      '/api/v1/orders/ord-1',
      '/api/users',
      '/api/users/user-1',
    ]) {
      const res = await app.inject({ url, headers: { 'api-key': key, 'api-consumer': 'someone-else' } });
      expect(res.statusCode, url).toBe(200);
      expect(lastSeen()?.headers['api-consumer'], url).toBe('acme');
      expect(lastSeen()?.headers['api-key'], url).toBeUndefined();
    }
    await app.inject({ url: '/v2/orders/ord-1', headers: { 'api-consumer': 'acme' } });
    expect(lastSeen()?.headers['api-consumer']).toBeUndefined();
    await app.inject({ url: '/api/users', headers: { 'api-consumer': 'acme' } });
    expect(lastSeen()?.headers['api-consumer']).toBeUndefined();
  });

  it.each([
    ['a malformed key', 'not-a-key'],
    ['an unknown key', generateKey().key],
    ['a known key id with another secret', 'KNOWN'],
    ['two keys', 'TWICE'],
  ])(
    'answers %s 401 invalid API key with WWW-Authenticate and the version headers, without calling the backend',
    async (_what, given) => {
      const store = createMemoryConsumerStore();
      const { key } = await consumerWithKey(store, 'acme');
      const sent = given === 'KNOWN' ? `${key.slice(0, 16)}${'A'.repeat(43)}` : given === 'TWICE' ? [key, key] : given;
      const { app } = await start({ consumerStore: store });
      const before = stub.seen.length;
      const res = await app.inject({ url: '/v1/orders/ord-1', headers: { 'api-key': sent } });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'invalid API key', code: 401 });
      expect(res.headers['www-authenticate']).toBe('API-Key');
      expect(res.headers['api-supported-versions']).toBe('2');
      expect(res.headers['api-deprecated-versions']).toBe('1');
      expect(res.headers.deprecation).toBe('true');
      expect(res.headers.link).toBe('</v2/orders/ord-1>; rel="successor-version"');
      const users = await app.inject({ url: '/api/users', headers: { 'api-key': sent } });
      expect(users.statusCode).toBe(401);
      expect(users.json()).toEqual({ error: 'invalid API key', code: 401 });
      expect(users.headers['www-authenticate']).toBe('API-Key');
      expect(stub.seen.length).toBe(before);
    },
  );

  it('refuses a revoked key at once on the replica that revoked it, and after its next poll on another', async () => {
    const store = createMemoryConsumerStore();
    const { key, keyId } = await consumerWithKey(store, 'acme');
    const test = await start({ consumerStore: store });
    const { app } = test;
    const other = await buildTestGateway(stub.url, { consumerStore: store });
    try {
      expect((await other.app.inject({ url: '/v2/orders/ord-1', headers: { 'api-key': key } })).statusCode).toBe(200);
      expect(
        (await (await test.admin()).inject({ method: 'DELETE', url: `/consumers/acme/keys/${keyId}` })).statusCode,
      ).toBe(204);
      expect((await app.inject({ url: '/v2/orders/ord-1', headers: { 'api-key': key } })).statusCode).toBe(401);
      await other.app.consumers.keys.refresh();
      expect((await other.app.inject({ url: '/v2/orders/ord-1', headers: { 'api-key': key } })).json()).toEqual({
        error: 'invalid API key',
        code: 401,
      });
    } finally {
      await other.app.close();
    }
  });

  it(
    'accepts a key issued on another replica after the next poll, and keeps known keys working while the store is ' +
      'down',
    async () => {
      const store = createMemoryConsumerStore();
      const { app } = await start({ consumerStore: store });
      const { key } = await consumerWithKey(store, 'late');
      expect((await app.inject({ url: '/v2/orders/ord-1', headers: { 'api-key': key } })).statusCode).toBe(401);
      await app.consumers.keys.refresh();
      expect((await app.inject({ url: '/v2/orders/ord-1', headers: { 'api-key': key } })).statusCode).toBe(200);
      store.down = true;
      await app.consumers.keys.refresh();
      expect((await app.inject({ url: '/v2/orders/ord-1', headers: { 'api-key': key } })).statusCode).toBe(200);
      expect(
        gateway?.logs.some(
          (line) => line.msg === 'consumer store unreachable; checking keys against the last known ones',
        ),
      ).toBe(true);
    },
  );
});

describe('consumer_key: "required"', () => {
  it(
    'answers a request without a key 401 API key required, with the version headers; optional versions still work ' +
      'without one',
    async () => {
      const store = createMemoryConsumerStore();
      const { key } = await consumerWithKey(store, 'acme');
      const { app } = await start({ consumerStore: store, policy: v2RequiresKeys });
      for (const url of ['/v2/orders/ord-1', '/orders/ord-1?x=1']) {
        const res = await app.inject({ url, headers: url.startsWith('/orders') ? { 'api-version': '2' } : {} });
        expect(res.statusCode, url).toBe(401);
        expect(res.json()).toEqual({ error: 'API key required', code: 401 });
        expect(res.headers['www-authenticate']).toBe('API-Key');
        expect(res.headers['api-version']).toBe('2');
        expect(res.headers['api-supported-versions']).toBe('2');
      }
      expect((await app.inject({ url: '/v2/orders/ord-1', headers: { 'api-key': key } })).statusCode).toBe(200);
      expect((await app.inject({ url: '/v1/orders/ord-1' })).statusCode).toBe(200);
      expect((await app.inject({ url: '/api/users' })).statusCode).toBe(200);
    },
  );

  it(
    'says where keys come from with CONSUMER_KEYS_URL: in details and a rel="help" Link beside the version\'s ' + 'own',
    async () => {
      const { app } = await start({
        policy: {
          ...designPolicyFile,
          versions: [{ ...designPolicyFile.versions[0], consumer_key: 'required' }, designPolicyFile.versions[1]],
        },
        consumerKeysUrl: 'https://developer.example.com/keys',
      });
      const res = await app.inject({ url: '/v1/orders/ord-1' });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({
        error: 'API key required',
        code: 401,
        details: 'send your key in the API-Key header; how to get one: https://developer.example.com/keys',
      });
      expect(res.headers.link).toBe(
        '</v2/orders/ord-1>; rel="successor-version", <https://developer.example.com/keys>; rel="help"',
      );
      const invalid = await app.inject({ url: '/api/users', headers: { 'api-key': 'not-a-key' } });
      expect(invalid.json()).toEqual({
        error: 'invalid API key',
        code: 401,
        details:
          'the API-Key header holds no valid key (malformed, unknown or revoked); how to get one: ' +
          'https://developer.example.com/keys',
      });
      expect(invalid.headers.link).toBe('<https://developer.example.com/keys>; rel="help"');
    },
  );

  it(
    'applies a scheduled requirement ({"required_from": …}) from its instant on, and GET /versions says ' + 'so',
    async () => {
      const scheduled = {
        ...designPolicyFile,
        versions: [
          { ...designPolicyFile.versions[0], consumer_key: { required_from: '2026-12-01' } },
          designPolicyFile.versions[1],
        ],
      };
      const test = await start({ policy: scheduled });
      expect((await test.app.inject({ url: '/v1/orders/ord-1' })).statusCode).toBe(200);
      const v1 = async () =>
        (await test.app.inject({ url: '/versions' })).json<{ versions: Record<string, unknown>[] }>().versions[0];
      expect(await v1()).toMatchObject({
        consumer_key: 'optional',
        consumer_key_required_from: '2026-12-01T00:00:00.000Z',
        closed_to_new: null,
      });
      test.setNow(at('2026-12-01T00:00:00Z'));
      expect((await test.app.inject({ url: '/v1/orders/ord-1' })).statusCode).toBe(401);
      expect(await v1()).toMatchObject({
        consumer_key: 'required',
        consumer_key_required_from: '2026-12-01T00:00:00.000Z',
      });
    },
  );

  it('refuses closed_to_new before a scheduled key requirement', async () => {
    const test = await start();
    test.setNextPolicy({
      ...designPolicyFile,
      versions: [
        { ...designPolicyFile.versions[0], consumer_key: { required_from: '2026-12-01' }, closed_to_new: '2026-11-30' },
        designPolicyFile.versions[1],
      ],
    });
    expect(await test.app.versionPolicies.reload()).toEqual({
      ok: false,
      reason:
        'invalid at versions.0.closed_to_new: version 1: closed_to_new needs "consumer_key": "required" from then ' +
        'on (a request without a key cannot be told from a new consumer)',
    });
  });

  it("lets the version's own refusals win: a removed version answers 410 without a key", async () => {
    const { app } = await start({
      now: at('2027-02-01T00:00:00Z'),
      policy: {
        ...designPolicyFile,
        versions: [{ ...designPolicyFile.versions[0], consumer_key: 'required' }, designPolicyFile.versions[1]],
      },
    });
    expect((await app.inject({ url: '/v1/orders/ord-1' })).statusCode).toBe(410);
  });
});

describe('closed_to_new', () => {
  const CLOSED = '2026-09-01';
  const closedPolicy = {
    ...designPolicyFile,
    versions: [
      { ...designPolicyFile.versions[0], consumer_key: 'required', closed_to_new: CLOSED },
      designPolicyFile.versions[1],
    ],
  };

  it(
    'refuses a consumer with no use of the version before the date 403, with the successor Link; earlier consumers ' +
      'keep it',
    async () => {
      const store = createMemoryConsumerStore();
      const early = await consumerWithKey(store, 'early');
      const newcomer = await consumerWithKey(store, 'newcomer');
      await store.recordFirstUse({ consumerId: 'early', version: 1, firstSeenMs: at('2026-08-31T23:59:59.999Z') });
      const { app } = await start({ consumerStore: store, policy: closedPolicy });
      const before = stub.seen.length;
      const refused = await app.inject({ url: '/api/v1/orders/ord-1', headers: { 'api-key': newcomer.key } });
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toEqual({
        error: 'version closed to new consumers',
        code: 403,
        details: 'version 1 takes no new consumers since Tue, 01 Sep 2026 00:00:00 GMT; use version 2',
      });
      expect(refused.headers.link).toBe('</api/v2/orders/ord-1>; rel="successor-version"');
      expect(refused.headers.deprecation).toBe('true');
      expect(stub.seen.length).toBe(before);
      expect((await app.inject({ url: '/v1/orders/ord-1', headers: { 'api-key': early.key } })).statusCode).toBe(200);
      expect((await app.inject({ url: '/v2/orders/ord-1', headers: { 'api-key': newcomer.key } })).statusCode).toBe(
        200,
      );
      // The refusal is logged with the consumer it refused, and is no use of the version: the newcomer stays new.
      await vi.waitFor(() =>
        expect(gateway?.logs.find((line) => line.msg === 'request completed' && line.statusCode === 403)).toMatchObject(
          {
            deprecated: true,
            version: 1,
            consumer: 'newcomer',
            refused: 'closed_to_new',
          },
        ),
      );
      await app.consumers.ledger.flush();
      expect(app.consumers.ledger.firstUseOf('newcomer', 1)).toBeUndefined();
      expect((await app.inject({ url: '/v1/orders/ord-1', headers: { 'api-key': newcomer.key } })).statusCode).toBe(
        403,
      );
    },
  );

  it(
    'counts a refusal in the ledger as refused, never as a use: GET /consumers/{id} and GET /versions/{n}/consumers ' +
      'show it apart from the users',
    async () => {
      const store = createMemoryConsumerStore();
      const early = await consumerWithKey(store, 'early');
      const newcomer = await consumerWithKey(store, 'newcomer');
      await store.recordFirstUse({ consumerId: 'early', version: 1, firstSeenMs: at('2026-08-31T23:59:59.999Z') });
      const test = await start({ consumerStore: store, policy: closedPolicy });
      const send = (url: string, key: string, headers: Record<string, string> = {}) =>
        test.app.inject({ url, headers: { 'api-key': key, ...headers } });
      expect((await send('/v1/orders/ord-1', newcomer.key)).statusCode).toBe(403);
      expect((await send('/orders/ord-1', newcomer.key, { 'api-version': '1' })).statusCode).toBe(403);
      expect((await send('/v1/orders/ord-1', early.key)).statusCode).toBe(200);
      expect((await send('/v2/orders/ord-1', newcomer.key)).statusCode).toBe(200);
      await test.app.consumers.ledger.flush();

      expect(await store.usageOf('newcomer')).toMatchObject([{ version: 2, operation: 'GET /v2/orders/{id}' }]);
      expect(await store.refusalsOf('newcomer')).toEqual([
        { version: 1, count: 2, last_at: '2026-11-22T12:00:00.000Z' },
      ]);
      expect((await store.consumersOf(1, 0)).map(({ consumer }) => consumer.id)).toEqual(['early']);
      expect(store.writes.flat().filter((row) => row.consumerId === 'newcomer' && row.version === 1)).toEqual([]);
      expect(test.app.consumers.ledger.firstUseOf('newcomer', 1)).toBeUndefined();

      const admin = await test.admin();
      const shown = await admin.inject({ url: '/consumers/newcomer' });
      expect(shown.json()).toMatchObject({
        id: 'newcomer',
        refused: [{ version: 1, count: 2, last_at: '2026-11-22T12:00:00.000Z' }],
      });
      expect((await admin.inject({ url: '/consumers/early' })).json()).toMatchObject({ id: 'early', refused: [] });
      const listed = (await admin.inject({ url: '/versions/1/consumers' })).json<{
        consumers: { id: string }[];
        refused: unknown[];
      }>();
      expect(listed.consumers.map(({ id }) => id)).toEqual(['early']);
      expect(listed.refused).toEqual([
        {
          id: 'newcomer',
          name: 'newcomer',
          contact_email: null,
          webhook_url: null,
          pinned_version: null,
          refused: { count: 2, last_at: '2026-11-22T12:00:00.000Z' },
        },
      ]);
    },
  );

  it('refuses a first use at the closing instant, and keeps a consumer that came the day before', async () => {
    const store = createMemoryConsumerStore();
    const { key } = await consumerWithKey(store, 'acme');
    const late = await consumerWithKey(store, 'late');
    // A first use recorded at the closing instant itself (by a replica that let it through) is not before it.
    const atClosing = await consumerWithKey(store, 'at-closing');
    await store.recordFirstUse({ consumerId: 'at-closing', version: 1, firstSeenMs: at('2026-09-01T00:00:00Z') });
    const test = await start({ consumerStore: store, policy: closedPolicy, now: at('2026-08-31T12:00:00Z') });
    expect((await test.app.inject({ url: '/v1/orders/ord-1', headers: { 'api-key': key } })).statusCode).toBe(200);
    test.setNow(at('2026-09-01T00:00:00Z'));
    expect((await test.app.inject({ url: '/v1/orders/ord-1', headers: { 'api-key': late.key } })).statusCode).toBe(403);
    expect((await test.app.inject({ url: '/v1/orders/ord-1', headers: { 'api-key': atClosing.key } })).statusCode).toBe(
      403,
    );
    test.setNow(TODAY);
    expect((await test.app.inject({ url: '/v1/orders/ord-1', headers: { 'api-key': key } })).statusCode).toBe(200);
  });

  it('learns an earlier use recorded by another replica at the next poll', async () => {
    const store = createMemoryConsumerStore();
    const { key } = await consumerWithKey(store, 'elsewhere');
    const { app } = await start({ consumerStore: store, policy: closedPolicy });
    expect((await app.inject({ url: '/v1/orders/ord-1', headers: { 'api-key': key } })).statusCode).toBe(403);
    await store.recordFirstUse({ consumerId: 'elsewhere', version: 1, firstSeenMs: at('2026-07-01T00:00:00Z') });
    await app.consumers.keys.refresh();
    expect((await app.inject({ url: '/v1/orders/ord-1', headers: { 'api-key': key } })).statusCode).toBe(200);
  });

  it('refuses a reload that closes a version without requiring keys, and keeps the policy in force', async () => {
    const test = await start();
    test.setNextPolicy({
      ...designPolicyFile,
      versions: [{ ...designPolicyFile.versions[0], closed_to_new: CLOSED }, designPolicyFile.versions[1]],
    });
    const res = await (await test.admin()).inject({ method: 'POST', url: '/-/reload' });
    expect(res.statusCode).toBe(400);
    expect(res.json<{ details: string }>().details).toContain('closed_to_new needs "consumer_key": "required"');
  });
});

describe('the ledger, fed by requests', () => {
  it(
    'counts authenticated versioned requests per operation in the spelling of the form used, writes the first use ' +
      'at once and the counts at close',
    async () => {
      const store = createMemoryConsumerStore();
      const { key } = await consumerWithKey(store, 'acme');
      const { app } = await start({ consumerStore: store });
      const headers = { 'api-key': key };
      await app.inject({ url: '/v1/orders/ord-1', headers });
      await app.inject({ url: '/v1/orders/ord-2', headers });
      await app.inject({ url: '/api/v1/orders/ord-1', headers });
      await app.inject({ url: '/orders/ord-1', headers });
      await app.inject({ url: '/orders/ord-1', headers: { ...headers, 'api-version': '1' } });
      // The query scheme is off (the default): `?version=1` names no version.
      await app.inject({ url: '/orders/ord-1?version=1', headers });
      await app.inject({ method: 'DELETE', url: '/v2/orders/ord-1', headers });
      await app.inject({ url: '/v1/orders/ord-1' });
      await app.inject({ url: '/api/users', headers });
      // The first use of each version is in the store before any flush.
      expect(
        (await store.changesSince(0)).firstUses
          .map(({ consumerId, version, firstSeenMs }) => [consumerId, version, firstSeenMs])
          .sort(),
      ).toEqual([
        ['acme', 1, TODAY],
        ['acme', 2, TODAY],
      ]);
      expect(store.writes).toEqual([]);
      await app.close();
      gateway = undefined;
      expect(await store.usageOf('acme')).toEqual([
        {
          consumer_id: 'acme',
          version: 1,
          operation: 'GET /api/v1/orders/{id}',
          requests: 1,
          first_seen: '2026-11-22T12:00:00.000Z',
          last_seen: '2026-11-22T12:00:00.000Z',
        },
        {
          consumer_id: 'acme',
          version: 1,
          operation: 'GET /orders/{id} default',
          requests: 2,
          first_seen: '2026-11-22T12:00:00.000Z',
          last_seen: '2026-11-22T12:00:00.000Z',
        },
        {
          consumer_id: 'acme',
          version: 1,
          operation: 'GET /orders/{id} header',
          requests: 1,
          first_seen: '2026-11-22T12:00:00.000Z',
          last_seen: '2026-11-22T12:00:00.000Z',
        },
        {
          consumer_id: 'acme',
          version: 1,
          operation: 'GET /v1/orders/{id}',
          requests: 2,
          first_seen: '2026-11-22T12:00:00.000Z',
          last_seen: '2026-11-22T12:00:00.000Z',
        },
        {
          consumer_id: 'acme',
          version: 2,
          operation: 'DELETE /v2/orders/{id}',
          requests: 1,
          first_seen: '2026-11-22T12:00:00.000Z',
          last_seen: '2026-11-22T12:00:00.000Z',
        },
      ]);
    },
  );

  it('names the consumer on the request line of a deprecated version', async () => {
    const store = createMemoryConsumerStore();
    const { key } = await consumerWithKey(store, 'acme');
    const test = await start({ consumerStore: store });
    await test.app.inject({ url: '/v1/orders/ord-1', headers: { 'api-key': key } });
    expect(test.logs.find((line) => line.deprecated === true)).toMatchObject({
      msg: 'request completed',
      consumer: 'acme',
      version: 1,
    });
  });
});
