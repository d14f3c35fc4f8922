// A version's OpenAPI document, annotated on its way from the backend: the API-Key scheme, and a deprecated version's
// lifecycle.
import { compileErrors, validate } from '@readme/openapi-parser';
import type { OpenAPIV3_1 } from 'openapi-types';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ordersDocument, startDocumentBackend, type DocumentBackend } from '../support/documents.js';
import { consumerWithKey, createMemoryConsumerStore } from '../support/memory-store.js';
import { at, buildTestGateway, designPolicyFile, stubbedGatewayPerTest, type TestGateway } from '../support/helpers.js';
import { STUB_OPENAPI } from '../support/stub-backend.js';
import { ORDERS_V1_CHANGES } from '../support/orders-v1.js';

describe('the OpenAPI document of a deprecated version', () => {
  const fixture = stubbedGatewayPerTest();
  const request = (method: string, url: string, headers: Record<string, string> = {}, payload?: string) =>
    fixture.gateway.app.inject({
      method: method as 'GET',
      url,
      headers,
      ...(payload === undefined ? {} : { payload }),
    });
  const get = (url: string, headers: Record<string, string> = {}) => request('GET', url, headers);

  /** What the gateway adds to every version's document: the API-Key scheme, optional under the shipped policy. */
  const WITH_KEY_SCHEME = {
    ...STUB_OPENAPI,
    components: {
      securitySchemes: {
        ApiKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'API-Key' }) as unknown,
      },
    },
    security: [{ ApiKey: [] }, {}],
  };
  const deprecationHeaders = {
    Deprecation: { $ref: '#/components/headers/Deprecation' },
    Sunset: { $ref: '#/components/headers/Sunset' },
    Link: { $ref: '#/components/headers/Link' },
  };
  const gone = { $ref: '#/components/responses/VersionGone' };
  const ANNOTATED = {
    ...WITH_KEY_SCHEME,
    components: {
      ...WITH_KEY_SCHEME.components,
      headers: {
        Deprecation: {
          description: 'The version is deprecated (RFC 9745).',
          schema: { type: 'string' },
          example: 'true',
        },
        Sunset: {
          description: 'When the version is removed; from then on its requests are answered 410 (RFC 8594).',
          schema: { type: 'string' },
          example: 'Fri, 01 Jan 2027 00:00:00 GMT',
        },
        Link: {
          description:
            '`<…/v2/…>; rel="successor-version"`: the same resource in version 2; the policy\'s deprecation and ' +
            'sunset links besides.',
          schema: { type: 'string' },
        },
      },
      responses: {
        VersionGone: expect.objectContaining({
          description: expect.stringContaining('version_removed') as unknown,
        }) as unknown,
      },
    },
    'x-sunset': '2027-01-01T00:00:00.000Z',
    'x-successor-version': 2,
    paths: {
      '/v1/orders/{id}': {
        summary: 'an order',
        get: { responses: { 200: { description: 'ok', headers: deprecationHeaders }, 410: gone }, deprecated: true },
        delete: { deprecated: true, responses: { 410: gone } },
      },
      // Unversioned: the same in every version, never deprecated.
      '/api/users': STUB_OPENAPI.paths['/api/users'],
    },
  };

  it(
    "marks the version's own operations deprecated with their 410 and headers, adds x-sunset and " +
      'x-successor-version from the policy, in every form',
    async () => {
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
    },
  );

  it(
    "marks nothing deprecated in a current version's document, nor in a deprecated one's before its " + 'announcement',
    async () => {
      const current = await get('/openapi.json', { 'api-version': '2' });
      expect(current.json()).toEqual(WITH_KEY_SCHEME);
      fixture.gateway.setNow(at('2026-05-01'));
      expect((await get('/v1/openapi.json')).json()).toEqual(WITH_KEY_SCHEME);
    },
  );

  it('follows a reloaded policy: a later sunset shows in x-sunset at once', async () => {
    expect((await get('/v1/openapi.json')).json()).toMatchObject({ 'x-sunset': '2027-01-01T00:00:00.000Z' });
    fixture.gateway.setNextPolicy({
      ...designPolicyFile,
      versions: [{ ...designPolicyFile.versions[0], sunset: '2027-03-01T00:00:00Z' }, designPolicyFile.versions[1]],
    });
    expect((await (await fixture.gateway.admin()).inject({ method: 'POST', url: '/-/reload' })).statusCode).toBe(200);
    expect((await get('/v1/openapi.json')).json()).toMatchObject({ 'x-sunset': '2027-03-01T00:00:00.000Z' });
  });

  it('answers HEAD without a body', async () => {
    const res = await request('HEAD', '/v1/openapi.json');
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
  });
});

describe('the API-Key scheme in the OpenAPI documents the gateway serves', () => {
  /** The shipped policy with `consumer_key: "required"` on v1; v2 keeps the default (optional). */
  const policy = {
    ...designPolicyFile,
    versions: [{ ...designPolicyFile.versions[0], consumer_key: 'required' }, designPolicyFile.versions[1]],
  };

  const API_KEY_SCHEME = {
    type: 'apiKey',
    in: 'header',
    name: 'API-Key',
    description:
      "A consumer key (`vr_<key id>_<secret>`) from the gateway's consumer registry. A key that is malformed, " +
      'unknown or revoked is answered 401 on every route; a key sent in the query string instead (`api_key`, ' +
      '`apiKey`, `key`, `token`) is answered 400 `API key belongs in the API-Key header`.',
  };

  let backend: DocumentBackend;
  let gateway: TestGateway | undefined;

  beforeAll(async () => {
    backend = await startDocumentBackend();
  });
  afterAll(async () => {
    await backend.close();
  });
  afterEach(async () => {
    await gateway?.app.close();
    gateway = undefined;
  });

  /** `url` as a fresh gateway on `policy` serves it to a consumer with a key. */
  async function served(url: string): Promise<OpenAPIV3_1.Document> {
    await gateway?.app.close();
    const store = createMemoryConsumerStore();
    const { key } = await consumerWithKey(store, 'acme');
    gateway = await buildTestGateway(backend.url, { policy, consumerStore: store });
    const res = await gateway.app.inject({ url, headers: { 'api-key': key } });
    expect(res.statusCode).toBe(200);
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
    return res.json<OpenAPIV3_1.Document>();
  }

  /** The consumer's own pin operations (`/consumer…`) take a key always, whatever the version's policy says. */
  const PIN_OPERATIONS_SECURITY = {
    'GET /consumer': [{ ApiKey: [] }],
    'PUT /consumer/version': [{ ApiKey: [] }],
    'POST /consumer/version/rollback': [{ ApiKey: [] }],
  };

  /**
   * Each operation of the document as `METHOD path` → its own `security`, or 'document' when it has none of its own.
   */
  function operationSecurity(document: OpenAPIV3_1.Document): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [path, item] of Object.entries(document.paths ?? {})) {
      for (const [method, operation] of Object.entries(item ?? {})) {
        if (typeof operation === 'object' && operation !== null && 'responses' in operation) {
          out[`${method.toUpperCase()} ${path}`] = (operation as OpenAPIV3_1.OperationObject).security ?? 'document';
        }
      }
    }
    return out;
  }

  it('declares it on every version, optional where the policy leaves the key optional', async () => {
    const document = await served('/v2/openapi.json');
    expect(document.components?.securitySchemes).toEqual({ ApiKey: API_KEY_SCHEME });
    expect(document.security).toEqual([{ ApiKey: [] }, {}]);
    const own = Object.entries(operationSecurity(document)).filter(([, security]) => security !== 'document');
    expect(Object.fromEntries(own)).toEqual(PIN_OPERATIONS_SECURITY);
    // The rest of the backend's document is as published: its schemas, paths and operations.
    const upstream = ordersDocument(2) as unknown as OpenAPIV3_1.Document;
    expect(document.components?.schemas).toEqual(upstream.components?.schemas);
    expect(Object.keys(document.paths ?? {})).toEqual(Object.keys(upstream.paths ?? {}));
    expect(document).not.toHaveProperty('x-sunset');
  });

  it("requires it on the version's own operations where the policy requires a key, never on /api/users", async () => {
    for (const url of ['/v1/openapi.json', '/openapi.json']) {
      const document = await served(url);
      expect(document.components?.securitySchemes).toEqual({ ApiKey: API_KEY_SCHEME });
      expect(document.security).toEqual([{ ApiKey: [] }, {}]);
      expect(operationSecurity(document)).toEqual({
        'GET /api/users': 'document',
        'POST /api/users': 'document',
        'GET /api/users/page': 'document',
        'GET /api/users/{id}': 'document',
        'PUT /api/users/{id}': 'document',
        'DELETE /api/users/{id}': 'document',
        'GET /v1/orders/{id}': [{ ApiKey: [] }],
        'GET /api/v1/orders/{id}': [{ ApiKey: [] }],
        ...PIN_OPERATIONS_SECURITY,
      });
      // Still the deprecated version's document: every operation marked, the lifecycle added.
      expect(document).toMatchObject({ 'x-sunset': '2027-01-01T00:00:00.000Z', 'x-successor-version': 2 });
      expect(document.paths?.['/api/users']?.post?.deprecated).toBeUndefined();
      expect(document.paths?.['/v1/orders/{id}']?.get?.deprecated).toBe(true);
    }
  });

  it("keeps a scheme of the backend's own beside it", async () => {
    const upstream = ordersDocument(2);
    const bearer = { type: 'http', scheme: 'bearer' };
    backend.documents.set(
      '/v2/openapi.json',
      JSON.stringify({
        ...upstream,
        components: { ...(upstream.components as object), securitySchemes: { Bearer: bearer } },
      }),
    );
    try {
      expect((await served('/v2/openapi.json')).components?.securitySchemes).toEqual({
        Bearer: bearer,
        ApiKey: API_KEY_SCHEME,
      });
    } finally {
      backend.documents.set('/v2/openapi.json', JSON.stringify(upstream));
    }
  });

  it('serves valid OpenAPI 3.1 documents (@readme/openapi-parser)', async () => {
    for (const url of ['/v1/openapi.json', '/v2/openapi.json']) {
      const document = await served(url);
      const result = await validate(document);
      expect(result.valid, `${url}: ${result.valid ? '' : compileErrors(result)}`).toBe(true);
    }
  });
});

describe('the OpenAPI document of a version declared as changes', () => {
  /** The shipped policy with SPEC's version 1 declared as what changed to version 2. */
  const policy = {
    ...designPolicyFile,
    versions: [{ ...designPolicyFile.versions[0], changes: ORDERS_V1_CHANGES }, designPolicyFile.versions[1]],
  };

  let backend: DocumentBackend;
  let gateway: TestGateway;

  beforeAll(async () => {
    backend = await startDocumentBackend();
    gateway = await buildTestGateway(backend.url, { policy });
  });
  afterAll(async () => {
    await gateway.app.close();
    await backend.close();
  });

  const orderSchema = (document: OpenAPIV3_1.Document, path: string) =>
    (document.paths?.[path]?.get?.responses['200'] as OpenAPIV3_1.ResponseObject).content?.['application/json']
      ?.schema as OpenAPIV3_1.SchemaObject;

  it("is derived from the successor's document the backend answers with, then annotated as version 1's", async () => {
    // As the gateway forwards a translated version: the backend answers /v1/openapi.json with version 2's document.
    backend.documents.set('/v1/openapi.json', JSON.stringify(ordersDocument(2)));
    try {
      for (const [url, headers] of [
        ['/v1/openapi.json', {}],
        ['/openapi.json', { 'api-version': '1' }],
      ] as const) {
        const res = await gateway.app.inject({ url, headers });
        expect(res.statusCode).toBe(200);
        const document = res.json<OpenAPIV3_1.Document>();
        expect(document.info.version).toBe('1');
        expect(Object.keys(document.paths ?? {})).toContain('/api/v1/orders/{id}');
        expect(Object.keys(orderSchema(document, '/v1/orders/{id}').properties ?? {})).toEqual([
          'id',
          'user_id',
          'total',
        ]);
        expect(orderSchema(document, '/v1/orders/{id}').properties?.user_id).toEqual({
          type: 'string',
          description: 'The customer identifier under its old name.',
        });
        expect(document.paths?.['/v1/orders/{id}']?.get?.deprecated).toBe(true);
        expect(document).toMatchObject({ 'x-sunset': '2027-01-01T00:00:00.000Z', 'x-successor-version': 2 });
        const result = await validate(document);
        expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
      }
    } finally {
      backend.documents.set('/v1/openapi.json', JSON.stringify(ordersDocument(1)));
    }
  });

  it('is taken as it is from a backend that still serves the version itself', async () => {
    const document = (await gateway.app.inject({ url: '/v1/openapi.json' })).json<OpenAPIV3_1.Document>();
    expect(document.info.version).toBe('1');
    expect(orderSchema(document, '/v1/orders/{id}').properties).toEqual(
      orderSchema(ordersDocument(1) as unknown as OpenAPIV3_1.Document, '/v1/orders/{id}').properties,
    );
  });

  it("leaves the successor's own document as the backend serves it", async () => {
    const document = (await gateway.app.inject({ url: '/v2/openapi.json' })).json<OpenAPIV3_1.Document>();
    expect(document.paths).toEqual(ordersDocument(2).paths);
  });
});
