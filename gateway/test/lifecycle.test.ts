import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TODAY, V1_SUNSET, at, buildTestGateway, designPolicyFile, lifecyclePolicyFile, type TestGateway } from './helpers.js';
import { STUB_OPENAPI, startStubBackend, type StubBackend } from './stub-backend.js';

const lifecyclePolicy = lifecyclePolicyFile;
const BROWNOUT_START = at('2026-12-01T10:00:00Z');
const BROWNOUT_END = at('2026-12-01T12:00:00Z');
const V1_LINKS = ', <https://example.com/changelog/v1>; rel="deprecation"; type="text/html", <https://example.com/sunset-policy>; rel="sunset"';

let stub: StubBackend;
let gateway: TestGateway;

beforeEach(async () => {
  stub = await startStubBackend();
});
afterEach(async () => {
  await gateway.app.close();
  await stub.close();
});

const request = (method: string, url: string, headers: Record<string, string> = {}, payload?: string) =>
  gateway.app.inject({ method: method as 'GET', url, headers, ...(payload === undefined ? {} : { payload }) });
const get = (url: string, headers: Record<string, string> = {}) => request('GET', url, headers);
const metricLines = async (name: string) => (await gateway.registry.metrics()).split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));

describe('versioned resources from the policy file', () => {
  beforeEach(async () => {
    gateway = await buildTestGateway(stub.url, { policy: lifecyclePolicy });
  });

  it.each([
    ['/v2/orders?page=2', {}, '/v2/orders?page=2'],
    ['/api/v2/orders', {}, '/api/v2/orders'],
    ['/orders?page=2', { 'api-version': '2' }, '/v2/orders?page=2'],
  ])('forwards the second resource %s %j to the backend as %s, whose 404 carries the version headers', async (url, headers, upstream) => {
    const res = await get(url, headers);
    expect(stub.seen.at(-1)?.url).toBe(upstream);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'not found', code: 404 });
    expect(res.headers).toMatchObject({ vary: 'API-Version', 'api-version': '2', 'api-supported-versions': '2', 'api-deprecated-versions': '1' });
  });

  it('links the second resource to its successor under the request\'s own prefix', async () => {
    const res = await get('/api/v1/orders');
    expect(res.headers.link).toBe(`</api/v2/orders>; rel="successor-version"${V1_LINKS}`);
    expect((await get('/orders')).headers.link).toBe(`</v2/orders>; rel="successor-version"${V1_LINKS}`);
  });

  it('forwards every method with its body; the backend\'s 405 comes back with Allow and the version headers', async () => {
    const res = await request('POST', '/v1/orders/ord-1001', { 'content-type': 'foo' }, '{"x":1}');
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(res.headers).toMatchObject({ 'api-version': '1', deprecation: '@1780272000', sunset: 'Fri, 01 Jan 2027 00:00:00 GMT' });
    expect(stub.seen.at(-1)).toMatchObject({ method: 'POST', url: '/v1/orders/ord-1001', headers: { 'content-type': 'foo' } });
    expect(stub.seen.at(-1)?.body.toString()).toBe('{"x":1}');
    const deleted = await request('DELETE', '/orders/ord-1001', { 'api-version': '2' });
    expect(deleted.statusCode).toBe(405);
    expect(stub.seen.at(-1)).toMatchObject({ method: 'DELETE', url: '/v2/orders/ord-1001' });
  });

  it('serves /openapi.json as a versioned resource in its three forms', async () => {
    for (const [url, headers, upstream] of [
      ['/v1/openapi.json', {}, '/v1/openapi.json'],
      ['/api/v2/openapi.json', {}, '/api/v2/openapi.json'],
      ['/openapi.json', { 'api-version': '2' }, '/v2/openapi.json'],
    ] as const) {
      const res = await get(url, headers);
      expect(res.statusCode).toBe(200);
      expect(stub.seen.at(-1)?.url).toBe(upstream);
      expect(res.headers.vary).toBe('API-Version');
    }
  });

  it('keeps the ordinary 404 for paths that are no resource and for unlisted path versions, and 405 on /versions', async () => {
    for (const url of ['/v9/orders/x', '/api/v3/orders', '/orders/x/y', '/v1/other', '/api/orders/x', '/']) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toEqual({ error: 'not found', code: 404 });
      expect(res.headers).not.toHaveProperty('api-supported-versions');
    }
    const post = await request('POST', '/versions', {}, '{}');
    expect(post.statusCode).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    expect(stub.seen).toHaveLength(0);
  });
});

describe('discovery', () => {
  beforeEach(async () => {
    gateway = await buildTestGateway(stub.url, { policy: lifecyclePolicy });
  });

  it.each([
    ['before the announcement', at('2026-05-01T00:00:00Z'), { 'api-supported-versions': '1, 2' }, 200],
    ['while deprecated', TODAY, { 'api-supported-versions': '2', 'api-deprecated-versions': '1' }, 200],
    ['during a brownout', BROWNOUT_START, { 'api-supported-versions': '2', 'api-deprecated-versions': '1' }, 410],
    ['after the sunset', V1_SUNSET, { 'api-supported-versions': '2' }, 410],
  ])('lists supported and deprecated versions %s, on v1, v2, 400 and 406 answers alike', async (_when, now, lists, v1Status) => {
    gateway.setNow(now);
    const answers = [
      [await get('/v1/orders/ord-1001'), v1Status],
      [await get('/v2/orders/ord-1001'), 200],
      [await get('/v2/orders/missing'), 404],
      [await get('/v2/orders/ord-1001', { 'api-version': '1' }), 400],
      [await get('/orders/ord-1001', { 'api-version': '7' }), 406],
    ] as const;
    for (const [res, status] of answers) {
      expect(res.statusCode).toBe(status);
      expect(res.headers['api-supported-versions']).toBe(lists['api-supported-versions']);
      expect(res.headers['api-deprecated-versions']).toBe('api-deprecated-versions' in lists ? lists['api-deprecated-versions'] : undefined);
    }
  });

  it('echoes API-Version on what a version served (the backend\'s errors included), not on the gateway\'s refusals', async () => {
    expect((await get('/orders/ord-1001')).headers['api-version']).toBe('1');
    expect((await get('/orders/missing', { 'api-version': '2' })).headers['api-version']).toBe('2');
    expect((await get('/v2/orders/ord-1001', { 'api-version': '1' })).headers).not.toHaveProperty('api-version');
    expect((await get('/orders/x', { 'api-version': 'x' })).headers).not.toHaveProperty('api-version');
  });

  it('drops the backend\'s copies of every header the policy owns, keeps its Retry-After and merges its Vary', async () => {
    const res = await get('/v2/orders/varied');
    expect(res.headers).toMatchObject({ vary: 'Accept-Encoding, API-Version', 'api-version': '2', 'api-supported-versions': '2', 'retry-after': '120' });
    expect(res.headers).not.toHaveProperty('deprecation');
    expect(res.headers).not.toHaveProperty('sunset');
    expect(res.headers).not.toHaveProperty('link');
  });

  it('answers GET /versions with each version\'s phase at the time of the request, linking the changelog', async () => {
    const versionsAt = async (now: number) => {
      gateway.setNow(now);
      const res = await get('/versions');
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers.link).toBe('</changelog>; rel="alternate"; type="application/atom+xml"');
      return res.json<{ default_version: number; versions: { version: number; phase: string }[] }>();
    };
    const windows = [
      { start: '2026-12-01T10:00:00.000Z', end: '2026-12-01T12:00:00.000Z' },
      { start: '2026-12-08T10:00:00.000Z', end: '2026-12-08T16:00:00.000Z' },
    ];
    expect(await versionsAt(TODAY)).toEqual({
      default_version: 1,
      changelog: '/changelog',
      policy_sha256: expect.stringMatching(/^[0-9a-f]{12}$/) as string,
      versions: [
        {
          version: 1,
          phase: 'deprecated',
          announced: '2026-06-01T00:00:00.000Z',
          sunset: '2027-01-01T00:00:00.000Z',
          successor: 2,
          brownouts: windows,
          changes: '/versions/1/changes',
        },
        { version: 2, phase: 'current', announced: null, sunset: null, successor: null, brownouts: [] },
      ],
    });
    expect((await versionsAt(at('2026-05-31T23:59:59Z'))).versions.map(({ phase }) => phase)).toEqual(['current', 'current']);
    expect((await versionsAt(V1_SUNSET)).versions.map(({ phase }) => phase)).toEqual(['removed', 'current']);
  });
});

describe('RFC 9745 and RFC 8594 headers', () => {
  it('sends Deprecation: @<epoch> and the deprecation and sunset links with "date"', async () => {
    gateway = await buildTestGateway(stub.url, { policy: lifecyclePolicy });
    const res = await get('/v1/orders/ord-1001');
    expect(res.headers).toMatchObject({
      deprecation: '@1780272000',
      sunset: 'Fri, 01 Jan 2027 00:00:00 GMT',
      link: `</v2/orders/ord-1001>; rel="successor-version"${V1_LINKS}`,
    });
    gateway.setNow(V1_SUNSET);
    expect((await get('/v1/orders/ord-1001')).headers.link).toBe(`</v2/orders/ord-1001>; rel="successor-version"${V1_LINKS}`);
  });

  it('keeps Deprecation: true when the policy does not choose the date form', async () => {
    gateway = await buildTestGateway(stub.url);
    expect((await get('/v1/orders/ord-1001')).headers.deprecation).toBe('true');
  });
});

describe('brownouts', () => {
  beforeEach(async () => {
    gateway = await buildTestGateway(stub.url, { policy: lifecyclePolicy });
  });

  it('answers 410 version_brownout with Retry-After from the window start (inclusive) to its end (exclusive), without calling the backend', async () => {
    gateway.setNow(BROWNOUT_START - 1);
    expect((await get('/v1/orders/ord-1001')).statusCode).toBe(200);
    stub.seen.length = 0;
    for (const now of [BROWNOUT_START, BROWNOUT_END - 1]) {
      gateway.setNow(now);
      for (const [url, headers] of [
        ['/v1/orders/ord-1001', {}],
        ['/api/v1/orders/ord-1001', {}],
        ['/orders/ord-1001', {}],
        ['/orders/ord-1001', { 'api-version': '1' }],
      ] as const) {
        const res = await get(url, headers);
        expect(res.statusCode).toBe(410);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.json()).toEqual({
          error: 'version_brownout',
          code: 410,
          details: 'version 1 is browned out until Tue, 01 Dec 2026 12:00:00 GMT; it will be removed on Fri, 01 Jan 2027 00:00:00 GMT; use version 2',
        });
        expect(res.headers).toMatchObject({ 'retry-after': 'Tue, 01 Dec 2026 12:00:00 GMT', deprecation: '@1780272000', sunset: 'Fri, 01 Jan 2027 00:00:00 GMT' });
        expect(res.headers.link).toMatch(/^<(\/api)?\/v2\/orders\/ord-1001>; rel="successor-version"/);
      }
    }
    expect(stub.seen).toHaveLength(0);
    expect((await get('/v2/orders/ord-1001')).statusCode).toBe(200);
    gateway.setNow(BROWNOUT_END);
    expect((await get('/v1/orders/ord-1001')).statusCode).toBe(200);
  });

  it('counts brownout answers as 410 and shows the window in api_version_brownout_active', async () => {
    gateway.setNow(BROWNOUT_START);
    await get('/v1/orders/ord-1001');
    expect(await metricLines('api_version_requests_total')).toEqual([
      'api_version_requests_total{version="1",deprecated="true",selected_by="path",status_code="410"} 1',
    ]);
    expect(await metricLines('api_version_brownout_active')).toEqual(['api_version_brownout_active{version="1"} 1', 'api_version_brownout_active{version="2"} 0']);
    gateway.setNow(BROWNOUT_END);
    expect(await metricLines('api_version_brownout_active')).toEqual(['api_version_brownout_active{version="1"} 0', 'api_version_brownout_active{version="2"} 0']);
  });
});

describe('reloading the policy without a restart', () => {
  const withVersion3 = {
    ...designPolicyFile,
    resources: ['/orders/:id', '/openapi.json', '/invoices/:id'],
    versions: [...designPolicyFile.versions, { version: 3, status: 'current' }],
  };
  const reload = async () => (await gateway.admin()).inject({ method: 'POST', url: '/-/reload' });

  beforeEach(async () => {
    gateway = await buildTestGateway(stub.url);
  });

  it('serves a version and a resource added by POST /-/reload, and counts the reload', async () => {
    expect((await get('/v3/orders/ord-1001')).statusCode).toBe(404);
    expect((await get('/v3/invoices/inv-1')).statusCode).toBe(404);
    gateway.setNextPolicy(withVersion3);
    const res = await reload();
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ reloaded: true });

    const served = await get('/v3/orders/ord-1001');
    expect(served.statusCode).toBe(200);
    expect(served.headers).toMatchObject({ 'api-version': '3', 'api-supported-versions': '2, 3', 'api-deprecated-versions': '1' });
    expect((await get('/orders/inv-1', { 'api-version': '3' })).json<{ url: string }>().url).toBe('/v3/orders/inv-1');
    expect((await get('/api/v3/invoices/inv-1')).json<{ url: string }>().url).toBe('/api/v3/invoices/inv-1');
    expect((await get('/v1/orders/ord-1001', { 'api-version': '3' })).statusCode).toBe(400);
    expect(await metricLines('http_requests_total')).toContain('http_requests_total{method="GET",route="/api/v3/invoices/:id",status_code="200"} 1');
    expect(await metricLines('api_version_policy_reloads_total')).toEqual([
      'api_version_policy_reloads_total{result="success"} 1',
      'api_version_policy_reloads_total{result="failure"} 0',
    ]);
    expect(await metricLines('api_version_policy_last_reload_success')).toEqual(['api_version_policy_last_reload_success 1']);
    expect(gateway.logs.find((line) => line.msg === 'version policy reloaded')).toMatchObject({ level: 30, versions: [1, 2, 3] });
  });

  it('keeps the old policy on an invalid file: 400 invalid version policy with the reason, one error line, failure metrics', async () => {
    gateway.setNextPolicy({ ...designPolicyFile, versions: [{ ...designPolicyFile.versions[0], sunset: '2026-09-01T00:00:00Z' }, designPolicyFile.versions[1]] });
    const res = await reload();
    expect(res.statusCode).toBe(400);
    const reason =
      'invalid at versions.0.sunset: version 1: sunset 2026-09-01T00:00:00.000Z is less than 6 calendar months after announced 2026-06-01T00:00:00.000Z (earliest 2026-12-01T00:00:00.000Z)';
    expect(res.json()).toEqual({ error: 'invalid version policy', code: 400, details: reason });
    const errors = gateway.logs.filter((line) => line.level === 50);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ msg: 'version policy reload failed; the previous policy stays in force', reason });
    expect((await get('/v1/orders/ord-1001')).headers.sunset).toBe('Fri, 01 Jan 2027 00:00:00 GMT');
    expect(await metricLines('api_version_policy_reloads_total')).toContain('api_version_policy_reloads_total{result="failure"} 1');
    expect(await metricLines('api_version_policy_last_reload_success')).toEqual(['api_version_policy_last_reload_success 0']);

    gateway.setNextPolicy(designPolicyFile);
    expect((await reload()).statusCode).toBe(200);
    expect(await metricLines('api_version_policy_last_reload_success')).toEqual(['api_version_policy_last_reload_success 1']);
  });

  it('moves the sunset gauge with the reloaded policy', async () => {
    gateway.setNextPolicy({ ...designPolicyFile, versions: [{ ...designPolicyFile.versions[0], sunset: '2027-03-01T00:00:00Z' }, designPolicyFile.versions[1]] });
    await reload();
    expect(await metricLines('api_version_sunset_timestamp_seconds')).toEqual([`api_version_sunset_timestamp_seconds{version="1"} ${at('2027-03-01T00:00:00Z') / 1000}`]);
  });

  it('accepts POST only on /-/reload', async () => {
    const res = await (await gateway.admin()).inject({ method: 'GET', url: '/-/reload' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('POST');
  });
});

describe('the OpenAPI document of a deprecated version', () => {
  const ANNOTATED = {
    ...STUB_OPENAPI,
    'x-sunset': '2027-01-01T00:00:00.000Z',
    'x-successor-version': 2,
    paths: {
      '/orders/{id}': {
        summary: 'an order',
        get: { responses: { 200: { description: 'ok' } }, deprecated: true },
        delete: { deprecated: true, responses: {} },
      },
    },
  };

  beforeEach(async () => {
    gateway = await buildTestGateway(stub.url);
  });

  it('marks every operation deprecated and adds x-sunset and x-successor-version from the policy, in every form', async () => {
    for (const [url, headers] of [
      ['/v1/openapi.json', {}],
      ['/api/v1/openapi.json', {}],
      ['/openapi.json', {}],
      ['/openapi.json', { 'api-version': '1' }],
    ] as const) {
      const res = await get(url, headers);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual(ANNOTATED);
      expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
      expect(res.headers).toMatchObject({ deprecation: 'true', 'api-version': '1' });
    }
  });

  it('passes a current version\'s document through untouched, and a deprecated one before its announcement', async () => {
    const current = await get('/openapi.json', { 'api-version': '2' });
    expect(current.json()).toEqual(STUB_OPENAPI);
    gateway.setNow(at('2026-05-01'));
    expect((await get('/v1/openapi.json')).json()).toEqual(STUB_OPENAPI);
  });

  it('follows a reloaded policy: a later sunset shows in x-sunset at once', async () => {
    expect((await get('/v1/openapi.json')).json()).toMatchObject({ 'x-sunset': '2027-01-01T00:00:00.000Z' });
    gateway.setNextPolicy({ ...designPolicyFile, versions: [{ ...designPolicyFile.versions[0], sunset: '2027-03-01T00:00:00Z' }, designPolicyFile.versions[1]] });
    expect((await (await gateway.admin()).inject({ method: 'POST', url: '/-/reload' })).statusCode).toBe(200);
    expect((await get('/v1/openapi.json')).json()).toMatchObject({ 'x-sunset': '2027-03-01T00:00:00.000Z' });
  });

  it('answers HEAD without a body', async () => {
    const res = await request('HEAD', '/v1/openapi.json');
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
  });
});
