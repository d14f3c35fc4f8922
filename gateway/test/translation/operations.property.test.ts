// A property test per operation of the second edition (fast-check, ajv): generated bodies of the successor that
// validate against the successor's document translate into bodies that validate against the document derived by
// the same declarations, and forward after backward gives back what the change keeps. (The first five operations:
// engine.property.test.ts.)
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BodyKind, VersionChange } from '../../src/translation/changes.js';
import { compileTranslations, type CompiledTranslations } from '../../src/translation/compile.js';
import { deriveDocument } from '../../src/translation/derive-document.js';
import { readJson, writeJson } from '../../src/translation/json-text.js';
import { loadChangeModules, type ChangeModules } from '../../src/translation/modules.js';

const RUNS = { numRuns: 200 };
const ORDERS = '/orders/:id';
type Json = Record<string, unknown>;

const ajv = new Ajv2020({ strict: false, allErrors: true });

/** A version 2 document of one resource: `GET path` answering `status` with `schema` as JSON, headers aside. */
function successorDocument(path: string, status: string, schema: Json, headers: Json = {}): Json {
  return {
    openapi: '3.1.0',
    info: { title: 'orders', version: '2' },
    paths: {
      [path]: {
        get: {
          parameters: [{ in: 'path', name: 'id', required: true, schema: { type: 'string' } }],
          responses: {
            [status]: {
              description: 'the answer',
              headers,
              content: { 'application/json': { schema } },
            },
          },
        },
      },
    },
  };
}

const at = (document: unknown, ...keys: string[]): Json =>
  keys.reduce<Json>((inner, key) => inner[key] as Json, document as Json);
const schemaAt = (document: unknown, path: string, status: string): Json =>
  at(document, 'paths', path, 'get', 'responses', status, 'content', 'application/json', 'schema');

function compile(changes: VersionChange[], resources = [ORDERS], modules?: ChangeModules): CompiledTranslations {
  return compileTranslations(
    {
      versions: [{ version: 1, successor: 2, changes }, { version: 2 }],
      resources: resources.map((path) => ({ path, versions: undefined })),
    },
    modules,
  );
}

/** A body as the gateway reads it, through `apply`, as the client gets it. */
const translated = (apply: ((body: unknown) => unknown) | undefined, body: unknown): unknown =>
  JSON.parse(
    writeJson((apply ?? ((same: unknown) => same))((readJson(JSON.stringify(body), 64) as { value: unknown }).value)),
  );

interface BodyCase {
  readonly changes: VersionChange[];
  readonly schema: Json;
  readonly bodies: fc.Arbitrary<unknown>;
  /** What of a successor's body the change keeps: forward after backward gives it back (default: all of it). */
  readonly keeps?: (body: unknown) => unknown;
  readonly status?: string;
  /** The status this version answers instead (a `status` change). */
  readonly ownStatus?: string;
  readonly kind?: BodyKind;
  readonly modules?: ChangeModules;
}

/** The property of a body operation: valid in, valid out, and back again as far as the change keeps. */
function holdsFor({
  changes,
  schema,
  bodies,
  keeps = (body) => body,
  status = '200',
  ownStatus = status,
  kind = 'success',
  modules,
}: BodyCase) {
  const compiled = compile(changes, [ORDERS], modules);
  const successor = successorDocument('/v2/orders/{id}', status, schema);
  const derived = deriveDocument(successor, compiled.chain(1).steps);
  const validSuccessor = ajv.compile(schemaAt(successor, '/v2/orders/{id}', status));
  const validDerived = ajv.compile(schemaAt(derived, '/v1/orders/{id}', ownStatus));
  const step = compiled.steps.get(1)?.resources.get(ORDERS)?.bodies[kind];
  const route = compiled.versions.get(1)?.routes.get(ORDERS);
  fc.assert(
    fc.property(bodies, (body) => {
      expect(validSuccessor(body), JSON.stringify(validSuccessor.errors)).toBe(true);
      const mine = translated(route?.answer(Number(status)).body, body);
      expect(validDerived(mine), `${JSON.stringify(mine)}: ${JSON.stringify(validDerived.errors)}`).toBe(true);
      const back = translated(step?.forward, mine);
      // As JSON: a generated record has no prototype, a parsed one has Object's.
      const kept = JSON.parse(JSON.stringify(keeps(body))) as unknown;
      expect(isDeepStrictEqual(back, kept), `${JSON.stringify(back)} ≠ ${JSON.stringify(kept)}`).toBe(true);
    }),
    RUNS,
  );
}

const id = fc.stringMatching(/^[a-z0-9-]{1,10}$/);
const text = fc.string({ maxLength: 12 });
const amount = fc.integer({ min: -1_000_000, max: 1_000_000 });

describe('each operation of the second edition, on generated bodies of its successor', () => {
  it('move: the field where this version has it, the parent it leaves empty gone, and back', () => {
    holdsFor({
      changes: [
        { resource: ORDERS, op: 'move', field: 'customer_id', to: 'customer.id' },
        { resource: ORDERS, op: 'move', field: 'lines[].sku', to: 'lines[].product.sku' },
      ],
      schema: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          customer: {
            type: 'object',
            properties: { id: { type: 'string' }, name: { type: 'string' } },
            required: ['id'],
            additionalProperties: false,
          },
          lines: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                qty: { type: 'integer' },
                product: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] },
              },
              required: ['qty', 'product'],
              additionalProperties: false,
            },
          },
        },
        required: ['id', 'customer'],
        additionalProperties: false,
      },
      bodies: fc.record(
        {
          id,
          customer: fc.record({ id, name: text }, { requiredKeys: ['id'] }),
          lines: fc.array(fc.record({ qty: amount, product: fc.record({ sku: id }) }), { maxLength: 3 }),
        },
        { requiredKeys: ['id', 'customer'] },
      ),
    });
  });

  it('envelope: the body under the key is this version’s; the other keys are not kept', () => {
    const order = {
      type: 'object',
      properties: { id: { type: 'string' }, total_cents: { type: 'integer' } },
      required: ['id'],
      additionalProperties: false,
    };
    holdsFor({
      changes: [{ resource: ORDERS, op: 'envelope', field: 'data' }],
      schema: {
        type: 'object',
        properties: { data: order, meta: { type: 'object', properties: { page: { type: 'integer' } } } },
        required: ['data'],
        additionalProperties: false,
      },
      bodies: fc.record(
        { data: fc.record({ id, total_cents: amount }, { requiredKeys: ['id'] }), meta: fc.record({ page: amount }) },
        { requiredKeys: ['data'] },
      ),
      keeps: (body) => ({ data: (body as Json).data }),
    });
    // A list: this version's body is the bare array the successor holds under the key.
    holdsFor({
      changes: [{ resource: ORDERS, op: 'envelope', field: 'data' }],
      schema: {
        type: 'object',
        properties: { data: { type: 'array', items: order }, next: { type: 'string' } },
        required: ['data'],
        additionalProperties: false,
      },
      bodies: fc.record(
        {
          data: fc.array(fc.record({ id, total_cents: amount }, { requiredKeys: ['id'] }), { maxLength: 4 }),
          next: id,
        },
        { requiredKeys: ['data'] },
      ),
      keeps: (body) => ({ data: (body as Json).data }),
    });
  });

  it("status: the successor's status is this version's, the envelope's code with it", () => {
    holdsFor({
      changes: [{ resource: ORDERS, op: 'status', from: 403, to: 401 }],
      status: '403',
      ownStatus: '401',
      kind: 'error',
      schema: {
        type: 'object',
        properties: { error: { type: 'string' }, code: { type: 'integer', enum: [403] }, details: { type: 'string' } },
        required: ['error', 'code'],
        additionalProperties: false,
      },
      bodies: fc.record({ error: text, code: fc.constant(403), details: text }, { requiredKeys: ['error', 'code'] }),
      // The code is the status, which is no body's to give back.
      keeps: (body) => ({ ...(body as Json), code: 401 }),
    });
    const compiled = compile([{ resource: ORDERS, op: 'status', from: 403, to: 401 }]);
    const derived = deriveDocument(successorDocument('/v2/orders/{id}', '403', {}), compiled.chain(1).steps);
    expect(Object.keys(at(derived, 'paths', '/v1/orders/{id}', 'get', 'responses'))).toEqual(['401']);
    fc.assert(
      fc.property(fc.integer({ min: 100, max: 599 }), (status) => {
        const plan = compiled.versions.get(1)?.routes.get(ORDERS)?.answer(status);
        expect(plan?.status).toBe(status === 403 ? 401 : status);
      }),
      RUNS,
    );
  });

  it('error envelopes ("on": "error"): changed as declared, 2xx bodies never', () => {
    holdsFor({
      changes: [
        { resource: ORDERS, op: 'rename', field: 'details', to: 'message', on: 'error' },
        { resource: ORDERS, op: 'remove', field: 'hint', value: 'none', on: 'error' },
      ],
      status: '404',
      kind: 'error',
      schema: {
        type: 'object',
        properties: { error: { type: 'string' }, code: { type: 'integer' }, message: { type: 'string' } },
        required: ['error', 'code'],
        additionalProperties: false,
      },
      bodies: fc.record({ error: text, code: fc.constant(404), message: text }, { requiredKeys: ['error', 'code'] }),
    });
  });

  it('link: a path of the successor names this version, its document’s pattern with it, and back', () => {
    holdsFor({
      changes: [
        { resource: ORDERS, op: 'link', field: 'next' },
        { resource: ORDERS, op: 'link', field: 'related[]' },
      ],
      schema: {
        type: 'object',
        properties: {
          next: {
            type: 'string',
            pattern: '^(https://api\\.example\\.com)?(/api)?/v2/orders/[a-z0-9-]+(\\?page=\\d+)?$',
          },
          related: { type: 'array', items: { type: 'string', pattern: '^/v2/orders/[a-z0-9-]+$' } },
        },
        required: ['next'],
        additionalProperties: false,
      },
      bodies: fc.record(
        {
          next: fc
            .tuple(fc.constantFrom('', 'https://api.example.com'), fc.constantFrom('', '/api'), id, fc.option(amount))
            .map(
              ([origin, api, order, page]) =>
                `${origin}${api}/v2/orders/${order}${page === null ? '' : `?page=${Math.abs(page)}`}`,
            ),
          related: fc.array(
            id.map((order) => `/v2/orders/${order}`),
            { maxLength: 3 },
          ),
        },
        { requiredKeys: ['next'] },
      ),
    });
  });

  it('module: the successor’s body as the module gives it, valid against the schema it gives, and back', async () => {
    const modules = await loadChangeModules(
      [{ version: 1, changes: [{ resource: ORDERS, op: 'module', module: 'split-name.mjs' }] }],
      fileURLToPath(new URL('./modules/versions.json', import.meta.url)),
      { maxDepth: 64, maxBytes: 1024 * 1024 },
    );
    holdsFor({
      changes: [{ resource: ORDERS, op: 'module', module: 'split-name.mjs' }],
      modules,
      schema: {
        type: 'object',
        properties: { id: { type: 'string' }, first_name: { type: 'string' }, last_name: { type: 'string' } },
        required: ['id', 'first_name', 'last_name'],
        additionalProperties: false,
      },
      // The module splits at the first space: a first name has none.
      bodies: fc.record({ id, first_name: fc.stringMatching(/^[A-Za-z]{1,8}$/), last_name: text }),
    });
  });

  it("header: the successor's header is named as this version's, declared in its document, and back", () => {
    const changes: VersionChange[] = [{ resource: ORDERS, op: 'header', name: 'Total-Count', to: 'X-Total-Count' }];
    const compiled = compile(changes);
    const successor = successorDocument(
      '/v2/orders/{id}',
      '200',
      {},
      { 'Total-Count': { schema: { type: 'string' } } },
    );
    const derived = deriveDocument(successor, compiled.chain(1).steps);
    const declared = Object.keys(at(derived, 'paths', '/v1/orders/{id}', 'get', 'responses', '200', 'headers')).map(
      (name) => name.toLowerCase(),
    );
    const route = compiled.versions.get(1)?.routes.get(ORDERS);
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom('total-count', 'content-type', 'x-other', 'etag'), fc.string({ maxLength: 5 })),
        (headers) => {
          const mine: Record<string, string | undefined> = { ...headers };
          route?.answerHeaders?.(mine);
          for (const [name, value] of Object.entries(mine)) {
            if (value === undefined) continue;
            expect(name === 'total-count').toBe(false);
            if (name === 'x-total-count') expect(declared).toContain(name);
          }
          route?.requestHeaders?.(mine);
          const back = Object.fromEntries(Object.entries(mine).filter(([, value]) => value !== undefined));
          expect(back).toEqual(headers);
        },
      ),
      RUNS,
    );
  });

  it("path: the successor's path of the resource is this version's, its document's, and back", () => {
    const compiled = compileTranslations({
      versions: [
        { version: 1, successor: 2, changes: [{ resource: '/clients/:id', op: 'path', to: '/users/:id' }] },
        { version: 2 },
      ],
      resources: [
        { path: '/clients/:id', versions: [1] },
        { path: '/users/:id', versions: [2] },
      ],
    });
    const successor = successorDocument('/v2/users/{id}', '200', { type: 'object' });
    const derived = deriveDocument(successor, compiled.chain(1).steps);
    expect(Object.keys(at(derived, 'paths'))).toEqual(['/v1/clients/{id}']);
    const route = compiled.versions.get(1)?.routes.get('/clients/:id');
    fc.assert(
      fc.property(id, fc.constantFrom('', '/api'), (client, api) => {
        const served = `${api}/v2${route?.target(`/clients/${client}`)}`;
        expect(served).toBe(`${api}/v2/users/${client}`);
        expect(route?.location(served)).toBe(`${api}/v1/clients/${client}`);
      }),
      RUNS,
    );
  });
});
