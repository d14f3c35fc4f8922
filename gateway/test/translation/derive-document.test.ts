import { describe, expect, it } from 'vitest';
import { compareDocuments } from '@version-router/platform/compatibility';
import type { VersionChange } from '../../src/translation/changes.js';
import { compileTranslations } from '../../src/translation/compile.js';
import { deriveDocument } from '../../src/translation/derive-document.js';
import { ordersDocument } from '../support/documents.js';
import { ORDERS, ORDERS_V1_CHANGES, stepsOf } from '../support/orders-v1.js';

type Json = Record<string, unknown>;

/** Version 1's step to version 2 by `changes`, on `resource` (the orders unless a test names its own). */
const step = (changes: VersionChange[], resource = ORDERS) => stepsOf(changes, [resource, '/openapi.json']);

/** The object at `keys`. */
function at(document: unknown, ...keys: (string | number)[]): Json {
  return keys.reduce<Json>((inner, key) => (inner as Record<string | number, Json>)[key] as Json, document as Json);
}

/** The JSON media type object of the 200 answer of `GET path`. */
const answerMedia = (document: unknown, path: string): Json =>
  at(document, 'paths', path, 'get', 'responses', '200', 'content', 'application/json');

const orderSchema = (document: unknown, path: string): Json => at(answerMedia(document, path), 'schema');

/** A version 2 document of one operation, `GET path`, whose 200 answer is `media` as JSON. */
const answering = (path: string, media: Json) => ({
  openapi: '3.1.0',
  info: { title: 't', version: '2' },
  paths: { [path]: { get: { responses: { '200': { description: 'ok', content: { 'application/json': media } } } } } },
});

describe("deriving a translated version's OpenAPI document from its successor's (SPEC's order v1)", () => {
  const v2 = ordersDocument(2);
  const v1 = deriveDocument(v2, step(ORDERS_V1_CHANGES)) as Json;

  it("moves the version's paths, info.version and prose; unversioned paths stay", () => {
    expect(Object.keys(at(v1, 'paths'))).toEqual(
      Object.keys(at(v2, 'paths')).map((path) => path.replace(/^(\/api)?\/v2\//, '$1/v1/')),
    );
    expect(at(v1, 'info').version).toBe('1');
    expect(at(v1, 'info').description).toBe(
      'Major version 1: users (unversioned, the same in every version) and the version 1 representation of orders ' +
        'at /v1/orders/{id} and /api/v1/orders/{id}.',
    );
    expect(at(v1, 'paths', '/v1/orders/{id}', 'get').summary).toBe('Read an order in the version 1 representation');
    expect(orderSchema(v1, '/v1/orders/{id}').title).toBe('OrderV1');
    expect(at(v1, 'paths', '/api/users')).toEqual(at(v2, 'paths', '/api/users'));
  });

  it("gives each order path SPEC's version 1 representation: renamed, scaled to a number, the added field gone", () => {
    for (const path of ['/v1/orders/{id}', '/api/v1/orders/{id}']) {
      const schema = orderSchema(v1, path);
      expect(schema.properties).toEqual({
        id: { type: 'string' },
        user_id: { type: 'string', description: 'The customer identifier under its old name.' },
        total: { type: 'number', description: "Version 2's `total_cents` divided by 100." },
      });
      expect(schema.required).toEqual(['id', 'user_id', 'total']);
      expect(answerMedia(v1, path).example).toEqual({
        id: 'ord-1001',
        user_id: 'user-1',
        total: 19.99,
      });
    }
    // Error responses pass unchanged, as the gateway passes error envelopes.
    expect(at(v1, 'paths', '/v1/orders/{id}', 'get', 'responses', '404')).toEqual(
      at(v2, 'paths', '/v2/orders/{id}', 'get', 'responses', '404'),
    );
  });

  it(
    "says nothing a client depends on that the backend's own version 1 document does not (the declarations are " +
      "SPEC's v1)",
    () => {
      const backendV1 = ordersDocument(1);
      expect(compareDocuments(backendV1, v1).filter((change) => !change.documentation)).toEqual([]);
    },
  );

  it('leaves its input unchanged', () => {
    expect(v2).toEqual(ordersDocument(2));
  });

  it('follows a chain newest first: v3 → v2 → v1', () => {
    const resources = [{ path: ORDERS, versions: undefined }];
    // v2's order document as version 3's: one step that changes nothing, read the other way round.
    const asV3 = compileTranslations({
      versions: [{ version: 3, successor: 2, changes: [] }, { version: 2 }],
      resources,
    });
    const v3 = deriveDocument(v2, asV3.chain(3).steps) as Json;
    // v3 as if its order had renamed customer_id to client_id.
    const renamed = (schema: Json) => {
      const { customer_id, ...rest } = schema.properties as Json;
      schema.properties = { client_id: customer_id, ...rest };
      schema.required = (schema.required as string[]).map((name) => (name === 'customer_id' ? 'client_id' : name));
    };
    for (const path of ['/v3/orders/{id}', '/api/v3/orders/{id}']) renamed(orderSchema(v3, path));
    const compiled = compileTranslations({
      versions: [
        { version: 1, successor: 2, changes: ORDERS_V1_CHANGES },
        {
          version: 2,
          successor: 3,
          changes: [{ resource: ORDERS, op: 'rename', field: 'customer_id', to: 'client_id' }],
        },
        { version: 3 },
      ],
      resources,
    });
    const derived = deriveDocument(v3, compiled.chain(1).steps) as Json;
    expect(Object.keys(orderSchema(derived, '/v1/orders/{id}').properties as Json)).toEqual(['user_id', 'id', 'total']);
    expect(at(derived, 'info').version).toBe('1');
  });

  it('reaches fields inside arrays (`items[].user_id`), maps enums back and puts a removed field back', () => {
    const page = answering('/v2/carts/{id}', {
      schema: {
        type: 'object',
        properties: {
          items: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                customer_id: { type: 'string' },
                status: { type: 'string', enum: ['enabled', 'disabled'] },
              },
              required: ['customer_id', 'status'],
            },
          },
        },
        required: ['items'],
      },
      example: { items: [{ customer_id: 'u1', status: 'enabled' }, 'not an object'] },
    });
    const changes: VersionChange[] = [
      { resource: '/carts/:id', op: 'rename', field: 'items[].user_id', to: 'items[].customer_id' },
      {
        resource: '/carts/:id',
        op: 'map',
        field: 'items[].status',
        values: { active: 'enabled', inactive: 'disabled' },
        description: 'Active or inactive.',
      },
      { resource: '/carts/:id', op: 'remove', field: 'items[].legacy', value: false },
    ];
    const derived = deriveDocument(page, step(changes, '/carts/:id'));
    const media = answerMedia(derived, '/v1/carts/{id}');
    expect(at(media, 'schema', 'properties', 'items', 'items')).toEqual({
      type: 'object',
      properties: {
        user_id: { type: 'string' },
        status: { type: 'string', enum: ['active', 'inactive'], description: 'Active or inactive.' },
        legacy: { type: 'boolean' },
      },
      required: ['user_id', 'status', 'legacy'],
    });
    expect(media.example).toEqual({ items: [{ user_id: 'u1', status: 'active', legacy: false }, 'not an object'] });
  });

  it('in a request body: a removed field may be sent, an added one with a default need not be', () => {
    const body = (properties: Json, required: string[]) => ({
      openapi: '3.1.0',
      info: { title: 't', version: '2' },
      paths: {
        '/v2/notes': {
          post: {
            requestBody: {
              content: {
                'application/json': { schema: { type: 'object', properties, required, additionalProperties: false } },
              },
            },
            responses: { '201': { description: 'created' } },
          },
        },
      },
    });
    const derived = deriveDocument(
      body({ text: { type: 'string' }, lang: { type: 'string' } }, ['text', 'lang']),
      step(
        [
          { resource: '/notes', op: 'add', field: 'lang', default: 'en' },
          { resource: '/notes', op: 'remove', field: 'pinned' },
        ],
        '/notes',
      ),
    );
    expect(at(derived, 'paths', '/v1/notes', 'post', 'requestBody', 'content', 'application/json', 'schema')).toEqual({
      type: 'object',
      properties: { text: { type: 'string' }, pinned: {} },
      required: ['text'],
      additionalProperties: false,
    });
  });

  it('in a response: a removed field without a value is back as the null the gateway puts there, required', () => {
    const derived = deriveDocument(
      ordersDocument(2),
      step([{ resource: ORDERS, op: 'remove', field: 'fax', description: 'Always null.' }]),
    );
    const schema = orderSchema(derived, '/v1/orders/{id}');
    expect((schema.properties as Json).fax).toEqual({ type: 'null', description: 'Always null.' });
    expect(schema.required).toEqual(['id', 'customer_id', 'total_cents', 'currency', 'fax']);
    const media = answerMedia(derived, '/v1/orders/{id}');
    expect(media.example).toEqual({
      id: 'ord-1001',
      customer_id: 'user-1',
      total_cents: 1999,
      currency: 'EUR',
      fax: null,
    });
  });

  it('renames a parent and its child in one step whatever order they are declared in, as the engine does', () => {
    const buyer = {
      type: 'object',
      properties: { full_name: { type: 'string' } },
      required: ['full_name'],
    };
    const document = answering('/v2/orders/{id}', {
      schema: { type: 'object', properties: { buyer }, required: ['buyer'] },
      example: { buyer: { full_name: 'Ada' } },
    });
    const parent: VersionChange = { resource: '/orders/:id', op: 'rename', field: 'customer', to: 'buyer' };
    const child: VersionChange = {
      resource: '/orders/:id',
      op: 'rename',
      field: 'customer.name',
      to: 'customer.full_name',
    };
    for (const changes of [
      [parent, child],
      [child, parent],
    ]) {
      const derived = deriveDocument(document, step(changes));
      const media = answerMedia(derived, '/v1/orders/{id}');
      expect(media.schema).toEqual({
        type: 'object',
        properties: { customer: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
        required: ['customer'],
      });
      expect(media.example).toEqual({ customer: { name: 'Ada' } });
    }
  });
});

describe('examples read backwards, as the gateway reads answers back', () => {
  /** A v2 document whose order answer carries `values` as its `example`, its named `examples` and schema examples. */
  const documented = (values: unknown[]) =>
    answering('/v2/orders/{id}', {
      schema: { type: 'object', examples: values },
      example: values[0],
      examples: Object.fromEntries(values.map((value, index) => [`e${index}`, { value }])),
    });
  /** Every example of the derived v1 order answer, in the order `documented` was given them. */
  function derivedExamples(values: unknown[], changes: VersionChange[]): { example: unknown; each: unknown[] } {
    const derived = deriveDocument(documented(values), step(changes));
    const media = answerMedia(derived, '/v1/orders/{id}');
    const named = Object.values(media.examples as Record<string, { value: unknown }>).map(({ value }) => value);
    expect(at(media, 'schema').examples).toEqual(named);
    return { example: media.example, each: named };
  }
  const order = '/orders/:id';

  it('keeps a renamed or scaled field in its place among the keys; a value shown in three places, each once', () => {
    const v2 = { id: 'ord-1001', customer_id: 'user-1', total_cents: 1999, currency: 'EUR', status: 'enabled' };
    const { example, each } = derivedExamples([v2], ORDERS_V1_CHANGES);
    expect(JSON.stringify(example)).toBe('{"id":"ord-1001","user_id":"user-1","total":19.99,"status":"enabled"}');
    expect(JSON.stringify(each)).toBe(JSON.stringify([example]));
  });

  it('leaves a missing array, a non-object item and a non-number under scale as they are', () => {
    const changes: VersionChange[] = [
      { resource: order, op: 'rename', field: 'items[].a', to: 'items[].b' },
      { resource: order, op: 'scale', field: 'total', to: 'total_cents', factor: 100 },
    ];
    const values = [{ items: 'none' }, { other: 1 }, { items: [1, { b: 2, c: 3 }] }, { total_cents: '1999' }];
    expect(derivedExamples(values, changes).each).toEqual([
      { items: 'none' },
      { other: 1 },
      { items: [1, { a: 2, c: 3 }] },
      { total: '1999' },
    ]);
  });

  it('puts a removed field back with its value, or null without one; the input and the declaration unchanged', () => {
    const kept: unknown = { tags: ['a'] };
    const changes: VersionChange[] = [
      { resource: order, op: 'remove', field: 'legacy', value: kept },
      { resource: order, op: 'remove', field: 'fax' },
    ];
    const input = documented([{ id: 'ord-1' }]);
    const derived = deriveDocument(input, step(changes));
    const media = answerMedia(derived, '/v1/orders/{id}');
    expect(media.example).toEqual({ id: 'ord-1', legacy: { tags: ['a'] }, fax: null });
    (at(media, 'example', 'legacy').tags as string[]).push('changed');
    expect(kept).toEqual({ tags: ['a'] });
    expect(input).toEqual(documented([{ id: 'ord-1' }]));
  });
});
