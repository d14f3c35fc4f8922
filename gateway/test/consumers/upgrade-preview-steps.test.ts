/**
 * An upgrade preview across two steps (docs/consumers.md#upgrade-preview): the second step's changes are declared on
 * the operation as the first step's successor names it, so the consumer's call is followed there through the first
 * step's endpoint rename, as its request fields are followed through renames.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildTestGateway, type TestGateway } from '../support/helpers.js';
import { ordersDocument, startDocumentBackend, type DocumentBackend } from '../support/documents.js';
import { consumerWithKey } from '../support/memory-store.js';

type Json = Record<string, unknown>;

interface Preview {
  verdict: string;
  calls: { operation: string; call: string; instead: string | null }[];
  changes: {
    change: string;
    kind: string;
    name: string;
    to?: string;
    version: number;
    successor: number;
    operation: string;
    affects: boolean;
    calls: string[];
  }[];
  blocking: string[];
}

/** v2's orders document as version `version` publishes it, the orders at `/purchases/{id}` (or nowhere). */
function purchasesDocument(version: number, purchases = true): Json {
  const document = ordersDocument(2);
  const paths = Object.entries(document.paths as Json).flatMap(([path, item]) => {
    const there = path.replace('/v2/', `/v${version}/`);
    if (!/\/orders\//.test(path)) return [[there, item]];
    return purchases ? [[there.replace('/orders/', '/purchases/'), item]] : [];
  });
  return { ...document, paths: Object.fromEntries(paths) };
}

const deprecated = (version: number) => ({
  version,
  status: 'deprecated',
  announced: '2026-06-01',
  sunset: '2027-01-01T00:00:00Z',
  successor: version + 1,
});

const RESOURCES = [
  { path: '/orders/:id', versions: [1] },
  { path: '/purchases/:id', versions: [2, 3] },
  '/openapi.json',
];
const MOVED = { resource: '/orders/:id', op: 'path', to: '/purchases/:id' };

let backend: DocumentBackend;
let gateway: TestGateway;

async function previewOfReader(policy: unknown): Promise<Preview> {
  gateway = await buildTestGateway(backend.url, { policy });
  const { key } = await consumerWithKey(gateway.consumerStore, 'reader');
  await gateway.app.consumers.keys.refresh();
  const res = await gateway.app.inject({ url: '/v1/orders/ord-1001', headers: { 'api-key': key } });
  expect(res.statusCode).toBe(200);
  await gateway.app.consumers.ledger.flush();
  const preview = await gateway.app.inject({ url: '/consumer/upgrade-preview?to=3', headers: { 'api-key': key } });
  expect(preview.statusCode).toBe(200);
  return preview.json<Preview>();
}

beforeEach(async () => {
  backend = await startDocumentBackend();
});
afterEach(async () => {
  await gateway.app.close();
  await backend.close();
});

describe('a preview from v1 to v3 when v1 → v2 renames the endpoint the consumer calls', () => {
  it("attributes v2 → v3's changes of the renamed operation to the call, and names it in v3", async () => {
    backend.documents.set('/v3/openapi.json', JSON.stringify(purchasesDocument(3)));
    const purchases = '/purchases/:id';
    const body = await previewOfReader({
      default_version: 1,
      resources: RESOURCES,
      versions: [
        { ...deprecated(1), changes: [MOVED] },
        {
          ...deprecated(2),
          changes: [
            { resource: purchases, op: 'rename', field: 'customer_id', to: 'buyer_id' },
            { resource: purchases, op: 'header', name: 'Order-Count', to: 'X-Order-Count' },
            { resource: purchases, op: 'status', from: 404, to: 410 },
          ],
        },
        { version: 3, status: 'current' },
      ],
    });
    expect(body.calls).toMatchObject([
      { operation: 'GET /v1/orders/{id}', call: 'GET /v1/orders/{id}', instead: 'GET /v3/purchases/{id}' },
    ]);
    const declared = body.changes
      .filter((change) => change.operation.startsWith('GET '))
      .map(({ change, name, to, version, operation, affects, calls }) => ({
        change,
        name,
        to,
        version,
        operation,
        affects,
        calls,
      }));
    const called = ['GET /v1/orders/{id}'];
    expect(declared).toEqual([
      {
        change: 'endpoint renamed',
        name: '/v1/orders/{id}',
        to: '/v2/purchases/{id}',
        version: 1,
        operation: 'GET /v1/orders/{id}',
        affects: true,
        calls: called,
      },
      {
        change: 'renamed',
        name: 'customer_id',
        to: 'buyer_id',
        version: 2,
        operation: 'GET /v2/purchases/{id}',
        affects: true,
        calls: called,
      },
      {
        change: 'header renamed',
        name: 'X-Order-Count',
        to: 'Order-Count',
        version: 2,
        operation: 'GET /v2/purchases/{id}',
        affects: true,
        calls: called,
      },
      {
        change: 'status changed',
        name: '410',
        to: '404',
        version: 2,
        operation: 'GET /v2/purchases/{id}',
        affects: true,
        calls: called,
      },
    ]);
    expect(body).toMatchObject({ verdict: 'review', blocking: [] });
  });
});

describe('a preview from v1 to v3 when v3 no longer has the endpoint v1 → v2 renamed', () => {
  it('is `blocked`, naming the v1 call', async () => {
    // v2 is its own backend's, with the orders at /purchases/{id}; v3 has none.
    backend.documents.set('/v2/openapi.json', JSON.stringify(purchasesDocument(2)));
    backend.documents.set('/v3/openapi.json', JSON.stringify(purchasesDocument(3, false)));
    const body = await previewOfReader({
      default_version: 1,
      resources: [{ path: '/orders/:id', versions: [1] }, { path: '/purchases/:id', versions: [2] }, '/openapi.json'],
      versions: [{ ...deprecated(1), changes: [MOVED] }, deprecated(2), { version: 3, status: 'current' }],
    });
    expect(body.verdict).toBe('blocked');
    expect(body.blocking).toEqual(['GET /v1/orders/{id}']);
    expect(body.changes).toContainEqual(
      expect.objectContaining({
        change: 'removed',
        kind: 'endpoint',
        version: 2,
        operation: 'GET /v2/purchases/{id}',
        affects: true,
        calls: ['GET /v1/orders/{id}'],
      }),
    );
    expect(body.calls).toMatchObject([{ operation: 'GET /v1/orders/{id}', instead: 'GET /v3/purchases/{id}' }]);
  });
});
