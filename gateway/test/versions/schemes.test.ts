import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  TODAY,
  V1_SUNSET,
  at,
  buildTestGateway,
  designPolicyFile,
  lifecyclePolicyFile,
  type TestGateway,
} from '../support/helpers.js';
import { startStubBackend, type StubBackend } from '../support/stub-backend.js';

/** The lifecycle policy (brownouts, RFC 9745 date form, a second resource) with every scheme on. */
const everyScheme = { ...lifecyclePolicyFile, schemes: ['path', 'header', 'query', 'media_type'] };
const BROWNOUT_START = at('2026-12-01T10:00:00Z');
const V1_LINK =
  '</v2/orders/ord-1001>; rel="successor-version", <https://example.com/changelog/v1>; rel="deprecation"; ' +
  'type="text/html", <https://example.com/sunset-policy>; rel="sunset"';
const mediaType = (version: string) => `application/vnd.version-router.v${version}+json`;

let stub: StubBackend;
let gateway: TestGateway;

beforeEach(async () => {
  stub = await startStubBackend();
});
afterEach(async () => {
  await gateway.app.close();
  await stub.close();
});

const get = (url: string, headers: Record<string, string> = {}) => gateway.app.inject({ method: 'GET', url, headers });

/** One request per scheme naming `version` of /orders/ord-1001, and the metric label it counts under. */
const bySchemes = (version: string): [string, string, Record<string, string>][] => [
  ['path', `/v${version}/orders/ord-1001`, {}],
  ['header', '/orders/ord-1001', { 'api-version': version }],
  ['query', `/orders/ord-1001?version=${version}`, {}],
  ['media_type', '/orders/ord-1001', { accept: mediaType(version) }],
];

describe('every scheme in every phase', () => {
  beforeEach(async () => {
    gateway = await buildTestGateway(stub.url, { policy: everyScheme });
  });

  it.each(bySchemes('2'))(
    'serves v2 by the %s scheme at /v2/orders/ord-1001, with the discovery headers and Vary on both request headers',
    async (_scheme, url, headers) => {
      const res = await get(url, headers);
      expect(res.statusCode).toBe(200);
      expect(stub.seen.at(-1)?.url).toBe('/v2/orders/ord-1001');
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers).toMatchObject({
        vary: 'API-Version, Accept',
        'api-version': '2',
        'api-supported-versions': '2',
        'api-deprecated-versions': '1',
      });
      expect(res.headers).not.toHaveProperty('deprecation');
    },
  );

  it.each(bySchemes('1'))(
    'answers v1 by the %s scheme as its phase says: current, deprecated, browned out, removed',
    async (scheme, url, headers) => {
      gateway.setNow(at('2026-05-01T00:00:00Z'));
      const before = await get(url, headers);
      expect(before.statusCode).toBe(200);
      expect(before.headers).toMatchObject({ 'api-version': '1', 'api-supported-versions': '1, 2' });
      expect(before.headers).not.toHaveProperty('deprecation');

      gateway.setNow(TODAY);
      const deprecated = await get(url, headers);
      expect(deprecated.statusCode).toBe(200);
      expect(stub.seen.at(-1)?.url).toBe('/v1/orders/ord-1001');
      expect(deprecated.headers).toMatchObject({
        'api-version': '1',
        deprecation: '@1780272000',
        sunset: 'Fri, 01 Jan 2027 00:00:00 GMT',
        link: V1_LINK,
      });

      stub.seen.length = 0;
      gateway.setNow(BROWNOUT_START);
      const brownout = await get(url, headers);
      expect(brownout.statusCode).toBe(410);
      expect(brownout.json()).toMatchObject({ error: 'version_brownout', code: 410 });
      expect(brownout.headers).toMatchObject({
        'retry-after': 'Tue, 01 Dec 2026 12:00:00 GMT',
        deprecation: '@1780272000',
        link: V1_LINK,
      });

      gateway.setNow(V1_SUNSET);
      const removed = await get(url, headers);
      expect(removed.statusCode).toBe(410);
      expect(removed.json()).toEqual({
        error: 'version_removed',
        code: 410,
        details: 'version 1 was removed on Fri, 01 Jan 2027 00:00:00 GMT; use version 2',
      });
      expect(removed.headers).toMatchObject({
        vary: 'API-Version, Accept',
        'api-supported-versions': '2',
        sunset: 'Fri, 01 Jan 2027 00:00:00 GMT',
        link: V1_LINK,
      });
      expect(stub.seen).toHaveLength(0);

      expect(await gateway.metricLines('api_version_requests_total')).toEqual([
        `api_version_requests_total{version="1",deprecated="false",selected_by="${scheme}",status_code="200"} 1`,
        `api_version_requests_total{version="1",deprecated="true",selected_by="${scheme}",status_code="200"} 1`,
        `api_version_requests_total{version="1",deprecated="true",selected_by="${scheme}",status_code="410"} 2`,
      ]);
    },
  );

  it('lists the consumers of v1 whichever scheme they use', async () => {
    for (const [scheme, url, headers] of bySchemes('1'))
      expect((await get(url, { ...headers, 'x-client-id': `by-${scheme}` })).statusCode).toBe(200);
    const consumers = await (await gateway.admin()).inject({ method: 'GET', url: '/consumers' });
    const names = consumers
      .json<{ versions: { version: number; consumers: { consumer: string }[] }[] }>()
      .versions[0]?.consumers.map(({ consumer }) => consumer);
    expect(names?.sort()).toEqual(['by-header', 'by-media_type', 'by-path', 'by-query']);
  });

  it('reads the media type case-insensitively and among other media ranges', async () => {
    for (const accept of ['application/VND.Version-Router.V2+JSON', `text/plain;q=0.5, ${mediaType('2')};q=0.9, */*`]) {
      const res = await get('/orders/ord-1001', { accept });
      expect(res.statusCode).toBe(200);
      expect(res.headers['api-version']).toBe('2');
    }
  });
});

describe('conflicts between schemes', () => {
  beforeEach(async () => {
    gateway = await buildTestGateway(stub.url, { policy: everyScheme });
  });

  const conflicts: [string, string, Record<string, string>, string][] = [
    [
      'path',
      '/v2/orders/ord-1001',
      { 'api-version': '1' },
      'the path selects version 2; send no API-Version header or exactly "2"',
    ],
    [
      'path',
      '/v2/orders/ord-1001?version=1',
      {},
      'the path selects version 2; send no version query parameter or exactly "2"',
    ],
    [
      'path',
      '/v2/orders/ord-1001',
      { accept: mediaType('1') },
      `the path selects version 2; send no versioned media type in Accept or exactly ${mediaType('2')}`,
    ],
    [
      'header',
      '/orders/ord-1001?version=1',
      { 'api-version': '2' },
      'the API-Version header selects version 2; send no version query parameter or exactly "2"',
    ],
    [
      'header',
      '/orders/ord-1001',
      { 'api-version': '2', accept: mediaType('1') },
      `the API-Version header selects version 2; send no versioned media type in Accept or exactly ${mediaType('2')}`,
    ],
    [
      'query',
      '/orders/ord-1001?version=2',
      { accept: mediaType('1') },
      `the query parameter version selects version 2; send no versioned media type in Accept or exactly ` +
        `${mediaType('2')}`,
    ],
  ];

  it.each(conflicts)(
    'answers 400 conflicting_version when the %s and another scheme name different versions: %s %j',
    async (scheme, url, headers, details) => {
      const res = await get(url, headers);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'conflicting_version', code: 400, details });
      expect(res.headers).toMatchObject({
        vary: 'API-Version, Accept',
        'api-supported-versions': '2',
        'api-deprecated-versions': '1',
      });
      expect(res.headers).not.toHaveProperty('api-version');
      expect(stub.seen).toHaveLength(0);
      expect(await gateway.metricLines('api_version_requests_total')).toEqual([
        `api_version_requests_total{version="invalid",deprecated="false",selected_by="${scheme}",status_code="400"} 1`,
      ]);
    },
  );

  it('serves a request that names the same version in every scheme, and counts it under the path', async () => {
    const res = await get('/v2/orders/ord-1001?version=2', { 'api-version': '2', accept: mediaType('2') });
    expect(res.statusCode).toBe(200);
    expect(stub.seen.at(-1)?.url).toBe('/v2/orders/ord-1001');
    expect(await gateway.metricLines('api_version_requests_total')).toEqual([
      'api_version_requests_total{version="2",deprecated="false",selected_by="path",status_code="200"} 1',
    ]);
    const bare = await get('/orders/ord-1001?version=2', { 'api-version': '2', accept: mediaType('2') });
    expect(bare.statusCode).toBe(200);
    expect(stub.seen.at(-1)?.url).toBe('/v2/orders/ord-1001');
  });
});

describe('unknown and malformed versions', () => {
  beforeEach(async () => {
    gateway = await buildTestGateway(stub.url, { policy: everyScheme });
  });

  it.each([
    ['header', '/orders/ord-1001', { 'api-version': '7' }],
    ['header', '/orders/ord-1001', { 'api-version': 'two' }],
    ['query', '/orders/ord-1001?version=7', {}],
    ['query', '/orders/ord-1001?version=x', {}],
    ['query', '/orders/ord-1001?version=02', {}],
    ['query', '/orders/ord-1001?version=', {}],
    ['query', '/orders/ord-1001?version', {}],
    ['query', '/orders/ord-1001?version=1&version=2', {}],
    ['media_type', '/orders/ord-1001', { accept: mediaType('7') }],
    ['media_type', '/orders/ord-1001', { accept: mediaType('x') }],
    ['media_type', '/orders/ord-1001', { accept: 'application/vnd.version-router.v2' }],
    ['media_type', '/orders/ord-1001', { accept: 'application/vnd.version-router.v2+xml' }],
    ['media_type', '/orders/ord-1001', { accept: `${mediaType('1')}, ${mediaType('2')}` }],
  ])('answers 406 unsupported_version by the %s scheme: %s %j', async (scheme, url, headers) => {
    const res = await get(url, headers);
    expect(res.statusCode).toBe(406);
    expect(res.json()).toEqual({ error: 'unsupported_version', code: 406, details: 'supported versions: 1, 2' });
    expect(res.headers).toMatchObject({
      vary: 'API-Version, Accept',
      'api-supported-versions': '2',
      'api-deprecated-versions': '1',
    });
    expect(stub.seen).toHaveLength(0);
    expect(await gateway.metricLines('api_version_requests_total')).toEqual([
      `api_version_requests_total{version="invalid",deprecated="false",selected_by="${scheme}",status_code="406"} 1`,
    ]);
  });

  it('takes the same version twice in the query or the Accept header as one', async () => {
    expect((await get('/orders/ord-1001?version=2&version=2')).statusCode).toBe(200);
    expect((await get('/orders/ord-1001', { accept: `${mediaType('2')}, ${mediaType('2')};q=0.5` })).statusCode).toBe(
      200,
    );
  });

  it('keeps the 404 for a path version that is not listed, whatever the other schemes name', async () => {
    expect((await get('/v9/orders/ord-1001?version=2')).statusCode).toBe(404);
    expect((await get('/v9/orders/ord-1001', { accept: mediaType('2') })).statusCode).toBe(404);
  });
});

describe('the query scheme forwards the rest of the query as sent', () => {
  beforeEach(async () => {
    gateway = await buildTestGateway(stub.url, { policy: everyScheme });
  });

  it.each([
    ['/orders/ord-1001?version=2', '/v2/orders/ord-1001'],
    ['/orders/ord-1001?a=1&version=2&b=%2F%20x&c', '/v2/orders/ord-1001?a=1&b=%2F%20x&c'],
    ['/orders/ord-1001?q=a+b;c&&version=2&versions=3&z=%zz&e==', '/v2/orders/ord-1001?q=a+b;c&&versions=3&z=%zz&e=='],
    ['/orders?version=2&page=2', '/v2/orders?page=2'],
    ['/v2/orders?page=2&version=2', '/v2/orders?page=2'],
    ['/api/v2/orders?version=2', '/api/v2/orders'],
  ])('%s reaches the backend as %s', async (url, upstream) => {
    expect((await get(url)).headers['api-version']).toBe('2');
    expect(stub.seen.at(-1)?.url).toBe(upstream);
  });

  it(
    "annotates a deprecated version's OpenAPI document chosen by the query or the media type, as for the other " +
      'schemes',
    async () => {
      for (const [url, headers] of [
        ['/openapi.json?version=1', {}],
        ['/openapi.json', { accept: mediaType('1') }],
      ] as const) {
        const res = await get(url, headers);
        expect(stub.seen.at(-1)?.url).toBe('/v1/openapi.json');
        expect(res.json()).toMatchObject({ 'x-sunset': '2027-01-01T00:00:00.000Z', 'x-successor-version': 2 });
        expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
      }
    },
  );

  it('uses the query_parameter the policy names', async () => {
    await gateway.app.close();
    gateway = await buildTestGateway(stub.url, { policy: { ...everyScheme, query_parameter: 'api-version' } });
    const res = await get('/orders/ord-1001?api-version=2&version=1');
    expect(res.headers['api-version']).toBe('2');
    expect(stub.seen.at(-1)?.url).toBe('/v2/orders/ord-1001?version=1');
  });
});

describe('schemes that are not enabled', () => {
  it(
    'ignores a version query parameter and a vendor media type by default: forwarded as they came, to ' +
      'default_version',
    async () => {
      gateway = await buildTestGateway(stub.url, { policy: designPolicyFile });
      const res = await get('/orders/ord-1001?version=2', { accept: mediaType('2') });
      expect(res.statusCode).toBe(200);
      expect(res.headers).toMatchObject({ vary: 'API-Version, API-Key', 'api-version': '1' });
      expect(stub.seen.at(-1)).toMatchObject({
        url: '/v1/orders/ord-1001?version=2',
        headers: { accept: mediaType('2') },
      });
      expect((await get('/v2/orders/ord-1001?version=1', { accept: mediaType('1') })).statusCode).toBe(200);
    },
  );

  it(
    'ignores API-Version without the header scheme (no Vary then) and serves the bare path only while a scheme can ' +
      'choose there',
    async () => {
      gateway = await buildTestGateway(stub.url, { policy: { ...designPolicyFile, schemes: ['path', 'query'] } });
      const pathForm = await get('/v2/orders/ord-1001', { 'api-version': '1' });
      expect(pathForm.statusCode).toBe(200);
      expect(pathForm.headers).not.toHaveProperty('vary');
      expect((await get('/orders/ord-1001', { 'api-version': '2' })).headers['api-version']).toBe('1');
      await gateway.app.close();

      gateway = await buildTestGateway(stub.url, { policy: { ...designPolicyFile, schemes: ['path'] } });
      expect((await get('/orders/ord-1001')).statusCode).toBe(404);
      expect((await get('/v2/orders/ord-1001')).statusCode).toBe(200);
      await gateway.app.close();

      gateway = await buildTestGateway(stub.url, { policy: { ...designPolicyFile, schemes: ['media_type'] } });
      expect((await get('/v2/orders/ord-1001')).statusCode).toBe(404);
      const media = await get('/orders/ord-1001', { accept: mediaType('2') });
      expect(media.headers).toMatchObject({ vary: 'Accept', 'api-version': '2' });
    },
  );

  it('refuses a reload that enables an unknown scheme, and keeps the schemes in force', async () => {
    gateway = await buildTestGateway(stub.url, { policy: designPolicyFile });
    gateway.setNextPolicy({ ...designPolicyFile, schemes: ['path', 'query', 'matrix'] });
    const res = await (await gateway.admin()).inject({ method: 'POST', url: '/-/reload' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'invalid version policy',
      code: 400,
      details: 'invalid at schemes.2: must be one of "path", "header", "query", "media_type"',
    });
    expect((await get('/orders/ord-1001?version=2')).headers['api-version']).toBe('1');

    gateway.setNextPolicy({ ...designPolicyFile, schemes: ['path', 'header', 'query'] });
    expect((await (await gateway.admin()).inject({ method: 'POST', url: '/-/reload' })).statusCode).toBe(200);
    expect((await get('/orders/ord-1001?version=2')).headers['api-version']).toBe('2');
  });
});
