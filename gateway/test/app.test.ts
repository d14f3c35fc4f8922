import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TODAY, V1_SUNSET, buildTestGateway, type TestGateway } from './helpers.js';
import { startStubBackend, type StubBackend } from './stub-backend.js';

let stub: StubBackend;
let gateway: TestGateway;

beforeEach(async () => {
  stub = await startStubBackend();
  gateway = await buildTestGateway(stub.url);
});
afterEach(async () => {
  await gateway.app.close();
  await stub.close();
});

const get = (url: string, headers: Record<string, string> = {}) => gateway.app.inject({ method: 'GET', url, headers });
const DEPRECATION_V1 = { deprecation: 'true', sunset: 'Fri, 01 Jan 2027 00:00:00 GMT' };

describe('orders: the three forms', () => {
  it.each([
    ['/v2/orders/ord-1001?x=1', {}, '/v2/orders/ord-1001?x=1'],
    ['/api/v2/orders/ord-1001', {}, '/api/v2/orders/ord-1001'],
    ['/orders/ord-1001?x=1', { 'api-version': '2' }, '/v2/orders/ord-1001?x=1'],
    ['/v2/orders/ord-1001', { 'api-version': '2' }, '/v2/orders/ord-1001'],
  ])('GET %s %j → 200 from backend %s, Vary, no deprecation headers', async (url, headers, upstream) => {
    const res = await get(url, headers);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ method: 'GET', url: upstream, contentType: null, bodyBytes: 0 });
    expect(res.headers.vary).toBe('API-Version');
    expect(res.headers).not.toHaveProperty('deprecation');
    expect(res.headers).not.toHaveProperty('sunset');
    expect(res.headers).not.toHaveProperty('link');
  });

  it.each([
    ['/v1/orders/ord-1001', {}, '/v1/orders/ord-1001', '</v2/orders/ord-1001>; rel="successor-version"'],
    ['/api/v1/orders/ord-1001', {}, '/api/v1/orders/ord-1001', '</api/v2/orders/ord-1001>; rel="successor-version"'],
    ['/orders/ord-1001', { 'api-version': '1' }, '/v1/orders/ord-1001', '</v2/orders/ord-1001>; rel="successor-version"'],
    ['/orders/ord-1001', {}, '/v1/orders/ord-1001', '</v2/orders/ord-1001>; rel="successor-version"'],
  ])('GET %s %j → 200 from backend %s with the deprecation headers', async (url, headers, upstream, link) => {
    const res = await get(url, headers);
    expect(res.statusCode).toBe(200);
    expect(res.json<{ url: string }>().url).toBe(upstream);
    expect(res.headers).toMatchObject({ vary: 'API-Version', ...DEPRECATION_V1, link });
  });

  it('passes the backend 404s through with the deprecation headers (JSON bare, text/plain under /api)', async () => {
    const bare = await get('/v1/orders/missing');
    expect(bare.statusCode).toBe(404);
    expect(bare.json()).toEqual({ error: 'order not found', code: 404 });
    expect(bare.headers).toMatchObject({ vary: 'API-Version', ...DEPRECATION_V1, link: '</v2/orders/missing>; rel="successor-version"' });
    const api = await get('/api/v1/orders/missing');
    expect(api.statusCode).toBe(404);
    expect(api.headers['content-type']).toBe('text/plain');
    expect(api.body).toBe('order not found');
    expect(api.headers).toMatchObject({ vary: 'API-Version', ...DEPRECATION_V1, link: '</api/v2/orders/missing>; rel="successor-version"' });
  });

  it('keeps the policy in charge of version headers and merges the backend Vary', async () => {
    const res = await get('/v2/orders/varied');
    expect(res.headers.vary).toBe('Accept-Encoding, API-Version');
    expect(res.headers).not.toHaveProperty('deprecation');
  });

  it('serves v1 like a current version before its announcement', async () => {
    gateway.setNow(Date.parse('2026-05-31T00:00:00Z'));
    const res = await get('/v1/orders/ord-1001');
    expect(res.statusCode).toBe(200);
    expect(res.headers.vary).toBe('API-Version');
    expect(res.headers).not.toHaveProperty('deprecation');
    expect(res.headers).not.toHaveProperty('link');
  });

  it('answers HEAD like GET', async () => {
    const res = await gateway.app.inject({ method: 'HEAD', url: '/v1/orders/ord-1001' });
    expect(res.statusCode).toBe(200);
    expect(res.headers).toMatchObject({ vary: 'API-Version', ...DEPRECATION_V1 });
    expect(stub.seen.at(-1)?.method).toBe('HEAD');
  });
});

describe('orders: what the policy refuses', () => {
  it('answers an unknown path version with the JSON 404', async () => {
    for (const url of ['/v9/orders/ord-1001', '/v0/orders/ord-1001', '/api/v3/orders/x', '/vx/orders/x']) {
      const res = await get(url);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'not found', code: 404 });
    }
    expect(stub.seen).toHaveLength(0);
  });

  it.each(['3', '0', 'abc', '1.0', '2, 1', '', '01'])('answers API-Version %j with 406 unsupported_version and Vary', async (value) => {
    const res = await get('/orders/ord-1001', { 'api-version': value });
    expect(res.statusCode).toBe(406);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers.vary).toBe('API-Version');
    expect(res.json()).toEqual({ error: 'unsupported_version', code: 406, details: 'supported versions: 1, 2' });
    expect(stub.seen).toHaveLength(0);
  });

  it.each([
    ['/v1/orders/ord-1001', '2'],
    ['/api/v2/orders/ord-1001', '1'],
    ['/v2/orders/ord-1001', 'abc'],
    ['/v2/orders/ord-1001', ''],
  ])('answers %s with API-Version %j with 400 conflicting_version', async (url, value) => {
    const res = await get(url, { 'api-version': value });
    expect(res.statusCode).toBe(400);
    expect(res.headers.vary).toBe('API-Version');
    expect(res.json<{ error: string }>().error).toBe('conflicting_version');
    expect(res.json()).toMatchObject({ code: 400 });
    expect(stub.seen).toHaveLength(0);
  });

  it('answers 410 version_removed from the sunset instant on, with Vary, Sunset and Link, without calling the backend', async () => {
    gateway.setNow(V1_SUNSET - 1);
    expect((await get('/v1/orders/ord-1001')).statusCode).toBe(200);
    stub.seen.length = 0;
    gateway.setNow(V1_SUNSET);
    for (const [url, headers, link] of [
      ['/v1/orders/ord-1001', {}, '</v2/orders/ord-1001>; rel="successor-version"'],
      ['/api/v1/orders/ord-1001', {}, '</api/v2/orders/ord-1001>; rel="successor-version"'],
      ['/orders/ord-1001', { 'api-version': '1' }, '</v2/orders/ord-1001>; rel="successor-version"'],
      ['/orders/ord-1001', {}, '</v2/orders/ord-1001>; rel="successor-version"'],
    ] as const) {
      const res = await get(url, headers);
      expect(res.statusCode).toBe(410);
      expect(res.json()).toEqual({
        error: 'version_removed',
        code: 410,
        details: 'version 1 was removed on Fri, 01 Jan 2027 00:00:00 GMT; use version 2',
      });
      expect(res.headers).toMatchObject({ vary: 'API-Version', sunset: 'Fri, 01 Jan 2027 00:00:00 GMT', link });
    }
    expect(stub.seen).toHaveLength(0);
    expect((await get('/v2/orders/ord-1001')).statusCode).toBe(200);
  });
});

describe('backend failures', () => {
  it('answers 502 bad gateway, without internal addresses, when the backend refuses connections', async () => {
    await stub.close();
    for (const url of ['/v1/orders/ord-1001', '/api/users']) {
      const res = await get(url);
      expect(res.statusCode).toBe(502);
      expect(res.json()).toEqual({ error: 'bad gateway', code: 502 });
      expect(res.body).not.toContain('127.0.0.1');
    }
    expect((await get('/v1/orders/ord-1001')).headers).toMatchObject({ vary: 'API-Version', ...DEPRECATION_V1 });
  });

  it('answers 504 gateway timeout when the backend does not answer within BACKEND_TIMEOUT_MS', async () => {
    await gateway.app.close();
    gateway = await buildTestGateway(stub.url, { backendTimeoutMs: 150 });
    stub.delayMs = 5_000;
    for (const url of ['/v2/orders/ord-1001', '/api/users']) {
      const started = Date.now();
      const res = await get(url);
      expect(res.statusCode).toBe(504);
      expect(res.json()).toEqual({ error: 'gateway timeout', code: 504 });
      // The 150 ms limit, not the stub's answer at 5 s: undici checks its timeouts on a ~0.5 s tick, so the 504
      // comes within about a second of the limit on a quiet machine; 3 s leaves a loaded one room.
      expect(Date.now() - started).toBeGreaterThanOrEqual(150);
      expect(Date.now() - started).toBeLessThan(3_000);
    }
  });

  it('does not retry a backend 503', async () => {
    const res = await get('/v2/orders/unavailable');
    expect(res.statusCode).toBe(503);
    expect(stub.seen).toHaveLength(1);
  });
});

describe('request ids and forwarding headers', () => {
  it('keeps a sane X-Request-Id, forwards it and echoes it', async () => {
    const res = await get('/v2/orders/ord-1001', { 'x-request-id': 'client-id-42' });
    expect(res.headers['x-request-id']).toBe('client-id-42');
    expect(stub.seen[0]?.headers['x-request-id']).toBe('client-id-42');
  });

  it('replaces an unsafe X-Request-Id with a generated one, sent to the backend too', async () => {
    for (const sent of ['x'.repeat(129), 'has space']) {
      const res = await get('/api/users', { 'x-request-id': sent });
      const id = res.headers['x-request-id'];
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(stub.seen.at(-1)?.headers['x-request-id']).toBe(id);
    }
    expect((await get('/v9/orders/x')).headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sets X-Forwarded-For, -Proto and -Host and keeps the client\'s Host out of the upstream Host', async () => {
    await get('/api/users', { host: 'api.example.com', 'x-forwarded-for': '203.0.113.9' });
    const headers = stub.seen[0]?.headers;
    expect(headers?.['x-forwarded-for']).toBe('203.0.113.9, 127.0.0.1');
    expect(headers?.['x-forwarded-proto']).toBe('http');
    expect(headers?.['x-forwarded-host']).toBe('api.example.com');
    expect(headers?.host).toBe(new URL(stub.url).host);
  });
});

describe('users: proxied unchanged', () => {
  it('passes method, path, query, body and Content-Type through', async () => {
    const res = await gateway.app.inject({
      method: 'POST',
      url: '/api/users?trace=1',
      headers: { 'content-type': 'application/json' },
      payload: '{"name":"Ada","email":"ada@example.com"}',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ method: 'POST', url: '/api/users?trace=1', contentType: 'application/json', bodyBytes: 40 });
    expect(stub.seen[0]?.body.toString()).toBe('{"name":"Ada","email":"ada@example.com"}');
    expect(res.headers).not.toHaveProperty('vary');
  });

  it('passes an Idempotency-Key through byte for byte (the backend owns the rule)', async () => {
    stub.seen.length = 0;
    const key = '"8e03978e-40d5-43e8-bc93-6894a57f9324:~!"';
    const res = await gateway.app.inject({ method: 'POST', url: '/api/users', headers: { 'idempotency-key': key }, payload: '{"name":"Ada","email":"ada@example.com"}' });
    expect(res.statusCode).toBe(200);
    expect(stub.seen.map((request) => request.headers['idempotency-key'])).toEqual([key]);
  });

  it.each(['foo', 'application/x-www-form-urlencoded', 'text/plain; charset=utf-8', 'garbage/;;'])(
    'streams a body with Content-Type %j to the backend untouched instead of answering 415',
    async (contentType) => {
      const res = await gateway.app.inject({ method: 'PUT', url: '/api/users/user-1', headers: { 'content-type': contentType }, payload: '{"name":"x"}' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ method: 'PUT', url: '/api/users/user-1', contentType, bodyBytes: 12 });
    },
  );

  it('passes the query string byte for byte, repeated and percent-encoded keys included', async () => {
    const res = await gateway.app.inject({ method: 'GET', url: '/api/users/user-1?a=1&a=2&q=%20x%2B&flag' });
    expect(res.statusCode).toBe(200);
    expect(res.json<{ url: string }>().url).toBe('/api/users/user-1?a=1&a=2&q=%20x%2B&flag');
  });

  it('streams a body larger than 1 MiB to the backend (the backend owns the limit)', async () => {
    const payload = `{"name":"${'a'.repeat(1_048_576)}"}`;
    const res = await gateway.app.inject({ method: 'POST', url: '/api/users', headers: { 'content-type': 'application/json' }, payload });
    expect(res.statusCode).toBe(200);
    expect(res.json<{ bodyBytes: number }>().bodyBytes).toBe(payload.length);
  });

  it('passes the backend 405 and its Allow header through', async () => {
    const res = await gateway.app.inject({ method: 'PATCH', url: '/api/users', payload: '{}' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, POST');
    expect(res.json()).toEqual({ error: 'method not allowed', code: 405 });
  });

  it('proxies /api/users/ paths only', async () => {
    expect((await get('/api/users/user-1/orders?x=1')).json()).toMatchObject({ url: '/api/users/user-1/orders?x=1' });
    expect((await get('/api/usersx')).statusCode).toBe(404);
    expect((await get('/api/other')).statusCode).toBe(404);
  });
});

describe('metrics and consumer log', () => {
  const metricLines = async (name: string) =>
    (await gateway.registry.metrics()).split('\n').filter((line) => line.startsWith(`${name}{`));

  it('counts order requests per version, deprecation, selection and status', async () => {
    await get('/v1/orders/ord-1001');
    await get('/v1/orders/ord-1001');
    await get('/orders/ord-1001', { 'api-version': '2' });
    await get('/orders/ord-1001');
    await get('/orders/ord-1001', { 'api-version': 'abc' });
    await get('/v2/orders/ord-1001', { 'api-version': '1' });
    await get('/api/users');
    gateway.setNow(V1_SUNSET);
    await get('/api/v1/orders/ord-1001');
    expect((await metricLines('api_version_requests_total')).sort()).toEqual(
      [
        'api_version_requests_total{version="1",deprecated="true",selected_by="path",status_code="200"} 2',
        'api_version_requests_total{version="2",deprecated="false",selected_by="header",status_code="200"} 1',
        'api_version_requests_total{version="1",deprecated="true",selected_by="default",status_code="200"} 1',
        'api_version_requests_total{version="invalid",deprecated="false",selected_by="header",status_code="406"} 1',
        'api_version_requests_total{version="invalid",deprecated="false",selected_by="path",status_code="400"} 1',
        'api_version_requests_total{version="1",deprecated="true",selected_by="path",status_code="410"} 1',
      ].sort(),
    );
    expect(await metricLines('api_version_sunset_timestamp_seconds')).toEqual([`api_version_sunset_timestamp_seconds{version="1"} ${V1_SUNSET / 1000}`]);
    expect(await metricLines('http_requests_total')).toContain('http_requests_total{method="GET",route="/v1/orders/:id",status_code="200"} 2');
  });

  it('logs one "deprecated api version used" line per request on a deprecated or removed version', async () => {
    await get('/v1/orders/ord-1001', { 'user-agent': 'shop-app/3.1', 'x-client-id': 'shop' });
    await get('/orders/ord-1001', { 'user-agent': 'curl/8' });
    await get('/v2/orders/ord-1001', { 'user-agent': 'new-app' });
    gateway.setNow(V1_SUNSET);
    await get('/api/v1/orders/x', { 'user-agent': 'late-app' });
    const lines = gateway.logs.filter((line) => line.msg === 'deprecated api version used');
    expect(lines.map(({ version, route, status, userAgent, clientId, selectedBy }) => ({ version, route, status, userAgent, clientId, selectedBy }))).toEqual([
      { version: 1, route: '/v1/orders/:id', status: 200, userAgent: 'shop-app/3.1', clientId: 'shop', selectedBy: 'path' },
      { version: 1, route: '/orders/:id', status: 200, userAgent: 'curl/8', clientId: undefined, selectedBy: 'default' },
      { version: 1, route: '/api/v1/orders/:id', status: 410, userAgent: 'late-app', clientId: undefined, selectedBy: 'path' },
    ]);
    expect(lines[1]).not.toHaveProperty('clientId');
    expect(lines[0]?.level).toBe(30);
    expect(typeof lines[0]?.reqId).toBe('string');
  });

  it('does not log consumers of a version before its announcement', async () => {
    gateway.setNow(Date.parse('2026-01-01T00:00:00Z'));
    await get('/v1/orders/ord-1001');
    expect(gateway.logs.filter((line) => line.msg === 'deprecated api version used')).toHaveLength(0);
    gateway.setNow(TODAY);
  });
});
