import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildMigrationGuide } from '../../../src/changes/guide.js';
import { DEPRECATIONS_PAGE_CSP } from '../../../src/consumers/reports/page.js';
import { consumerWithKey, createMemoryConsumerStore, type MemoryConsumerStore } from '../../support/memory-store.js';
import { ordersDocument, startDocumentBackend, type DocumentBackend } from '../../support/documents.js';
import { ORDERS_V1_CHANGES } from '../../support/orders-v1.js';
import { buildTestGateway, designPolicyFile, TODAY, V1_SUNSET, type TestGateway } from '../../support/helpers.js';

let backend: DocumentBackend;
beforeAll(async () => {
  backend = await startDocumentBackend();
});
afterAll(async () => {
  await backend.close();
});

let gateway: TestGateway | undefined;
afterEach(async () => {
  await gateway?.app.close();
  gateway = undefined;
  backend.silent = false;
  for (const version of [1, 2])
    backend.documents.set(`/v${version}/openapi.json`, JSON.stringify(ordersDocument(version)));
});

async function start(store: MemoryConsumerStore, policy: object = designPolicyFile): Promise<TestGateway> {
  gateway = await buildTestGateway(backend.url, { consumerStore: store, backendTimeoutMs: 500, policy });
  return gateway;
}

/**
 * What the migration guide says breaks in v1's order operation (user_id and total removed), as the report carries it.
 */
const ORDER_BREAKING = buildMigrationGuide(1, 2, ordersDocument(1), ordersDocument(2)).operations[0]?.changes.filter(
  (change) => change.breaking,
);

/** acme calls v1 in its three forms and v2; beta calls v1 once. Answers acme's key once the ledger is written. */
async function acmeAndBeta(
  store: MemoryConsumerStore,
  policy?: object,
): Promise<{ app: TestGateway['app']; acme: string; beta: string }> {
  const acme = (await consumerWithKey(store, 'acme')).key;
  const beta = (await consumerWithKey(store, 'beta')).key;
  const { app } = await start(store, policy);
  const calls: [string, Record<string, string>][] = [
    ['/v1/orders/ord-1', { 'api-key': acme }],
    ['/v1/orders/ord-2', { 'api-key': acme }],
    ['/api/v1/orders/ord-1', { 'api-key': acme }],
    ['/orders/ord-1', { 'api-key': acme, 'api-version': '1' }],
    ['/v2/orders/ord-1', { 'api-key': acme }],
    ['/v1/orders/ord-9', { 'api-key': beta }],
  ];
  for (const [url, headers] of calls) expect((await app.inject({ url, headers })).statusCode, url).toBe(200);
  await app.consumers.ledger.flush();
  return { app, acme, beta };
}

describe('GET /deprecations', () => {
  it('answers a consumer the deprecated versions it called, each operation with its breaking changes', async () => {
    const store = createMemoryConsumerStore();
    const { app, acme } = await acmeAndBeta(store);
    const res = await app.inject({ url: '/deprecations', headers: { 'api-key': acme } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers.vary).toBe('API-Key, Accept');
    const at = new Date(TODAY).toISOString();
    expect(res.json()).toEqual({
      consumer: 'acme',
      pinned_version: null,
      // 30 days back, or its registration (which set its pin) when later.
      requests_since: at,
      // The gateway's clock: what version-router-check judges at.
      as_of: at,
      versions: [
        {
          version: 1,
          phase: 'deprecated',
          sunset: '2027-01-01T00:00:00.000Z',
          successor: 2,
          changes: '/versions/1/changes',
          done: false,
          operations: [
            {
              operation: 'GET /api/v1/orders/{id}',
              form: 'path',
              call: 'GET /api/v1/orders/{id}',
              instead: 'GET /api/v2/orders/{id}',
              requests: 1,
              last_seen: at,
              breaking_changes: ORDER_BREAKING,
            },
            {
              operation: 'GET /orders/{id}',
              form: 'header',
              call: 'GET /orders/{id} with API-Version: 1',
              instead: 'GET /orders/{id} with API-Version: 2',
              requests: 1,
              last_seen: at,
              breaking_changes: ORDER_BREAKING,
            },
            {
              operation: 'GET /v1/orders/{id}',
              form: 'path',
              call: 'GET /v1/orders/{id}',
              instead: 'GET /v2/orders/{id}',
              requests: 2,
              last_seen: at,
              breaking_changes: ORDER_BREAKING,
            },
          ],
        },
      ],
    });
    expect(ORDER_BREAKING?.map(({ change, name }) => `${change} ${name}`)).toEqual([
      'removed user_id',
      'removed total',
    ]);
    // A report is no request on a version: the ledger does not count it.
    await app.consumers.ledger.flush();
    expect((await store.usageOf('acme')).reduce((sum, row) => sum + row.requests, 0)).toBe(5);
  });

  it(
    'names each call in the form it was made (path, header, query, media type, pin, none) and what to send ' +
      'instead in that form, in the JSON and on the page',
    async () => {
      const store = createMemoryConsumerStore();
      const { key } = await consumerWithKey(store, 'acme');
      const pinned = await consumerWithKey(store, 'pinned', { pinned_version: 1 });
      const { app } = await start(store, {
        ...designPolicyFile,
        schemes: ['path', 'header', 'query', 'media_type'],
        query_parameter: 'api-version',
      });
      const calls: [string, Record<string, string>][] = [
        ['/v1/orders/ord-1', { 'api-key': key }],
        ['/orders/ord-1', { 'api-key': key, 'api-version': '1' }],
        ['/orders/ord-1?api-version=1', { 'api-key': key }],
        ['/orders/ord-1', { 'api-key': key, accept: 'application/vnd.version-router.v1+json' }],
        ['/orders/ord-1', { 'api-key': key }],
        ['/orders/ord-1', { 'api-key': pinned.key }],
      ];
      for (const [url, headers] of calls) expect((await app.inject({ url, headers })).statusCode, url).toBe(200);
      await app.consumers.ledger.flush();
      const report = async (consumerKey: string) =>
        (await app.inject({ url: '/deprecations', headers: { 'api-key': consumerKey } }))
          .json<{
            versions: { operations: { form: string; call: string; instead: string }[] }[];
          }>()
          .versions[0]?.operations.map(({ form, call, instead }) => [form, call, instead]);
      expect(await report(key)).toEqual([
        ['default', 'GET /orders/{id} naming no version (default_version: v1)', 'GET /orders/{id} with API-Version: 2'],
        ['header', 'GET /orders/{id} with API-Version: 1', 'GET /orders/{id} with API-Version: 2'],
        [
          'media_type',
          'GET /orders/{id} with Accept: application/vnd.version-router.v1+json',
          'GET /orders/{id} with Accept: application/vnd.version-router.v2+json',
        ],
        ['query', 'GET /orders/{id}?api-version=1', 'GET /orders/{id}?api-version=2'],
        ['path', 'GET /v1/orders/{id}', 'GET /v2/orders/{id}'],
      ]);
      expect(await report(pinned.key)).toEqual([
        [
          'pin',
          'GET /orders/{id} naming no version (your pin: v1)',
          'GET /orders/{id} with API-Version: 2, or move your pin: PUT /consumer/version {"version": 2}',
        ],
      ]);
      const page = await app.inject({ url: '/deprecations', headers: { 'api-key': key, accept: 'text/html' } });
      expect(page.body).toContain(
        '<td class="operation"><code>GET /orders/{id} with API-Version: 1</code></td><td class="operation"><code>' +
          'GET /orders/{id} with API-Version: 2</code></td>',
      );
      expect(page.body).toContain('<th>operation you called</th><th>send instead</th>');
    },
  );

  it('answers a consumer of current versions only, or of none yet, no versions', async () => {
    const store = createMemoryConsumerStore();
    const { key } = await consumerWithKey(store, 'fresh');
    const { app } = await start(store);
    expect((await app.inject({ url: '/deprecations', headers: { 'api-key': key } })).json()).toEqual({
      consumer: 'fresh',
      pinned_version: null,
      requests_since: new Date(TODAY).toISOString(),
      as_of: new Date(TODAY).toISOString(),
      versions: [],
    });
    await app.inject({ url: '/v2/orders/ord-1', headers: { 'api-key': key } });
    await app.consumers.ledger.flush();
    expect((await app.inject({ url: '/deprecations', headers: { 'api-key': key } })).json()).toEqual({
      consumer: 'fresh',
      pinned_version: null,
      requests_since: new Date(TODAY).toISOString(),
      as_of: new Date(TODAY).toISOString(),
      versions: [],
    });
  });

  it('says removed after the sunset', async () => {
    const store = createMemoryConsumerStore();
    const { app, acme } = await acmeAndBeta(store);
    gateway?.setNow(V1_SUNSET);
    expect((await app.inject({ url: '/deprecations', headers: { 'api-key': acme } })).json()).toMatchObject({
      versions: [{ version: 1, phase: 'removed' }],
    });
  });

  it(
    'answers 401 API key required without a key, and 401 invalid API key for a key that is none or ' + 'revoked',
    async () => {
      const store = createMemoryConsumerStore();
      const { key, keyId } = await consumerWithKey(store, 'acme');
      await store.revokeKey('acme', keyId, TODAY);
      const { app } = await start(store);
      const without = await app.inject({ url: '/deprecations' });
      expect(without.statusCode).toBe(401);
      expect(without.json()).toEqual({ error: 'API key required', code: 401 });
      expect(without.headers['www-authenticate']).toBe('API-Key');
      expect(without.headers['cache-control']).toBe('no-store');
      for (const given of ['vr_nonsense', key]) {
        const res = await app.inject({ url: '/deprecations', headers: { 'api-key': given, accept: 'text/html' } });
        expect(res.statusCode).toBe(401);
        expect(res.json()).toEqual({ error: 'invalid API key', code: 401 });
        expect(res.headers['www-authenticate']).toBe('API-Key');
      }
    },
  );

  it('answers a page for Accept: text/html, under its own CSP; */* gets JSON', async () => {
    const store = createMemoryConsumerStore();
    const { app, acme } = await acmeAndBeta(store);
    const page = await app.inject({
      url: '/deprecations',
      headers: { 'api-key': acme, accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
    });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toBe(DEPRECATIONS_PAGE_CSP);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers.vary).toBe('API-Key, Accept');
    expect(page.body).toContain('<title>Deprecations for acme</title>');
    expect(page.body).toContain('<code>GET /v1/orders/{id}</code>');
    expect(page.body).toContain('<li>removed field <code>user_id</code> in response 200 (application/json)</li>');
    expect(page.body).toContain(
      'Removed on 2027-01-01 (in 40 days). Move to v2: <a href="/versions/1/changes">the migration guide</a>',
    );
    expect(page.body).not.toMatch(/<script|<link|src=/);
    const json = await app.inject({ url: '/deprecations', headers: { 'api-key': acme, accept: '*/*' } });
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('answers 503 storage unavailable while the store cannot be read', async () => {
    const store = createMemoryConsumerStore();
    const { app, acme } = await acmeAndBeta(store);
    store.down = true;
    const res = await app.inject({ url: '/deprecations', headers: { 'api-key': acme } });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ error: 'storage unavailable', code: 503 });
    expect(res.headers['retry-after']).toBe('1');
  });

  it(
    "answers 502 or 504 while the backend's OpenAPI documents cannot be had, as the migration guide " + 'does',
    async () => {
      const store = createMemoryConsumerStore();
      const { app, acme } = await acmeAndBeta(store);
      backend.documents.delete('/v2/openapi.json');
      const missing = await app.inject({ url: '/deprecations', headers: { 'api-key': acme } });
      expect(missing.statusCode).toBe(502);
      expect(missing.json()).toEqual({ error: 'bad gateway', code: 502 });
      backend.silent = true;
      const silent = await app.inject({ url: '/deprecations', headers: { 'api-key': acme } });
      expect(silent.statusCode).toBe(504);
      expect(silent.json()).toEqual({ error: 'gateway timeout', code: 504 });
    },
  );

  it('names the declared changes of a version declared as changes, in the JSON and on the page', async () => {
    const policy = {
      ...designPolicyFile,
      versions: [{ ...designPolicyFile.versions[0], changes: ORDERS_V1_CHANGES }, designPolicyFile.versions[1]],
    };
    const store = createMemoryConsumerStore();
    const { app, acme } = await acmeAndBeta(store, policy);
    const report = (await app.inject({ url: '/deprecations', headers: { 'api-key': acme } })).json<{
      versions: {
        operations: {
          operation: string;
          breaking_changes: { change: string; name: string; to?: string; factor?: number; breaking: boolean }[];
        }[];
      }[];
    }>();
    for (const operation of report.versions[0]?.operations ?? []) {
      expect(
        operation.breaking_changes.map(({ change, name, to, factor }) => ({ change, name, to, factor })),
        operation.operation,
      ).toEqual([
        { change: 'renamed', name: 'user_id', to: 'customer_id', factor: undefined },
        { change: 'converted', name: 'total', to: 'total_cents', factor: 100 },
      ]);
    }
    expect(report.versions[0]?.operations).toHaveLength(3);
    const page = await app.inject({ url: '/deprecations', headers: { 'api-key': acme, accept: 'text/html' } });
    expect(page.body).toContain('<li>renamed <code>user_id</code> → <code>customer_id</code></li>');
    expect(page.body).toContain(
      '<li>converted <code>total</code> (decimal) → <code>total_cents</code> (integer, × 100)</li>',
    );
  });

  describe('what counts: the calls since 30 days back or the last pin move, naming a version the consumer still gets', () => {
    const DAY = 86_400_000;
    const iso = (epochMs: number): string => new Date(epochMs).toISOString();
    const reportOf = async (key: string, query = '') =>
      (await gateway!.app.inject({ url: `/deprecations${query}`, headers: { 'api-key': key } })).json<{
        pinned_version: number | null;
        requests_since: string;
        versions: { version: number; done: boolean; operations: { form: string; requests: number }[] }[];
      }>();
    const call = async (key: string, url: string, headers: Record<string, string> = {}) => {
      expect((await gateway!.app.inject({ url, headers: { 'api-key': key, ...headers } })).statusCode, url).toBe(200);
    };

    it(
      'tells a consumer that moved its pin off v1 and calls it no more that it is done, in the JSON and on the ' +
        'page; a call naming v1 after the move counts again',
      async () => {
        const store = createMemoryConsumerStore();
        const { key } = await consumerWithKey(store, 'mover', { nowMs: TODAY - 40 * DAY, pinned_version: 1 });
        const { app } = await start(store);
        gateway!.setNow(TODAY - 5 * DAY);
        await call(key, '/orders/ord-1');
        await call(key, '/orders/ord-1', { 'api-version': '1' });
        await app.consumers.ledger.flush();
        expect((await reportOf(key)).versions).toMatchObject([
          { version: 1, done: false, operations: [{ form: 'header' }, { form: 'pin' }] },
        ]);

        gateway!.setNow(TODAY - DAY);
        const moved = await app.inject({
          method: 'PUT',
          url: '/consumer/version',
          headers: { 'api-key': key },
          payload: '{"version":2}',
        });
        expect(moved.statusCode).toBe(200);
        gateway!.setNow(TODAY);
        expect(await reportOf(key)).toEqual({
          consumer: 'mover',
          pinned_version: 2,
          requests_since: iso(TODAY - DAY),
          as_of: iso(TODAY),
          versions: [
            {
              version: 1,
              phase: 'deprecated',
              sunset: '2027-01-01T00:00:00.000Z',
              successor: 2,
              changes: '/versions/1/changes',
              done: true,
              operations: [],
            },
          ],
        });
        const page = await app.inject({ url: '/deprecations', headers: { 'api-key': key, accept: 'text/html' } });
        expect(page.body).toContain(
          '<h2>v1 <span class="phase phase-deprecated">deprecated</span> <span class="done">done</span></h2>',
        );
        expect(page.body).toContain('<p>Nothing of yours is on v1 any more: nothing to change.</p>');
        expect(page.body).toContain(
          '<p class="summary">You are done: nothing of yours is on a deprecated or removed version any more (1 version left).</p>',
        );
        expect(page.body).toContain('<p class="pin">Your pin is v2: your requests that name no version get it.</p>');
        expect(page.body).not.toContain('your pin: v1');

        await call(key, '/v1/orders/ord-2');
        await app.consumers.ledger.flush();
        expect((await reportOf(key)).versions).toMatchObject([
          { version: 1, done: false, operations: [{ form: 'path', requests: 1 }] },
        ]);
      },
    );

    it('counts from ?since= (or the last move when later), and answers 400 for a since that is no instant', async () => {
      const store = createMemoryConsumerStore();
      const { key } = await consumerWithKey(store, 'acme', { nowMs: TODAY - 60 * DAY });
      const { app } = await start(store);
      gateway!.setNow(TODAY - 20 * DAY);
      await call(key, '/v1/orders/ord-1');
      gateway!.setNow(TODAY - 2 * DAY);
      await call(key, '/orders/ord-1', { 'api-version': '1' });
      await app.consumers.ledger.flush();
      gateway!.setNow(TODAY);
      const forms = (report: Awaited<ReturnType<typeof reportOf>>) =>
        report.versions.map(({ operations }) => operations.map(({ form }) => form));
      // 30 days back by default.
      expect(await reportOf(key)).toMatchObject({ requests_since: iso(TODAY - 30 * DAY) });
      expect(forms(await reportOf(key))).toEqual([['header', 'path']]);
      const narrow = await reportOf(key, `?since=${iso(TODAY - 10 * DAY)}`);
      expect(narrow.requests_since).toBe(iso(TODAY - 10 * DAY));
      expect(forms(narrow)).toEqual([['header']]);
      // Nothing since: not done, its requests naming no version still get v1 (the default, no pin).
      expect((await reportOf(key, `?since=${iso(TODAY - DAY).slice(0, 10)}`)).versions).toMatchObject([
        { version: 1, done: false, operations: [] },
      ]);
      for (const since of ['yesterday', '2026-13-45x', '']) {
        const res = await app.inject({ url: `/deprecations?since=${since}`, headers: { 'api-key': key } });
        expect(res.statusCode, since).toBe(400);
        expect(res.json()).toEqual({
          error: 'bad request',
          code: 400,
          details: 'since must be a date (2026-11-01) or an RFC 3339 date-time (2026-11-01T09:00:00Z)',
        });
      }
    });

    it('drops the calls that named no version once the default they got has moved (a consumer without a pin)', async () => {
      const store = createMemoryConsumerStore();
      const { key } = await consumerWithKey(store, 'legacy', { nowMs: TODAY - 40 * DAY });
      await start(store, {
        ...designPolicyFile,
        default_version_changes: [{ at: iso(TODAY - DAY), to: 2, announced: iso(TODAY - 20 * DAY) }],
      });
      gateway!.setNow(TODAY - 5 * DAY);
      await call(key, '/orders/ord-1');
      await gateway!.app.consumers.ledger.flush();
      expect((await reportOf(key)).versions).toMatchObject([
        { version: 1, done: false, operations: [{ form: 'default' }] },
      ]);
      gateway!.setNow(TODAY);
      expect((await reportOf(key)).versions).toMatchObject([{ version: 1, done: true, operations: [] }]);
    });
  });
});
