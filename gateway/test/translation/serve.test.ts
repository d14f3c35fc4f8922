// Serving a version declared as changes: its successor answers, the bodies are translated, the rest passes.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { request as undiciRequest } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildTestGateway, type TestGateway } from '../support/helpers.js';

/** SPEC's v1, declared as changes to v2 (and a default for the added currency, for request bodies). */
const SPEC_V1_CHANGES = [
  {
    resource: '/orders/:id',
    op: 'rename',
    field: 'user_id',
    to: 'customer_id',
    description: 'The customer identifier under its old name.',
  },
  { resource: '/orders/:id', op: 'scale', field: 'total', to: 'total_cents', factor: 100 },
  { resource: '/orders/:id', op: 'add', field: 'currency', default: 'EUR' },
];

const translatedPolicy = {
  default_version: 1,
  schemes: ['path', 'header', 'query', 'media_type'],
  versions: [
    {
      version: 1,
      status: 'deprecated',
      announced: '2026-06-01',
      sunset: '2027-01-01T00:00:00Z',
      successor: 2,
      changes: SPEC_V1_CHANGES,
    },
    { version: 2, status: 'current' },
  ],
};

const V2_ORDER = '{"id":"ord-1001","customer_id":"user-1","total_cents":1999,"currency":"EUR"}';
const V1_ORDER = '{"id":"ord-1001","user_id":"user-1","total":19.99}';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A backend that serves only version 2 of an order, and a few broken answers. */
async function startV2Backend(): Promise<{ url: string; seen: Seen[]; server: Server }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      const url = req.url ?? '';
      seen.push({ method: req.method ?? '', url, headers: req.headers, body });
      const path = url.split('?', 1)[0] ?? '';
      if (!/^(\/api)?\/v2\//.test(path))
        return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found","code":404}');
      const json = { 'content-type': 'application/json; charset=utf-8' };
      if (path.endsWith('/missing')) return void res.writeHead(404, json).end('{"error":"order not found","code":404}');
      if (path.endsWith('/broken')) return void res.writeHead(200, json).end('{"id":"ord-1001",');
      if (path.endsWith('/big')) return void res.writeHead(200, json).end(JSON.stringify({ id: 'x'.repeat(4000) }));
      if (path.endsWith('/gzip'))
        return void res.writeHead(200, { ...json, 'content-encoding': 'gzip' }).end(gzipSync(V2_ORDER));
      if (path.endsWith('/text')) return void res.writeHead(200, { 'content-type': 'text/plain' }).end('customer_id');
      if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(201, json).end(body);
      if (req.headers['if-none-match'] === '"abc"') return void res.writeHead(304, { etag: '"abc"' }).end();
      res.writeHead(200, { ...json, etag: '"abc"' }).end(V2_ORDER);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

let backend: Awaited<ReturnType<typeof startV2Backend>>;
let gateway: TestGateway;

async function useGateway(options: Parameters<typeof buildTestGateway>[1] = {}): Promise<void> {
  await gateway?.app.close();
  gateway = await buildTestGateway(backend.url, { policy: translatedPolicy, ...options });
}

beforeEach(async () => {
  backend = await startV2Backend();
  gateway = await buildTestGateway(backend.url, { policy: translatedPolicy });
});
afterEach(async () => {
  await gateway.app.close();
  await new Promise((resolve) => backend.server.close(resolve));
});

const inject = (method: string, url: string, headers: Record<string, string> = {}, payload?: string) =>
  gateway.app.inject({ method: method as 'GET', url, headers, ...(payload === undefined ? {} : { payload }) });
/** The translation's warn lines (the policy's deprecated default_version has its own at start). */
const warnings = () =>
  gateway.logs
    .filter((line) => line.level === 40 && String(line.msg).startsWith('translation:'))
    .map((line) => line.msg);

describe('a version declared as changes', () => {
  it.each([
    ['/v1/orders/ord-1001', {}, '/v2/orders/ord-1001', '</v2/orders/ord-1001>; rel="successor-version"'],
    [
      '/api/v1/orders/ord-1001?x=1',
      {},
      '/api/v2/orders/ord-1001?x=1',
      '</api/v2/orders/ord-1001>; rel="successor-version"',
    ],
    [
      '/orders/ord-1001',
      { 'api-version': '1' },
      '/v2/orders/ord-1001',
      '</v2/orders/ord-1001>; rel="successor-version"',
    ],
    ['/orders/ord-1001', {}, '/v2/orders/ord-1001', '</v2/orders/ord-1001>; rel="successor-version"'],
    ['/orders/ord-1001?version=1&x=1', {}, '/v2/orders/ord-1001?x=1', '</v2/orders/ord-1001>; rel="successor-version"'],
    [
      '/orders/ord-1001',
      { accept: 'application/vnd.version-router.v1+json' },
      '/v2/orders/ord-1001',
      '</v2/orders/ord-1001>; rel="successor-version"',
    ],
  ])("GET %s %j is served by backend %s and answered in v1 with v1's headers", async (url, headers, upstream, link) => {
    const res = await inject('GET', url, headers);
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(V1_ORDER);
    expect(res.headers).toMatchObject({
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(V1_ORDER)),
      'api-version': '1',
      deprecation: 'true',
      sunset: 'Fri, 01 Jan 2027 00:00:00 GMT',
      link,
    });
    expect(res.headers.vary).toContain('API-Version');
    expect(res.headers.etag).toMatch(/^W\/"v1-[0-9a-f]{8}-abc"$/);
    const [seen] = backend.seen;
    expect(seen?.url).toBe(upstream);
    expect(seen?.headers['api-version-requested']).toBe('1');
    expect(seen?.headers['accept-encoding']).toBe('identity');
  });

  it('asks the backend for identity bytes even when the client accepts gzip', async () => {
    await inject('GET', '/v1/orders/ord-1001', { 'accept-encoding': 'gzip, br' });
    expect(backend.seen[0]?.headers['accept-encoding']).toBe('identity');
  });

  it("leaves v2 untouched: the backend's bytes, ETag and Accept-Encoding, no API-Version-Requested", async () => {
    const res = await inject('GET', '/v2/orders/ord-1001', { 'accept-encoding': 'gzip' });
    expect(res.body).toBe(V2_ORDER);
    expect(res.headers.etag).toBe('"abc"');
    expect(backend.seen[0]?.headers).not.toHaveProperty('api-version-requested');
    expect(backend.seen[0]?.headers['accept-encoding']).toBe('gzip');
  });

  it("answers 304 to its own ETag (sent on as the backend's) and 200 to any other tag, which it drops", async () => {
    const etag = (await inject('GET', '/v1/orders/ord-1001')).headers.etag as string;
    const notModified = await inject('GET', '/v1/orders/ord-1001', { 'if-none-match': etag });
    expect(notModified.statusCode).toBe(304);
    expect(notModified.headers.etag).toBe(etag);
    expect(backend.seen[1]?.headers['if-none-match']).toBe('"abc"');
    const strangers = await inject('GET', '/v1/orders/ord-1001', { 'if-none-match': '"abc", W/"v2-abc"' });
    expect(strangers.statusCode).toBe(200);
    expect(strangers.body).toBe(V1_ORDER);
    expect(backend.seen[2]?.headers).not.toHaveProperty('if-none-match');
  });

  it("answers a HEAD without the serving version's Content-Length, which names other bytes", async () => {
    const res = await inject('HEAD', '/v1/orders/ord-1001');
    expect(res.statusCode).toBe(200);
    expect(res.headers).not.toHaveProperty('content-length');
    expect(res.headers['api-version']).toBe('1');
  });

  it('passes error envelopes and other media types unchanged', async () => {
    const missing = await inject('GET', '/v1/orders/missing');
    expect(missing.statusCode).toBe(404);
    expect(missing.body).toBe('{"error":"order not found","code":404}');
    expect(missing.headers['api-version']).toBe('1');
    const text = await inject('GET', '/v1/orders/text');
    expect(text.body).toBe('customer_id');
  });

  it(
    'answers 502 with one warn line for a body that is not JSON though it says so, never half a ' + 'translation',
    async () => {
      const res = await inject('GET', '/v1/orders/broken');
      expect(res.statusCode).toBe(502);
      expect(res.json()).toEqual({ error: 'bad gateway', code: 502 });
      expect(res.headers).not.toHaveProperty('etag');
      expect(warnings()).toEqual(['translation: the upstream body is not valid JSON, though its Content-Type says so']);
    },
  );

  it('answers 502 with one warn line naming TRANSLATION_MAX_BYTES for a body above it', async () => {
    await useGateway({ translationMaxBytes: 2048 });
    const res = await inject('GET', '/v1/orders/big');
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: 'bad gateway', code: 502 });
    expect(warnings()).toEqual(['translation: the upstream body is larger than TRANSLATION_MAX_BYTES (2048 bytes)']);
  });

  it('answers 502 with one warn line for an encoded body it did not ask for', async () => {
    const res = await inject('GET', '/v1/orders/gzip');
    expect(res.statusCode).toBe(502);
    expect(warnings()).toEqual(['translation: the upstream sent an encoded body, which cannot be translated']);
  });

  it.each(['POST', 'PUT', 'PATCH'])('translates a JSON %s body forward and the answer back', async (method) => {
    const res = await inject(
      method,
      '/v1/orders/ord-1001',
      { 'content-type': 'application/json' },
      '{"user_id":"user-2","total":10.005}',
    );
    const forward = '{"customer_id":"user-2","total_cents":1001,"currency":"EUR"}';
    expect(backend.seen[0]?.body).toBe(forward);
    expect(backend.seen[0]?.headers['content-length']).toBe(String(Buffer.byteLength(forward)));
    expect(res.statusCode).toBe(201);
    expect(res.body).toBe('{"user_id":"user-2","total":10.01}');
  });

  it('translates a JSON body larger than the small-body limit, read whole from its stream', async () => {
    const note = 'n'.repeat(20_000);
    const res = await inject(
      'POST',
      '/v1/orders/ord-1001',
      { 'content-type': 'application/json' },
      JSON.stringify({ user_id: 'u', note }),
    );
    expect(JSON.parse(backend.seen[0]?.body ?? '')).toEqual({ customer_id: 'u', note, currency: 'EUR' });
    expect(res.json()).toEqual({ user_id: 'u', note });
  });

  it('answers 413 to a JSON request body above TRANSLATION_MAX_BYTES', async () => {
    await useGateway({ translationMaxBytes: 20_000 });
    const res = await inject(
      'POST',
      '/v1/orders/ord-1001',
      { 'content-type': 'application/json' },
      JSON.stringify({ note: 'n'.repeat(30_000) }),
    );
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({
      error: 'payload too large',
      code: 413,
      details: 'a translated request body is read whole, up to 20000 bytes',
    });
    expect(backend.seen).toEqual([]);
  });

  it("sends a JSON-typed body that is not JSON as it came, for the backend's own answer", async () => {
    await inject('POST', '/v1/orders/ord-1001', { 'content-type': 'application/json' }, '{"user_id":');
    expect(backend.seen[0]?.body).toBe('{"user_id":');
  });

  it('forwards the OpenAPI document to the serving version, telling the backend which was asked for', async () => {
    await inject('GET', '/v1/openapi.json');
    expect(backend.seen[0]?.url).toBe('/v2/openapi.json');
    expect(backend.seen[0]?.headers['api-version-requested']).toBe('1');
  });

  it('counts the requested version in the metrics', async () => {
    await inject('GET', '/v1/orders/ord-1001');
    const metrics = await gateway.registry.getSingleMetricAsString('api_version_requests_total');
    expect(metrics).toMatch(/api_version_requests_total\{[^}]*version="1"[^}]*\} 1/);
  });
});

describe('a policy without changes', () => {
  it('has the backend serve every version itself, told nothing more', async () => {
    await useGateway({
      policy: {
        ...translatedPolicy,
        versions: [{ ...translatedPolicy.versions[0], changes: undefined }, translatedPolicy.versions[1]],
      },
    });
    await inject('GET', '/v1/orders/ord-1001');
    expect(backend.seen[0]?.url).toBe('/v1/orders/ord-1001');
    expect(backend.seen[0]?.headers).not.toHaveProperty('api-version-requested');
  });
});

describe('a route without changes, beside one with', () => {
  it('is still streamed: the client reads the head and the first bytes before the backend has finished', async () => {
    let finish: () => void = () => undefined;
    const slow = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"first":');
      finish = () => res.end('"part"}');
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const streaming = await buildTestGateway(`http://127.0.0.1:${(slow.address() as AddressInfo).port}`, {
      policy: translatedPolicy,
    });
    try {
      const address = await streaming.app.listen({ port: 0, host: '127.0.0.1' });
      const res = await undiciRequest(`${address}/v2/orders/ord-1001`);
      expect(res.statusCode).toBe(200);
      const reader = res.body[Symbol.asyncIterator]();
      const first = await reader.next();
      expect(String(first.value)).toBe('{"first":');
      finish();
      let rest = '';
      for (let next = await reader.next(); next.done !== true; next = await reader.next()) rest += String(next.value);
      expect(rest).toBe('"part"}');
    } finally {
      finish();
      await streaming.app.close();
      await new Promise((resolve) => slow.close(resolve));
    }
  });
});

describe('a chain v1 → v2 → v3', () => {
  it('serves v1 and v2 from v3: requests forward oldest first, answers backward newest first', async () => {
    const seen: { url: string; requested: unknown; body: string }[] = [];
    const v3Only = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        seen.push({ url: req.url ?? '', requested: req.headers['api-version-requested'], body });
        if (!/^(\/api)?\/v3\//.test(req.url ?? ''))
          return void res
            .writeHead(404, { 'content-type': 'application/json' })
            .end('{"error":"not found","code":404}');
        const json = { 'content-type': 'application/json' };
        if (req.method === 'POST') return void res.writeHead(201, json).end(body);
        res
          .writeHead(200, json)
          .end(
            '{"id":"o-1","buyer":{"id":"user-1"},"amount_cents":1999,"state":"enabled","lines":[{"sku_code":"a"},{"sku_code":"b"}]}',
          );
      });
    });
    await new Promise<void>((resolve) => v3Only.listen(0, '127.0.0.1', resolve));
    const retired = { status: 'deprecated', announced: '2026-06-01', sunset: '2027-01-01T00:00:00Z' };
    const chained = await buildTestGateway(`http://127.0.0.1:${(v3Only.address() as AddressInfo).port}`, {
      policy: {
        default_version: 3,
        versions: [
          {
            version: 1,
            ...retired,
            successor: 2,
            changes: [
              { resource: '/orders/:id', op: 'rename', field: 'user_id', to: 'customer_id' },
              { resource: '/orders/:id', op: 'scale', field: 'total', to: 'total_cents', factor: 100 },
              { resource: '/orders/:id', op: 'remove', field: 'legacy', value: false },
            ],
          },
          {
            version: 2,
            ...retired,
            successor: 3,
            changes: [
              { resource: '/orders/:id', op: 'rename', field: 'customer_id', to: 'buyer' },
              { resource: '/orders/:id', op: 'rename', field: 'total_cents', to: 'amount_cents' },
              { resource: '/orders/:id', op: 'map', field: 'status', values: { active: 'enabled' } },
              { resource: '/orders/:id', op: 'rename', field: 'status', to: 'state' },
              { resource: '/orders/:id', op: 'rename', field: 'lines[].sku', to: 'lines[].sku_code' },
            ],
          },
          { version: 3, status: 'current' },
        ],
      },
    });
    try {
      const v1 = await chained.app.inject({ method: 'GET', url: '/v1/orders/o-1' });
      expect(v1.body).toBe(
        '{"id":"o-1","user_id":{"id":"user-1"},"total":19.99,"status":"active","lines":[{"sku":"a"},{"sku":"b"}],"legacy":false}',
      );
      expect(v1.headers['api-version']).toBe('1');
      const v2 = await chained.app.inject({ method: 'GET', url: '/api/v2/orders/o-1' });
      expect(v2.body).toBe(
        '{"id":"o-1","customer_id":{"id":"user-1"},"total_cents":1999,"status":"active","lines":[{"sku":"a"},{"sku":"b"}]}',
      );
      const posted = await chained.app.inject({
        method: 'POST',
        url: '/v1/orders/o-1',
        headers: { 'content-type': 'application/json' },
        payload: '{"user_id":"u","total":0.1,"status":"active","legacy":true,"lines":[{"sku":"c"}]}',
      });
      expect(seen.map(({ url, requested }) => [url, requested])).toEqual([
        ['/v3/orders/o-1', '1'],
        ['/api/v3/orders/o-1', '2'],
        ['/v3/orders/o-1', '1'],
      ]);
      expect(seen[2]?.body).toBe('{"buyer":"u","amount_cents":10,"state":"enabled","lines":[{"sku_code":"c"}]}');
      expect(posted.body).toBe('{"user_id":"u","total":0.1,"status":"active","lines":[{"sku":"c"}],"legacy":false}');
    } finally {
      await chained.app.close();
      await new Promise((resolve) => v3Only.close(resolve));
    }
  });
});
