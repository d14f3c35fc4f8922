/**
 * Comparing a version's declarations with the code they replace
 * (docs/declared-versions.md#comparing-a-declaration-with-the-code-it-replaces), end to end over loopback: a backend that
 * still serves v1 itself, the gateway listening with v1 declared as changes and `compare`, clients over TCP.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { buildTestGateway, designPolicyFile, type TestGateway } from '../support/helpers.js';
import { ORDERS_V1_CHANGES } from '../support/orders-v1.js';

/** SPEC's order in each version, and a widget whose v2 renamed `name` to `label` (v1 declares `title`: wrong). */
function answer(path: string): { status: number; body: unknown } | 'stall' | undefined {
  // v2 answers 403 where v1 answered 401: a `status` change declares it.
  if (path === '/v1/orders/ord-403') return { status: 401, body: { error: 'denied', code: 401 } };
  if (path === '/v2/orders/ord-403') return { status: 403, body: { error: 'denied', code: 403 } };
  // v2 serves v1's clients at /users (a `path` change), as they were.
  const client = /^\/v1\/clients\/(c-[0-9]+)$/.exec(path) ?? /^\/v2\/users\/(c-[0-9]+)$/.exec(path);
  if (client !== null) return { status: 200, body: { id: client[1], name: 'Ada' } };
  const order = /^\/v([12])\/orders\/(ord-[0-9]+)$/.exec(path);
  if (order !== null) {
    const id = order[2] as string;
    if (id === 'ord-9999' && order[1] === '2') return 'stall';
    return order[1] === '1'
      ? { status: 200, body: { id, user_id: 'u-1', total: 12.5, status: 'paid', updated_at: `t${Math.random()}` } }
      : {
          status: 200,
          // Another key order than v1's, and another updated_at: neither is a difference.
          body: { updated_at: 'later', status: 'paid', currency: 'EUR', total_cents: 1250, customer_id: 'u-1', id },
        };
  }
  if (path === '/v1/widgets/big' || path === '/v2/widgets/big') {
    // 64 KiB: streamed to the client, not collected whole.
    const items = Array.from({ length: 1_000 }, (_, i) => ({ n: i, text: 'x'.repeat(50) }));
    return {
      status: 200,
      body: path.startsWith('/v1') ? { id: 'big', name: 'Big', items } : { id: 'big', title: 'Big', items },
    };
  }
  const widget = /^\/v([12])\/widgets\/(w-[0-9]+)$/.exec(path);
  if (widget !== null)
    return widget[1] === '1'
      ? { status: 200, body: { id: widget[2], name: 'Bolt' } }
      : { status: 200, body: { id: widget[2], label: 'Bolt' } };
  return undefined;
}

interface Backend {
  url: string;
  /** Requests per path. */
  seen: Map<string, number>;
  close(): Promise<void>;
}

async function startBackend(): Promise<Backend> {
  const seen = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0] as string;
    seen.set(path, (seen.get(path) ?? 0) + 1);
    const found = answer(path);
    if (found === 'stall') return;
    if (found === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found","code":404}');
      return;
    }
    res.writeHead(found.status, { 'content-type': 'application/json' }).end(JSON.stringify(found.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Declared beside v1's orders and widgets: a status v2 answers in v1's place, and clients moved to /users. */
const MORE_CHANGES = [
  { resource: '/orders/:id', op: 'status', from: 403, to: 401 },
  { resource: '/clients/:id', op: 'path', to: '/users/:id' },
];

const compared = (compare: Record<string, unknown>) => ({
  ...designPolicyFile,
  resources: [
    '/orders/:id',
    '/widgets/:id',
    { path: '/clients/:id', versions: [1] },
    { path: '/users/:id', versions: [2] },
    '/openapi.json',
  ],
  versions: [
    {
      ...designPolicyFile.versions[0],
      changes: [
        ...ORDERS_V1_CHANGES,
        { resource: '/widgets/:id', op: 'rename', field: 'name', to: 'title' },
        ...MORE_CHANGES,
      ],
      compare: { sample: 1, ignore: ['updated_at'], max_in_flight: 1000, ...compare },
    },
    designPolicyFile.versions[1],
  ],
});

interface Comparison {
  version: number;
  successor: number;
  compared: number;
  match: number;
  differ: number;
  error: number;
  skipped: number;
  resources: {
    resource: string;
    compared: number;
    match: number;
    differ: number;
    error: number;
    skipped: number;
    reasons: Record<string, number>;
    differences: {
      path: string;
      count: number;
      first_seen: string;
      last_seen: string;
      example: { request: string; own: string; translated: string };
    }[];
  }[];
}

let backend: Backend;
let gateway: TestGateway;
let url: string;

async function start(compare: Record<string, unknown> = {}): Promise<void> {
  backend = await startBackend();
  gateway = await buildTestGateway(backend.url, { policy: compared(compare) });
  url = await gateway.app.listen({ host: '127.0.0.1', port: 0 });
}

afterEach(async () => {
  await gateway.app.close();
  await backend.close();
});

async function comparison(version = 1): Promise<Comparison> {
  const res = await (await gateway.admin()).inject({ url: `/versions/${version}/comparison` });
  expect(res.statusCode).toBe(200);
  return res.json<Comparison>();
}

/** Waits until `done` holds of the comparison (they finish after the answers). */
async function until(done: (figures: Comparison) => boolean): Promise<Comparison> {
  for (let i = 0; i < 400; i++) {
    const figures = await comparison();
    if (done(figures)) return figures;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return comparison();
}

describe('compare on a version entry', () => {
  it(
    "serves v1 from the backend's own route and finds 0 differences in 1,000 sampled requests where the " +
      'declarations are right, and names the differing path, with first and last seen, where one is wrong',
    async () => {
      await start();
      for (let i = 0; i < 1000; i++) {
        const res = await fetch(`${url}/v1/orders/ord-${1000 + (i % 50)}`);
        expect(res.status).toBe(200);
        // The client's answer is v1's own (its updated_at is the backend's v1 one).
        expect(((await res.json()) as { user_id: string }).user_id).toBe('u-1');
      }
      for (let i = 0; i < 3; i++) expect((await fetch(`${url}/v1/widgets/w-${i}`)).status).toBe(200);
      const figures = await until((found) => found.compared + found.error >= 1003);
      expect(figures).toMatchObject({ version: 1, successor: 2, compared: 1003, match: 1000, differ: 3, error: 0 });
      const orders = figures.resources.find((resource) => resource.resource === '/orders/:id');
      expect(orders).toMatchObject({ compared: 1000, match: 1000, differ: 0, differences: [] });
      const widgets = figures.resources.find((resource) => resource.resource === '/widgets/:id');
      expect(widgets?.differences.map(({ path, count }) => [path, count])).toEqual([
        ['name', 3],
        ['label', 3],
      ]);
      const name = widgets?.differences[0];
      expect(Date.parse(name?.first_seen ?? '')).toBeLessThanOrEqual(Date.parse(name?.last_seen ?? ''));
      // Values redacted without show_values: their types only.
      expect(name?.example).toMatchObject({ request: 'GET /v1/widgets/w-0', own: 'string', translated: 'absent' });
      expect(backend.seen.get('/v2/orders/ord-1000')).toBe(20);
      expect(await gateway.metricLines('api_version_comparisons_total')).toEqual(
        expect.arrayContaining([
          'api_version_comparisons_total{version="1",resource="/orders/:id",result="match"} 1000',
          'api_version_comparisons_total{version="1",resource="/widgets/:id",result="differ"} 3',
        ]),
      );
      const page = await (await gateway.admin()).inject({ url: '/', headers: { accept: 'text/html' } });
      expect(page.body).toContain('<strong>v1 declarations: 1,003 compared, 3 differ</strong>');
    },
  );

  it('passes a large answer to the client whole while it keeps a copy to compare', async () => {
    await start();
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${url}/v1/widgets/big`);
      const body = (await res.json()) as { name: string; items: unknown[] };
      expect([res.status, body.name, body.items.length]).toEqual([200, 'Big', 1000]);
    }
    const figures = await until((found) => found.compared >= 20);
    expect(figures.resources.find((resource) => resource.resource === '/widgets/:id')).toMatchObject({
      match: 20,
      differ: 0,
    });
  });

  it('shows the values of an example with show_values', async () => {
    await start({ show_values: true });
    await fetch(`${url}/v1/widgets/w-1`);
    const figures = await until((found) => found.differ >= 1);
    const widgets = figures.resources.find((resource) => resource.resource === '/widgets/:id');
    expect(widgets?.differences[0]?.example).toMatchObject({ own: '"Bolt"', translated: 'absent' });
  });

  it('never delays the client for a stalled successor: the comparison times out on its own', async () => {
    await start({ timeout_ms: 300 });
    const started = performance.now();
    const res = await fetch(`${url}/v1/orders/ord-9999`);
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(performance.now() - started).toBeLessThan(250);
    const figures = await until((found) => found.error >= 1);
    expect(figures.resources[0]).toMatchObject({ error: 1, reasons: { timeout: 1 } });
  });

  it('skips and counts a sampled request past max_in_flight comparisons under way', async () => {
    await start({ timeout_ms: 2_000, max_in_flight: 1 });
    const first = await fetch(`${url}/v1/orders/ord-9999`);
    await first.arrayBuffer();
    const second = await fetch(`${url}/v1/orders/ord-9999`);
    expect(second.status).toBe(200);
    await second.arrayBuffer();
    const figures = await until((found) => found.skipped >= 1);
    expect(figures.resources[0]).toMatchObject({ skipped: 1, reasons: { busy: 1 } });
  });

  it('compares a HEAD by its status', async () => {
    await start();
    const res = await fetch(`${url}/v1/orders/ord-1001`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    const figures = await until((found) => found.compared >= 1);
    expect(figures).toMatchObject({ compared: 1, match: 1, differ: 0 });
    expect(backend.seen.get('/v2/orders/ord-1001')).toBe(1);
  });

  it("compares the status a translated route would send: the successor's 403 is v1's 401, its envelope too", async () => {
    await start();
    const res = await fetch(`${url}/v1/orders/ord-403`);
    expect(res.status).toBe(401);
    await res.arrayBuffer();
    const figures = await until((found) => found.compared >= 1);
    expect(figures).toMatchObject({ compared: 1, match: 1, differ: 0 });
  });

  it('asks the successor at the path a `path` change moved the resource to', async () => {
    await start();
    const res = await fetch(`${url}/v1/clients/c-7`);
    expect(await res.json()).toEqual({ id: 'c-7', name: 'Ada' });
    const figures = await until((found) => found.compared >= 1);
    expect(figures.resources).toEqual([expect.objectContaining({ resource: '/clients/:id', compared: 1, match: 1 })]);
    expect(backend.seen.get('/v2/users/c-7')).toBe(1);
  });

  it('compares no request that is not GET or HEAD', async () => {
    await start();
    await fetch(`${url}/v1/orders/ord-1`, { method: 'DELETE' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(backend.seen.get('/v2/orders/ord-1')).toBeUndefined();
    expect((await comparison()).compared).toBe(0);
  });
});

describe('GET /versions/{n}/comparison', () => {
  it.each([
    ['/versions/3/comparison', { error: 'not found', code: 404 }],
    ['/versions/abc/comparison', { error: 'not found', code: 404 }],
    ['/versions/01/comparison', { error: 'not found', code: 404 }],
    [
      '/versions/2/comparison',
      { error: 'not found', code: 404, details: 'version 2 is not compared (no "compare" in the policy)' },
    ],
  ])('answers 404 to %s', async (path, body) => {
    await start();
    const res = await (await gateway.admin()).inject({ url: path });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual(body);
  });

  it('answers 405 to a method it does not serve', async () => {
    await start();
    const res = await (await gateway.admin()).inject({ method: 'POST', url: '/versions/1/comparison' });
    expect(res.statusCode).toBe(405);
  });
});

describe('compare in the policy', () => {
  it('is refused without changes to translate by', async () => {
    const { versionPolicyFileSchema } = await import('../../src/versions/policy-file.js');
    const parsed = versionPolicyFileSchema.safeParse({
      ...designPolicyFile,
      versions: [{ ...designPolicyFile.versions[0], compare: { sample: 0.05 } }, designPolicyFile.versions[1]],
    });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toBe(
      "version 1: compare needs changes: it compares the backend's own answer with the successor's translated by them",
    );
  });

  it.each([
    [{ sample: 0 }, 'must be above 0'],
    [{ sample: 1.5 }, 'must be at most 1'],
    [{ sample: 0.1, ignore: ['a..b'] }, 'must be a dotted field path (a.b, items[].id)'],
    [{ sample: 0.1, timeout_ms: 0 }, 'must be at least 1'],
    [{ sample: 0.1, max_in_flight: 2.5 }, 'must be a whole number'],
  ])('refuses %j: %s', async (compare, message) => {
    const { versionPolicyFileSchema } = await import('../../src/versions/policy-file.js');
    const parsed = versionPolicyFileSchema.safeParse(compared(compare));
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toBe(message);
  });
});
