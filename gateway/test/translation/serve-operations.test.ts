// The second edition's operations through the gateway: a scripted backend serving only version 2, and version 1
// declared as changes to it (statuses, headers, links, an envelope, a renamed endpoint, error envelopes, a module).
import { mkdtempSync, writeFileSync, copyFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadPolicyFile } from '../../src/versions/policy-file.js';
import { buildTestGateway, configErrorOf, type TestGateway } from '../support/helpers.js';

const ORDERS = '/orders/:id';
const CLIENTS = '/clients/:id';

/** Version 1 of orders and clients, declared as what changed to version 2. */
const CHANGES = [
  { resource: ORDERS, op: 'envelope', field: 'data' },
  { resource: ORDERS, op: 'rename', field: 'user_id', to: 'customer_id' },
  { resource: ORDERS, op: 'status', from: 403, to: 401 },
  { resource: ORDERS, op: 'header', name: 'Total-Count', to: 'X-Total-Count' },
  { resource: ORDERS, op: 'link', field: 'next' },
  { resource: ORDERS, op: 'link', field: 'Link' },
  { resource: ORDERS, op: 'rename', field: 'details', to: 'message', on: 'error' },
  { resource: CLIENTS, op: 'path', to: '/users/:id' },
  { resource: CLIENTS, op: 'move', field: 'city', to: 'address.city' },
];

const policy = (changes: unknown[] = CHANGES) => ({
  default_version: 1,
  schemes: ['path', 'header'],
  resources: [ORDERS, { path: CLIENTS, versions: [1] }, { path: '/users/:id', versions: [2] }, '/openapi.json'],
  versions: [
    {
      version: 1,
      status: 'deprecated',
      announced: '2026-06-01',
      sunset: '2027-01-01T00:00:00Z',
      successor: 2,
      changes,
    },
    { version: 2, status: 'current' },
  ],
});

interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

interface Scripted {
  status?: number;
  headers?: Record<string, string>;
  body: string;
}

const json = { 'content-type': 'application/json' };
/** What the backend answers at each of its v2 paths; any other path: 404. */
const SCRIPT: Record<string, Scripted> = {
  '/v2/orders/o-1': {
    headers: { ...json, 'total-count': '7', link: '</v2/orders/o-2>; rel="next"' },
    body: '{"data":{"id":"o-1","customer_id":"u-1","next":"/v2/orders/o-2"},"meta":{"page":1}}',
  },
  '/v2/orders/forbidden': { status: 403, headers: json, body: '{"error":"forbidden","code":403,"message":"no"}' },
  '/v2/orders/missing': { status: 404, headers: json, body: '{"error":"order not found","code":404,"message":"m"}' },
  '/v2/orders/both-headers': { headers: { ...json, 'total-count': '1', 'x-total-count': '2' }, body: '{"data":{}}' },
  '/v2/orders/text-error': { status: 500, headers: { 'content-type': 'text/plain' }, body: 'message' },
  '/v2/users/u-1': {
    headers: { ...json, location: '/v2/users/u-1' },
    body: '{"id":"u-1","address":{"city":"Paris"}}',
  },
};

async function startBackend(): Promise<{ url: string; seen: Seen[]; server: Server }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      const url = req.url ?? '';
      seen.push({ url, headers: req.headers, body });
      if (req.method === 'POST') return void res.writeHead(201, json).end(body);
      const scripted = SCRIPT[url.split('?', 1)[0] ?? ''];
      if (scripted === undefined) return void res.writeHead(404, json).end('{"error":"not found","code":404}');
      res.writeHead(scripted.status ?? 200, scripted.headers).end(scripted.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

let backend: Awaited<ReturnType<typeof startBackend>>;
let gateway: TestGateway;

beforeEach(async () => {
  backend = await startBackend();
  gateway = await buildTestGateway(backend.url, { policy: policy() });
});
afterEach(async () => {
  await gateway.app.close();
  await new Promise((resolve) => backend.server.close(resolve));
});

const inject = (method: string, url: string, headers: Record<string, string> = {}, payload?: string) =>
  gateway.app.inject({ method: method as 'GET', url, headers, ...(payload === undefined ? {} : { payload }) });
const failures = async () =>
  (await gateway.metricLines('translation_failures_total')).filter((line) => !line.startsWith('#'));

describe('a version declared with the second edition of changes, at the gateway', () => {
  it('unwraps the body, renames and relinks its fields, renames the header and merges the Link', async () => {
    const res = await inject('GET', '/v1/orders/o-1');
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('{"id":"o-1","user_id":"u-1","next":"/v1/orders/o-2"}');
    expect(res.headers['x-total-count']).toBe('7');
    expect(res.headers).not.toHaveProperty('total-count');
    expect(res.headers.link).toBe('</v2/orders/o-1>; rel="successor-version", </v1/orders/o-2>; rel="next"');
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(res.body)));
  });

  it("answers the successor's 403 as this version's 401, the envelope's code and fields with it", async () => {
    const res = await inject('GET', '/v1/orders/forbidden');
    expect(res.statusCode).toBe(401);
    expect(res.body).toBe('{"error":"forbidden","code":401,"details":"no"}');
    const missing = await inject('GET', '/v1/orders/missing');
    expect([missing.statusCode, missing.body]).toEqual([404, '{"error":"order not found","code":404,"details":"m"}']);
    const text = await inject('GET', '/v1/orders/text-error');
    expect([text.statusCode, text.body]).toEqual([500, 'message']);
  });

  it('wraps a request body and names its header as the successor does; refuses two headers of one name', async () => {
    const res = await inject(
      'POST',
      '/v1/orders/o-1',
      { 'content-type': 'application/json', 'x-total-count': '3' },
      '{"user_id":"u-1"}',
    );
    expect(res.statusCode).toBe(201);
    const seen = backend.seen.at(-1);
    expect(seen?.body).toBe('{"data":{"customer_id":"u-1"}}');
    expect([seen?.headers['total-count'], seen?.headers['x-total-count']]).toEqual(['3', undefined]);
    const clash = await inject('GET', '/v1/orders/o-1', { 'x-total-count': '3', 'total-count': '4' });
    expect(clash.statusCode).toBe(400);
    expect(clash.json()).toEqual({
      error: 'bad request',
      code: 400,
      details: 'the header x-total-count becomes total-count, which is there already',
    });
  });

  it('refuses an answer that has both names of a renamed header: 502, counted as a collision', async () => {
    const res = await inject('GET', '/v1/orders/both-headers');
    expect(res.statusCode).toBe(502);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(await failures()).toContain(
      'translation_failures_total{version="1",resource="/orders/:id",direction="response",reason="collision"} 1',
    );
  });

  it('serves a renamed endpoint at its successor path, Location and successor link named for each version', async () => {
    const res = await inject('GET', '/v1/clients/u-1');
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('{"id":"u-1","city":"Paris"}');
    expect(backend.seen.at(-1)?.url).toBe('/v2/users/u-1');
    expect(res.headers.location).toBe('/v1/clients/u-1');
    expect(res.headers.link).toBe('</v2/users/u-1>; rel="successor-version"');
    const header = await inject('GET', '/clients/u-1', { 'api-version': '1' });
    expect([header.statusCode, backend.seen.at(-1)?.url]).toEqual([200, '/v2/users/u-1']);
  });

  it('answers 404 for a resource the requested version does not have, in any form', async () => {
    const count = backend.seen.length;
    for (const [url, headers] of [
      ['/v2/clients/u-1', {}],
      ['/clients/u-1', { 'api-version': '2' }],
      ['/v1/users/u-1', {}],
    ] as const) {
      const res = await inject('GET', url, headers);
      expect(res.statusCode, url).toBe(404);
    }
    expect(backend.seen.length).toBe(count);
  });
});

describe('a module change, at the gateway', () => {
  const modules = fileURLToPath(new URL('./modules/', import.meta.url));

  /** A policy file in a fresh directory, beside a copy of the modules it names. */
  function policyFileWith(changes: unknown[], ...files: string[]): string {
    const dir = mkdtempSync(join(tmpdir(), 'module-policy-'));
    for (const file of files) copyFileSync(join(modules, file), join(dir, file));
    const path = join(dir, 'versions.json');
    writeFileSync(path, JSON.stringify(policy([...changes, { resource: CLIENTS, op: 'path', to: '/users/:id' }])));
    return path;
  }
  const module = (file: string) => ({ resource: ORDERS, op: 'module', module: file });

  it('translates with the module, and answers 502 (counted, logged) where it throws, serving on', async () => {
    SCRIPT['/v2/orders/split'] = { headers: json, body: '{"id":"s","first_name":"Ada","last_name":"Lovelace"}' };
    SCRIPT['/v2/orders/explode'] = { headers: json, body: '{"explode":true}' };
    const path = policyFileWith([module('split-name.mjs'), module('throws.mjs')], 'split-name.mjs', 'throws.mjs');
    await gateway.app.close();
    gateway = await buildTestGateway(backend.url, { policyPath: path });
    const res = await inject('GET', '/v1/orders/split');
    expect([res.statusCode, res.body]).toEqual([200, '{"id":"s","name":"Ada Lovelace"}']);
    const exploded = await inject('GET', '/v1/orders/explode');
    expect(exploded.statusCode).toBe(502);
    expect(await failures()).toContain(
      'translation_failures_total{version="1",resource="/orders/:id",direction="response",reason="module"} 1',
    );
    expect(gateway.logs.filter((line) => line.level === 40).map((line) => line.details)).toContain(
      '$: throws.mjs failed backward: Error: boom',
    );
    expect((await inject('GET', '/v1/orders/split')).statusCode).toBe(200);
  });

  it('refuses a policy whose module does not give back its examples: one line at start, 400 on reload', async () => {
    const broken = policyFileWith([module('loses-a-field.mjs')], 'loses-a-field.mjs');
    const reason =
      `API_VERSIONS_FILE: ${broken} is invalid at versions.0.changes.0.module: version 1: loses-a-field.mjs does not ` +
      'give back its examples: example 0: $.balance differs after backward then forward';
    let message = 'loaded';
    await loadPolicyFile(broken).catch((error: unknown) => {
      message = configErrorOf(() => {
        throw error;
      });
    });
    expect(message).toBe(reason);
    const good = policyFileWith([module('split-name.mjs')], 'split-name.mjs');
    await gateway.app.close();
    gateway = await buildTestGateway(backend.url, { policyPath: good });
    copyFileSync(join(modules, 'loses-a-field.mjs'), join(good, '..', 'split-name.mjs'));
    const admin = await gateway.admin();
    const reload = await admin.inject({ method: 'POST', url: '/-/reload' });
    expect(reload.statusCode).toBe(400);
    expect(reload.json<{ details: string }>().details).toBe(
      `API_VERSIONS_FILE: ${good} is invalid at versions.0.changes.0.module: version 1: split-name.mjs does not give ` +
        'back its examples: example 0: $.balance differs after backward then forward',
    );
    expect(
      gateway.logs.filter((line) => line.msg === 'version policy reload failed; the previous policy stays in force'),
    ).toHaveLength(1);
    // The policy in force still translates with the module it loaded.
    SCRIPT['/v2/orders/split'] = { headers: json, body: '{"id":"s","first_name":"Ada","last_name":"Lovelace"}' };
    expect((await inject('GET', '/v1/orders/split')).body).toBe('{"id":"s","name":"Ada Lovelace"}');
  });
});
