import { createRequire } from 'node:module';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type formatsPlugin from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import type { OpenAPIV3_1 } from 'openapi-types';
import { pinDocumentParts } from '@version-router/platform/pin-document';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MemoryUserStore, type User } from '../../src/users/store.js';
import { JSON_TYPE, registeredPaths, testApp, UNSERVED_VERSION } from '../helpers.js';

type Document = OpenAPIV3_1.Document;

// ajv-formats is CommonJS; require() gives the plugin function under both Node and vitest's interop.
const addFormats = createRequire(import.meta.url)('ajv-formats') as typeof formatsPlugin.default;

const usersPaths = ['/api/users', '/api/users/page', '/api/users/{id}'];

async function documentOf(version: number, prefix = ''): Promise<Document> {
  const app = await testApp();
  const res = await app.inject({ method: 'GET', url: `${prefix}/v${version}/openapi.json` });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(JSON_TYPE);
  return res.json<Document>();
}

describe('GET /v{n}/openapi.json', () => {
  it.each([2])(
    'publishes version %i: every unversioned route and only that version’s own routes, in OpenAPI 3.1',
    async (version) => {
      const document = await documentOf(version);
      expect(document.openapi).toBe('3.1.0');
      expect(document.info.version).toBe(String(version));
      // What the app registered (a resource added as docs/architecture.md "Adding a resource" says included),
      // less the documents themselves and the other versions' routes.
      const ownOrUnversioned = (path: string) =>
        !/\/v[0-9]+\//.test(path) || path.startsWith(`/v${version}/`) || path.startsWith(`/api/v${version}/`);
      // And the gateway's own operations on the API port (the consumer's pin), which no backend route answers.
      const expected = [
        ...registeredPaths(await testApp()).filter((path) => ownOrUnversioned(path) && !path.endsWith('/openapi.json')),
        ...Object.keys(pinDocumentParts.paths),
      ];
      expect(expected).toEqual(
        expect.arrayContaining([...usersPaths, `/v${version}/orders/{id}`, `/api/v${version}/orders/{id}`]),
      );
      expect(Object.keys(document.paths ?? {}).sort()).toEqual(expected.sort());
    },
  );

  it(
    'describes the version and names its tags from the routes registered, a resource added later ' + 'included',
    async () => {
      const app = await testApp();
      await app.register(async (scope) => {
        scope.get(
          '/v2/widgets/:id',
          { schema: { tags: ['widgets'], response: { 200: z.object({}) } } },
          async () => ({}),
        );
        scope.post(
          '/api/v2/gadgets',
          { schema: { tags: ['gadgets'], response: { 201: z.object({}) } } },
          async () => ({}),
        );
        scope.get(
          '/v1/widgets/:id',
          { schema: { tags: ['widgets'], response: { 200: z.object({}) } } },
          async () => ({}),
        );
      });
      const document = (await app.inject({ method: 'GET', url: '/v2/openapi.json' })).json<Document>();
      // Other resources registered in the app come between orders and those added here.
      expect(document.info.description).toMatch(
        /^Major version 2: users \(unversioned, the same in every version\) and the version 2 representation of orders at \/v2\/orders\/\{id\} and \/api\/v2\/orders\/\{id\}, (.+, )?widgets at \/v2\/widgets\/\{id\} and gadgets at \/api\/v2\/gadgets\.$/,
      );
      const tags = document.tags ?? [];
      expect(tags.slice(0, 2)).toEqual([
        { name: 'users', description: 'Users; not versioned.' },
        { name: 'orders', description: 'Read-only orders, version 2 representation.' },
      ]);
      // The gateway's own operations come last, after every route of the backend.
      expect(tags.slice(-3)).toEqual([
        { name: 'widgets', description: 'Read-only widgets, version 2 representation.' },
        { name: 'gadgets', description: 'Gadgets, version 2 representation.' },
        pinDocumentParts.tag,
      ]);
    },
  );

  it.each([2])('serves the same document at /api/v%i/openapi.json', async (version) => {
    expect(await documentOf(version, '/api')).toEqual(await documentOf(version));
  });

  it.each([`/v${UNSERVED_VERSION}/openapi.json`, '/v1/openapi.json', '/api/v1/openapi.json'])(
    'answers %s, of a version it does not serve, with the JSON 404 (the gateway derives version 1’s)',
    async (url) => {
      const app = await testApp();
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'not found', code: 404 });
    },
  );

  it('documents every status each operation answers, and an ErrorResponse for any other', async () => {
    const document = await documentOf(2);
    const statuses = Object.fromEntries(
      Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
        (['get', 'post', 'put', 'delete'] as const).flatMap((method) => {
          const operation = item?.[method];
          return operation === undefined
            ? []
            : [[`${method.toUpperCase()} ${path}`, Object.keys(operation.responses ?? {}).sort()]];
        }),
      ),
    );
    // Every operation, those of resources added later included, answers any other status with an ErrorResponse.
    expect(Object.entries(statuses).filter(([, codes]) => !codes.includes('default'))).toEqual([]);
    expect(statuses).toMatchObject({
      'GET /api/users': ['200', '401', '500', 'default'],
      'POST /api/users': ['201', '400', '401', '409', '422', '503', 'default'],
      'GET /api/users/page': ['200', '400', '401', '500', 'default'],
      'GET /api/users/{id}': ['200', '401', '404', '503', 'default'],
      'PUT /api/users/{id}': ['200', '400', '401', '404', '503', 'default'],
      'DELETE /api/users/{id}': ['204', '401', '404', '503', 'default'],
      'GET /v2/orders/{id}': ['200', '401', '404', 'default'],
      'GET /api/v2/orders/{id}': ['200', '401', '404', 'default'],
    });
  });

  it(
    'says what stands in front of every route once: the servers, the optional API-Key and its 401, referred to by ' +
      'every operation',
    async () => {
      const document = await documentOf(2);
      expect(document.servers).toEqual([{ url: '/', description: 'The gateway this document was fetched from.' }]);
      expect(document.security).toEqual([{ ApiKey: [] }, {}]);
      expect(document.components?.securitySchemes?.ApiKey).toMatchObject({
        type: 'apiKey',
        in: 'header',
        name: 'API-Key',
      });
      const unauthorized = document.components?.responses?.Unauthorized as OpenAPIV3_1.ResponseObject;
      expect(unauthorized.content?.['application/json']?.schema).toMatchObject({
        properties: { error: { enum: ['invalid API key', 'API key required'] }, code: { enum: [401] } },
      });
      for (const item of Object.values(document.paths ?? {})) {
        for (const operation of [item?.get, item?.post, item?.put, item?.delete]) {
          if (operation !== undefined)
            expect(operation.responses?.['401']).toEqual({ $ref: '#/components/responses/Unauthorized' });
        }
      }
    },
  );

  it('documents the ErrorResponse of a scenario with its exact status, text and an example', async () => {
    const document = await documentOf(2);
    const responses = document.paths?.['/api/users']?.post?.responses ?? {};
    const media = (responses['409'] as OpenAPIV3_1.ResponseObject).content?.['application/json'];
    expect(media?.example).toEqual({ error: 'request in progress', code: 409 });
    expect(media?.schema).toMatchObject({
      title: 'ErrorResponse',
      properties: { error: { enum: ['request in progress'] }, code: { enum: [409] }, details: { type: 'string' } },
      required: ['error', 'code'],
    });
    // Two scenarios of one status: one ErrorResponse each, with its own text and example.
    const unprocessable = responses['422'] as OpenAPIV3_1.ResponseObject;
    expect(unprocessable.description).toMatch(/`validation failed`.*`idempotency key reused`/);
    expect(unprocessable.content?.['application/json']?.schema).toMatchObject({
      anyOf: [
        {
          title: 'ErrorResponse',
          properties: { error: { enum: ['validation failed'] }, code: { enum: [422] } },
          examples: [{ error: 'validation failed', code: 422, details: 'name is required' }],
        },
        {
          title: 'ErrorResponse',
          properties: { error: { enum: ['idempotency key reused'] }, code: { enum: [422] } },
          examples: [{ error: 'idempotency key reused', code: 422 }],
        },
      ],
    });
  });

  it('documents the Idempotency-Key header, the 201 headers and the order representation with its example', async () => {
    const v2 = await documentOf(2);
    const create = v2.paths?.['/api/users']?.post;
    expect(create?.parameters).toMatchObject([
      { in: 'header', name: 'idempotency-key', required: false, schema: { type: 'string' } },
    ]);
    const created = create?.responses?.['201'] as OpenAPIV3_1.ResponseObject;
    expect(Object.keys(created.headers ?? {})).toEqual(['Location', 'Idempotent-Replayed']);
    const order = (document: Document, path: string) =>
      (document.paths?.[path]?.get?.responses?.['200'] as OpenAPIV3_1.ResponseObject).content?.['application/json'];
    expect(order(v2, '/v2/orders/{id}')?.example).toEqual({
      id: 'ord-1001',
      customer_id: 'user-1',
      total_cents: 1999,
      currency: 'EUR',
    });
    expect(order(v2, '/v2/orders/{id}')?.schema).toMatchObject({
      required: ['id', 'customer_id', 'total_cents', 'currency'],
      properties: { total_cents: { type: 'integer' } },
    });
  });
});

/**
 * Every scenario the handlers answer, checked against the published document: the status is documented for
 * that operation, the content type matches, and the body validates against the documented schema.
 */
describe('the document describes what the routes answer', () => {
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));

  function expectDocumented(
    document: Document,
    template: string,
    method: 'get' | 'post' | 'put' | 'delete',
    res: LightMyRequestResponse,
  ): void {
    const response = document.paths?.[template]?.[method]?.responses?.[String(res.statusCode)] as
      OpenAPIV3_1.ResponseObject | undefined;
    expect(response, `${method.toUpperCase()} ${template} ${res.statusCode} is documented`).toBeDefined();
    const content = response?.content ?? {};
    if (res.statusCode === 204) {
      expect(content).toEqual({});
      expect(res.body).toBe('');
      return;
    }
    const mediaType = String(res.headers['content-type']).split(';')[0] ?? '';
    expect(Object.keys(content)).toEqual([mediaType]);
    const body: unknown = mediaType === 'application/json' ? res.json() : res.body;
    const validate = ajv.compile(content[mediaType]?.schema ?? {});
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
  }

  it.each([2])('users and orders, success and error scenarios (version %i document)', async (version) => {
    const document = await documentOf(version);
    const app = await testApp();
    const inject = (method: string, url: string, payload?: string) =>
      app.inject({ method: method as 'GET', url, payload });

    expectDocumented(document, '/api/users', 'get', await inject('GET', '/api/users'));
    expectDocumented(
      document,
      '/api/users',
      'post',
      await inject('POST', '/api/users', '{"name":"Ada","email":"ada@example.com"}'),
    );
    expectDocumented(document, '/api/users', 'post', await inject('POST', '/api/users', '{"name":"Ada","x":1}'));
    expectDocumented(document, '/api/users', 'post', await inject('POST', '/api/users', '{"name":""}'));
    const keyed = (key: string, payload: string) =>
      app.inject({ method: 'POST', url: '/api/users', payload, headers: { 'idempotency-key': key } });
    expectDocumented(document, '/api/users', 'post', await keyed('k', '{"name":"Bo","email":"bo@example.com"}'));
    expectDocumented(document, '/api/users', 'post', await keyed('k', '{"name":"Bo","email":"bo@example.com"}'));
    expectDocumented(document, '/api/users', 'post', await keyed('k', '{"name":"Bo","email":"bo@example.org"}'));
    expectDocumented(document, '/api/users', 'post', await keyed('two keys', '{"name":"Bo","email":"bo@example.com"}'));
    expectDocumented(document, '/api/users', 'get', await inject('GET', '/api/users'));
    expectDocumented(document, '/api/users/page', 'get', await inject('GET', '/api/users/page?limit=1'));
    expectDocumented(document, '/api/users/page', 'get', await inject('GET', '/api/users/page?cursor=not-a-cursor!'));
    expectDocumented(document, '/api/users/{id}', 'get', await inject('GET', '/api/users/user-1'));
    expectDocumented(document, '/api/users/{id}', 'get', await inject('GET', '/api/users/user-9'));
    expectDocumented(
      document,
      '/api/users/{id}',
      'put',
      await inject('PUT', '/api/users/user-1', '{"email":"ada@example.org"}'),
    );
    expectDocumented(document, '/api/users/{id}', 'put', await inject('PUT', '/api/users/user-1', 'nope'));
    expectDocumented(document, '/api/users/{id}', 'put', await inject('PUT', '/api/users/user-9', '{}'));
    expectDocumented(document, '/api/users/{id}', 'delete', await inject('DELETE', '/api/users/user-1'));
    expectDocumented(document, '/api/users/{id}', 'delete', await inject('DELETE', '/api/users/user-1'));
    for (const prefix of ['', '/api']) {
      expectDocumented(
        document,
        `${prefix}/v${version}/orders/{id}`,
        'get',
        await inject('GET', `${prefix}/v${version}/orders/ord-1001`),
      );
      expectDocumented(
        document,
        `${prefix}/v${version}/orders/{id}`,
        'get',
        await inject('GET', `${prefix}/v${version}/orders/ord-9999`),
      );
    }
  });

  it('documents the 500 of a failing store as listing users', async () => {
    const store = new (class extends MemoryUserStore {
      override list(): User[] {
        throw new Error('replica unreachable');
      }
    })();
    const app = await testApp({ store });
    expectDocumented(await documentOf(2), '/api/users', 'get', await app.inject({ method: 'GET', url: '/api/users' }));
  });
});

describe('schemas describe, they do not reshape responses', () => {
  it('writes an order body byte for byte as JSON.stringify of the representation', async () => {
    const app = await testApp();
    expect((await app.inject({ method: 'GET', url: '/v2/orders/ord-1001' })).body).toBe(
      '{"id":"ord-1001","customer_id":"user-1","total_cents":1999,"currency":"EUR"}',
    );
  });

  it('keeps fields and their order as the store returns them, also ones the schema does not list', async () => {
    const store = new (class extends MemoryUserStore {
      override get(): User {
        return { updated_at: 'b', created_at: 'a', email: 'e', name: 'n', id: 'user-1', extra: true } as User;
      }
    })();
    const app = await testApp({ store });
    expect((await app.inject({ method: 'GET', url: '/api/users/user-1' })).body).toBe(
      '{"updated_at":"b","created_at":"a","email":"e","name":"n","id":"user-1","extra":true}',
    );
  });

  it('still answers what the handlers decide for input the schemas would reject', async () => {
    const app = await testApp();
    const res = await app.inject({
      method: 'POST',
      url: '/api/users',
      headers: { 'content-type': 'text/plain' },
      payload: '{"name":1}',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid JSON', code: 400, details: 'field "name" must be a string' });
    const page = await app.inject({ method: 'GET', url: '/api/users/page?limit=1000' });
    expect(page.statusCode).toBe(200);
    expect(page.json()).toEqual({ items: [], has_more: false });
  });
});
