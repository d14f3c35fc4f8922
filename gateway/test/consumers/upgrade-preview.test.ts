/**
 * The upgrade preview (docs/consumers.md#upgrade-preview): what moving its pin would change for the calls a consumer
 * really made. Consumers call through the gateway, the ledger and the request fields are written to the store, and
 * the preview is read with the consumer's key and on the admin port.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildTestGateway, designPolicyFile, TODAY, type TestGateway } from '../support/helpers.js';
import { ordersDocument, startDocumentBackend, type DocumentBackend } from '../support/documents.js';
import { ORDERS_V1_CHANGES } from '../support/orders-v1.js';
import { consumerWithKey } from '../support/memory-store.js';

/** v1 declared as what changed to v2: the orders' user_id renamed, total converted, currency added. */
const DECLARED_POLICY = {
  ...designPolicyFile,
  versions: [{ ...designPolicyFile.versions[0], changes: ORDERS_V1_CHANGES }, designPolicyFile.versions[1]],
};

interface Preview {
  consumer: string;
  from: number;
  to: number;
  calls_since: string;
  verdict: string;
  calls: { operation: string; call: string; instead: string | null; requests: number; last_seen: string }[];
  changes: {
    change: string;
    name: string;
    to?: string;
    breaking: boolean;
    operation: string;
    affects: boolean;
    calls: string[];
    fields_sent: string[];
  }[];
  blocking: string[];
}

let backend: DocumentBackend;
let gateway: TestGateway;

async function start(policy: unknown): Promise<void> {
  gateway = await buildTestGateway(backend.url, { policy });
}

/** A consumer with a key the running gateway knows. */
async function consumer(id: string): Promise<string> {
  const { key } = await consumerWithKey(gateway.consumerStore, id);
  await gateway.app.consumers.keys.refresh();
  return key;
}

const call = (key: string, url: string, headers: Record<string, string> = {}) =>
  gateway.app.inject({ url, headers: { 'api-key': key, ...headers } });

/** A JSON PUT with `key`. */
const put = (key: string, url: string, body: unknown) =>
  gateway.app.inject({
    method: 'PUT',
    url,
    headers: { 'api-key': key, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
const preview = (key: string | undefined, query: string) =>
  gateway.app.inject({
    url: `/consumer/upgrade-preview${query}`,
    headers: key === undefined ? {} : { 'api-key': key },
  });

beforeEach(async () => {
  backend = await startDocumentBackend();
});
afterEach(async () => {
  await gateway.app.close();
  await backend.close();
});

describe('GET /consumer/upgrade-preview?to=N', () => {
  beforeEach(() => start(DECLARED_POLICY));

  it('gives a consumer that only reads GET /v1/orders/{id} `review`, listing the rename and the conversion', async () => {
    const key = await consumer('reader');
    for (let i = 0; i < 3; i++) expect((await call(key, '/v1/orders/ord-1001')).statusCode).toBe(200);
    await gateway.app.consumers.ledger.flush();
    const res = await preview(key, '?to=2');
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json<Preview>();
    expect(body).toMatchObject({ consumer: 'reader', from: 1, to: 2, verdict: 'review', blocking: [] });
    expect(body.calls).toEqual([
      {
        operation: 'GET /v1/orders/{id}',
        form: 'path',
        call: 'GET /v1/orders/{id}',
        instead: 'GET /v2/orders/{id}',
        requests: 3,
        last_seen: new Date(TODAY).toISOString(),
        fields_sent: [],
      },
    ]);
    const affecting = body.changes.filter((change) => change.affects && change.operation === 'GET /v1/orders/{id}');
    expect(affecting.map(({ change, name, to, breaking }) => ({ change, name, to, breaking }))).toEqual([
      { change: 'renamed', name: 'user_id', to: 'customer_id', breaking: true },
      { change: 'converted', name: 'total', to: 'total_cents', breaking: true },
      { change: 'added', name: 'currency', to: undefined, breaking: false },
    ]);
    expect(affecting.every((change) => change.calls.join() === 'GET /v1/orders/{id}')).toBe(true);
    // The operation's /api form is the same operation: its changes are not listed twice.
    expect(body.changes.map((change) => change.operation).filter((operation) => operation.includes('/api/'))).toEqual(
      [],
    );
  });

  it('records the request fields a consumer sends on a translated route as sent, none on the latest', async () => {
    const key = await consumer('writer');
    // v1's request bodies are translated (user_id renamed): its fields are recorded as v1 names them.
    await put(key, '/v1/orders/ord-1001', { user_id: 'u-2', note: { text: 'x' } });
    await put(key, '/v2/orders/ord-1001', { customer_id: 'u-2' });
    // A stop writes what is held.
    await gateway.app.close();
    const fields = async (version: number) =>
      (await gateway.consumerStore.requestFieldsOf(version, 0, 'writer')).map(({ operation, field, requests }) => [
        operation,
        field,
        requests,
      ]);
    // Once each: a body the translation reads is recorded there, not also as it arrived.
    expect(await fields(1)).toEqual([
      ['PUT /v1/orders/{id}', 'note', 1],
      ['PUT /v1/orders/{id}', 'note.text', 1],
      ['PUT /v1/orders/{id}', 'user_id', 1],
    ]);
    // v2 is the latest: no preview moves a consumer from it, so its requests record nothing.
    expect(await fields(2)).toEqual([]);
  });

  it('gives a consumer that never called the orders `safe`, every change listed as not affecting it', async () => {
    const key = await consumer('bystander');
    const res = await preview(key, '?to=2');
    expect(res.statusCode).toBe(200);
    const body = res.json<Preview>();
    expect(body).toMatchObject({ consumer: 'bystander', from: 1, to: 2, verdict: 'safe', calls: [], blocking: [] });
    expect(body.changes.length).toBeGreaterThan(0);
    expect(body.changes.every((change) => !change.affects && change.calls.length === 0)).toBe(true);
  });

  it('previews the version it is on as `safe` with no change', async () => {
    const key = await consumer('stayer');
    const body = (await preview(key, '?to=1')).json<Preview>();
    expect(body).toMatchObject({ from: 1, to: 1, verdict: 'safe', changes: [], blocking: [] });
  });

  it.each([
    ['', 'to must be a version number: ?to=2'],
    ['?to=', 'to must be a version number: ?to=2'],
    ['?to=v2', 'to must be a version number: ?to=2'],
    ['?to=02', 'to must be a version number: ?to=2'],
    ['?to=0', 'to must be a version number: ?to=2'],
    ['?to=2.0', 'to must be a version number: ?to=2'],
    ['?to=9999999999', 'to must be a version number: ?to=2'],
  ])('answers 400 to %j', async (query, details) => {
    const key = await consumer('asker');
    const res = await preview(key, query);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'bad request', code: 400, details });
  });

  it('answers 422 for a version it cannot move to, naming those it can', async () => {
    const key = await consumer('asker');
    const res = await preview(key, '?to=7');
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual({
      error: 'unsupported version',
      code: 422,
      details: 'versions a preview from v1 may name: 1, 2',
    });
  });

  it('answers 503 storage unavailable while the store cannot be read', async () => {
    const key = await consumer('asker');
    gateway.consumerStore.down = true;
    const res = await preview(key, '?to=2');
    gateway.consumerStore.down = false;
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.json()).toMatchObject({ error: 'storage unavailable', code: 503 });
  });

  it('answers 401 without a key and with a key it does not know', async () => {
    for (const key of [undefined, 'vr_not-a-key']) {
      const res = await preview(key, '?to=2');
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('API-Key');
    }
  });
});

describe('GET /consumers/{id}/upgrade-preview?to=N (admin port)', () => {
  beforeEach(() => start(DECLARED_POLICY));

  it("answers the consumer's own preview to the platform team", async () => {
    const key = await consumer('reader');
    await call(key, '/v1/orders/ord-1001');
    await gateway.app.consumers.ledger.flush();
    const admin = await gateway.admin();
    const res = await admin.inject({ url: '/consumers/reader/upgrade-preview?to=2' });
    expect(res.statusCode).toBe(200);
    expect(res.json<Preview>()).toEqual((await preview(key, '?to=2')).json<Preview>());
  });

  it('answers 404 for a consumer it does not know, 400 and 422 as the consumer route', async () => {
    const admin = await gateway.admin();
    const unknown = await admin.inject({ url: '/consumers/nobody/upgrade-preview?to=2' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'consumer not found', code: 404 });
    await consumer('asker');
    const bad = await admin.inject({ url: '/consumers/asker/upgrade-preview?to=two' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ error: 'bad request', code: 400, details: 'to must be a version number: ?to=2' });
    const far = await admin.inject({ url: '/consumers/asker/upgrade-preview?to=3' });
    expect(far.statusCode).toBe(422);
  });

  it('answers 502 while the backend serves no documents', async () => {
    await consumer('asker');
    backend.documents.clear();
    const admin = await gateway.admin();
    const res = await admin.inject({ url: '/consumers/asker/upgrade-preview?to=2' });
    expect(res.statusCode).toBe(502);
  });
});

describe('request fields on a version its own route serves', () => {
  beforeEach(() => start(designPolicyFile));

  it('are recorded as the body arrived while the version has a successor, none on the latest', async () => {
    const key = await consumer('writer');
    await put(key, '/v1/orders/ord-1001', { user_id: 'u-2' });
    await put(key, '/v2/orders/ord-1001', { customer_id: 'u-2' });
    await gateway.app.close();
    const fields = async (version: number) =>
      (await gateway.consumerStore.requestFieldsOf(version, 0, 'writer')).map(({ operation, field }) => [
        operation,
        field,
      ]);
    expect(await fields(1)).toEqual([['PUT /v1/orders/{id}', 'user_id']]);
    expect(await fields(2)).toEqual([]);
  });
});

describe('request fields on a translated version before its deprecation is announced', () => {
  // Announced later: until then v1 is current, with no successor a request is told of.
  beforeEach(() =>
    start({
      ...DECLARED_POLICY,
      versions: [
        { ...DECLARED_POLICY.versions[0], announced: '2026-12-01', sunset: '2027-06-01T00:00:00Z' },
        DECLARED_POLICY.versions[1],
      ],
    }),
  );

  it('are not recorded, though the translation reads the body', async () => {
    const key = await consumer('early');
    const res = await gateway.app.inject({
      method: 'PUT',
      url: '/v1/orders/ord-1001',
      headers: { 'api-key': key, 'content-type': 'application/json' },
      payload: JSON.stringify({ user_id: 'u-2' }),
    });
    expect(res.statusCode).toBe(200);
    expect(backend.seen.at(-1)?.url).toBe('/v2/orders/ord-1001');
    await gateway.app.close();
    expect(await gateway.consumerStore.requestFieldsOf(1, 0, 'early')).toEqual([]);
  });
});

describe('an upgrade preview to a version without an operation the consumer calls', () => {
  beforeEach(async () => {
    // v2's document has no orders: a consumer reading them cannot move.
    const v2 = ordersDocument(2);
    const paths = Object.entries(v2.paths as Record<string, unknown>).filter(([path]) => !path.includes('/orders'));
    backend.documents.set('/v2/openapi.json', JSON.stringify({ ...v2, paths: Object.fromEntries(paths) }));
    await start(designPolicyFile);
  });

  it('is `blocked`, naming the call', async () => {
    const key = await consumer('orders-reader');
    await call(key, '/v1/orders/ord-1001');
    await gateway.app.consumers.ledger.flush();
    const body = (await preview(key, '?to=2')).json<Preview>();
    expect(body.verdict).toBe('blocked');
    expect(body.blocking).toEqual(['GET /v1/orders/{id}']);
    expect(body.changes).toContainEqual(
      expect.objectContaining({ change: 'removed', kind: 'endpoint', affects: true, calls: ['GET /v1/orders/{id}'] }),
    );
  });
});
