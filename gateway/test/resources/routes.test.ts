// The catch-all route of the versioned resources: every form of every resource the policy names, the policy's
// answer (version, headers, 400/406/410) and the forwarding of what it serves.
import { beforeEach, describe, expect, it } from 'vitest';
import {
  V1_LIFECYCLE_LINKS,
  V1_SUNSET,
  buildTestGateway,
  lifecyclePolicyFile,
  stubbedGatewayPerTest,
} from '../support/helpers.js';

const fixture = stubbedGatewayPerTest();

const request = (method: string, url: string, headers: Record<string, string> = {}, payload?: string) =>
  fixture.gateway.app.inject({ method: method as 'GET', url, headers, ...(payload === undefined ? {} : { payload }) });
const get = (url: string, headers: Record<string, string> = {}) => request('GET', url, headers);
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
    ['/v1/orders/ord-1001', {}, '/v1/orders/ord-1001', '</v2/orders/ord-1001>; rel="successor-version"', 'API-Version'],
    [
      '/api/v1/orders/ord-1001',
      {},
      '/api/v1/orders/ord-1001',
      '</api/v2/orders/ord-1001>; rel="successor-version"',
      'API-Version',
    ],
    [
      '/orders/ord-1001',
      { 'api-version': '1' },
      '/v1/orders/ord-1001',
      '</v2/orders/ord-1001>; rel="successor-version"',
      'API-Version',
    ],
    // Naming no version, the answer depends on the key (a consumer's pin): docs/consumers.md#pins.
    [
      '/orders/ord-1001',
      {},
      '/v1/orders/ord-1001',
      '</v2/orders/ord-1001>; rel="successor-version"',
      'API-Version, API-Key',
    ],
  ])('GET %s %j → 200 from backend %s with the deprecation headers', async (url, headers, upstream, link, vary) => {
    const res = await get(url, headers);
    expect(res.statusCode).toBe(200);
    expect(res.json<{ url: string }>().url).toBe(upstream);
    expect(res.headers).toMatchObject({ vary, ...DEPRECATION_V1, link });
  });

  it.each([
    ['/v1/orders/a%3Eb', '</v2/orders/a%3Eb>'],
    ['/v1/orders/a%3eb', '</v2/orders/a%3Eb>'],
    ['/v1/orders/a>b;rel=x', '</v2/orders/a%3Eb%3Brel%3Dx>'],
    ['/v1/orders/a%20b', '</v2/orders/a%20b>'],
    ['/v1/orders/caf%c3%a9', '</v2/orders/caf%C3%A9>'],
    ['/v1/orders/ord-1001.json~x_y', '</v2/orders/ord-1001.json~x_y>'],
  ])('links %s to its successor with every segment percent-encoded: %s', async (url, target) => {
    const res = await get(url);
    expect(res.headers.link).toBe(`${target}; rel="successor-version"`);
  });

  it('passes the backend 404s through with the deprecation headers (JSON bare, text/plain under /api)', async () => {
    const bare = await get('/v1/orders/missing');
    expect(bare.statusCode).toBe(404);
    expect(bare.json()).toEqual({ error: 'order not found', code: 404 });
    expect(bare.headers).toMatchObject({
      vary: 'API-Version',
      ...DEPRECATION_V1,
      link: '</v2/orders/missing>; rel="successor-version"',
    });
    const api = await get('/api/v1/orders/missing');
    expect(api.statusCode).toBe(404);
    expect(api.headers['content-type']).toBe('text/plain');
    expect(api.body).toBe('order not found');
    expect(api.headers).toMatchObject({
      vary: 'API-Version',
      ...DEPRECATION_V1,
      link: '</api/v2/orders/missing>; rel="successor-version"',
    });
  });

  it('keeps the policy in charge of version headers and merges the backend Vary', async () => {
    const res = await get('/v2/orders/varied');
    expect(res.headers.vary).toBe('Accept-Encoding, API-Version');
    expect(res.headers).not.toHaveProperty('deprecation');
  });

  it('serves v1 like a current version before its announcement', async () => {
    fixture.gateway.setNow(Date.parse('2026-05-31T00:00:00Z'));
    const res = await get('/v1/orders/ord-1001');
    expect(res.statusCode).toBe(200);
    expect(res.headers.vary).toBe('API-Version');
    expect(res.headers).not.toHaveProperty('deprecation');
    expect(res.headers).not.toHaveProperty('link');
  });

  it('answers HEAD like GET', async () => {
    const res = await fixture.gateway.app.inject({ method: 'HEAD', url: '/v1/orders/ord-1001' });
    expect(res.statusCode).toBe(200);
    expect(res.headers).toMatchObject({ vary: 'API-Version', ...DEPRECATION_V1 });
    expect(fixture.stub.seen.at(-1)?.method).toBe('HEAD');
  });
});

describe('orders: what the policy refuses', () => {
  it('answers an unknown path version with the JSON 404', async () => {
    for (const url of ['/v9/orders/ord-1001', '/v0/orders/ord-1001', '/api/v3/orders/x', '/vx/orders/x']) {
      const res = await get(url);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'not found', code: 404 });
    }
    expect(fixture.stub.seen).toHaveLength(0);
  });

  it.each(['3', '0', 'abc', '1.0', '2, 1', '', '01'])(
    'answers API-Version %j with 406 unsupported_version and Vary',
    async (value) => {
      const res = await get('/orders/ord-1001', { 'api-version': value });
      expect(res.statusCode).toBe(406);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers.vary).toBe('API-Version');
      expect(res.json()).toEqual({ error: 'unsupported_version', code: 406, details: 'supported versions: 1, 2' });
      expect(fixture.stub.seen).toHaveLength(0);
    },
  );

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
    expect(fixture.stub.seen).toHaveLength(0);
  });

  it(
    'answers 410 version_removed from the sunset instant on, with Vary, Sunset and Link, without calling the ' +
      'backend',
    async () => {
      fixture.gateway.setNow(V1_SUNSET - 1);
      expect((await get('/v1/orders/ord-1001')).statusCode).toBe(200);
      fixture.stub.seen.length = 0;
      fixture.gateway.setNow(V1_SUNSET);
      for (const [url, headers, link, vary] of [
        ['/v1/orders/ord-1001', {}, '</v2/orders/ord-1001>; rel="successor-version"', 'API-Version'],
        ['/api/v1/orders/ord-1001', {}, '</api/v2/orders/ord-1001>; rel="successor-version"', 'API-Version'],
        ['/orders/ord-1001', { 'api-version': '1' }, '</v2/orders/ord-1001>; rel="successor-version"', 'API-Version'],
        ['/orders/ord-1001', {}, '</v2/orders/ord-1001>; rel="successor-version"', 'API-Version, API-Key'],
      ] as const) {
        const res = await get(url, headers);
        expect(res.statusCode).toBe(410);
        expect(res.json()).toEqual({
          error: 'version_removed',
          code: 410,
          details: 'version 1 was removed on Fri, 01 Jan 2027 00:00:00 GMT; use version 2',
        });
        expect(res.headers).toMatchObject({ vary, sunset: 'Fri, 01 Jan 2027 00:00:00 GMT', link });
      }
      expect(fixture.stub.seen).toHaveLength(0);
      expect((await get('/v2/orders/ord-1001')).statusCode).toBe(200);
    },
  );
});

describe('versioned resources from the policy file', () => {
  beforeEach(async () => {
    await fixture.gateway.app.close();
    fixture.gateway = await buildTestGateway(fixture.stub.url, { policy: lifecyclePolicyFile });
  });

  it.each([
    ['/v2/orders?page=2', {}, '/v2/orders?page=2'],
    ['/api/v2/orders', {}, '/api/v2/orders'],
    ['/orders?page=2', { 'api-version': '2' }, '/v2/orders?page=2'],
  ])(
    'forwards the second resource %s %j to the backend as %s, whose 404 carries the version headers',
    async (url, headers, upstream) => {
      const res = await get(url, headers);
      expect(fixture.stub.seen.at(-1)?.url).toBe(upstream);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'not found', code: 404 });
      expect(res.headers).toMatchObject({
        vary: 'API-Version',
        'api-version': '2',
        'api-supported-versions': '2',
        'api-deprecated-versions': '1',
      });
    },
  );

  it("links the second resource to its successor under the request's own prefix", async () => {
    const res = await get('/api/v1/orders');
    expect(res.headers.link).toBe(`</api/v2/orders>; rel="successor-version"${V1_LIFECYCLE_LINKS}`);
    expect((await get('/orders')).headers.link).toBe(`</v2/orders>; rel="successor-version"${V1_LIFECYCLE_LINKS}`);
  });

  it(
    "forwards every method with its body; the backend's 405 comes back with Allow and the version " + 'headers',
    async () => {
      const res = await request('POST', '/v1/orders/ord-1001', { 'content-type': 'foo' }, '{"x":1}');
      expect(res.statusCode).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD');
      expect(res.headers).toMatchObject({
        'api-version': '1',
        deprecation: '@1780272000',
        sunset: 'Fri, 01 Jan 2027 00:00:00 GMT',
      });
      expect(fixture.stub.seen.at(-1)).toMatchObject({
        method: 'POST',
        url: '/v1/orders/ord-1001',
        headers: { 'content-type': 'foo' },
      });
      expect(fixture.stub.seen.at(-1)?.body.toString()).toBe('{"x":1}');
      const deleted = await request('DELETE', '/orders/ord-1001', { 'api-version': '2' });
      expect(deleted.statusCode).toBe(405);
      expect(fixture.stub.seen.at(-1)).toMatchObject({ method: 'DELETE', url: '/v2/orders/ord-1001' });
    },
  );

  it('serves /openapi.json as a versioned resource in its three forms', async () => {
    for (const [url, headers, upstream] of [
      ['/v1/openapi.json', {}, '/v1/openapi.json'],
      ['/api/v2/openapi.json', {}, '/api/v2/openapi.json'],
      ['/openapi.json', { 'api-version': '2' }, '/v2/openapi.json'],
    ] as const) {
      const res = await get(url, headers);
      expect(res.statusCode).toBe(200);
      expect(fixture.stub.seen.at(-1)?.url).toBe(upstream);
      expect(res.headers.vary).toBe('API-Version');
    }
  });

  it(
    'keeps the ordinary 404 for paths that are no resource and for unlisted path versions, and 405 on ' + '/versions',
    async () => {
      for (const url of ['/v9/orders/x', '/api/v3/orders', '/orders/x/y', '/v1/other', '/api/orders/x', '/']) {
        const res = await get(url);
        expect(res.statusCode, url).toBe(404);
        expect(res.json()).toEqual({ error: 'not found', code: 404 });
        expect(res.headers).not.toHaveProperty('api-supported-versions');
      }
      const post = await request('POST', '/versions', {}, '{}');
      expect(post.statusCode).toBe(405);
      expect(post.headers.allow).toBe('GET, HEAD');
      expect(fixture.stub.seen).toHaveLength(0);
    },
  );
});
