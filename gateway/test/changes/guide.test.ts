import { describe, expect, it } from 'vitest';
import { deriveDocument } from '../../src/translation/derive-document.js';
import { buildMigrationGuide } from '../../src/changes/guide.js';
import { declaredSentence } from '../../src/changes/sentence.js';
import type { VersionChange } from '../../src/translation/changes.js';
import { committedDocument, ordersDocument } from '../support/documents.js';
import { ORDERS_V1_CHANGES, stepsOf } from '../support/orders-v1.js';

type Json = Record<string, unknown>;

/** The object at `keys` inside a document, to edit in place. */
function node(document: Json, ...keys: string[]): Json {
  return keys.reduce((inner, key) => inner[key] as Json, document);
}

/** A document as version `to` would publish it: the same operations under `/v{to}` paths. */
function asVersion(document: Json, from: number, to: number): Json {
  const paths = Object.entries(node(document, 'paths')).map(([path, item]) => [
    path.replace(`/v${from}/`, `/v${to}/`),
    item,
  ]);
  return { ...document, paths: Object.fromEntries(paths) };
}
const short = (changes: { change: string; kind: string; name: string; where: string; breaking: boolean }[]) =>
  changes.map(
    ({ change, kind, name, where, breaking }) =>
      `${change} ${kind} ${name}${where === '' ? '' : ` in ${where}`}${breaking ? ' (breaking)' : ''}`,
  );

describe('the migration guide from two OpenAPI documents', () => {
  it(
    'lists v1 → v2 per order operation: user_id and total removed (breaking), customer_id, total_cents and ' +
      'currency added',
    () => {
      const guide = buildMigrationGuide(1, 2, ordersDocument(1), ordersDocument(2));
      const expected = [
        'removed field user_id in response 200 (application/json) (breaking)',
        'removed field total in response 200 (application/json) (breaking)',
        'added field customer_id in response 200 (application/json)',
        'added field total_cents in response 200 (application/json)',
        'added field currency in response 200 (application/json)',
      ];
      expect(
        guide.operations.map(({ method, path, successor_path, changes }) => ({
          method,
          path,
          successor_path,
          changes: short(changes),
        })),
      ).toEqual([
        { method: 'GET', path: '/v1/orders/{id}', successor_path: '/v2/orders/{id}', changes: expected },
        { method: 'GET', path: '/api/v1/orders/{id}', successor_path: '/api/v2/orders/{id}', changes: expected },
      ]);
      expect(guide.operations[0]?.changes[0]).toEqual({
        change: 'removed',
        kind: 'field',
        name: 'user_id',
        where: 'response 200 (application/json)',
        breaking: true,
        description: '[Removed] property `user_id` in Response 200 content (application/json)',
      });
      expect(guide).toMatchObject({
        version: 1,
        successor: 2,
        breaking_changes: 4,
        compatible_changes: 6,
        other_changes: [],
      });
    },
  );

  it('names endpoints, parameters, statuses, headers and nested fields, and leaves prose out', () => {
    const before = ordersDocument(2);
    const after = asVersion(ordersDocument(2), 2, 3);
    const page = node(after, 'paths', '/api/users/page', 'get');
    page.parameters = [
      ...(page.parameters as Json[]).filter((parameter) => parameter.name !== 'cursor'),
      { in: 'query', name: 'sort', required: true, schema: { type: 'string' } },
    ];
    node(
      page,
      'responses',
      '200',
      'content',
      'application/json',
      'schema',
      'properties',
      'items',
      'items',
      'properties',
    ).nickname = { type: 'string' };
    node(page, 'responses', '200').headers = { 'X-Total': { schema: { type: 'integer' } } };
    page.summary = 'Reworded';
    delete node(after, 'paths', '/api/users').post;
    delete node(after, 'paths', '/v3/orders/{id}', 'get', 'responses')['404'];
    node(after, 'paths')['/v3/orders/{id}/items'] = { get: { responses: { 200: { description: 'items' } } } };
    const guide = buildMigrationGuide(2, 3, before, after);
    const byOperation = Object.fromEntries(
      guide.operations.map((operation) => [`${operation.method} ${operation.path}`, short(operation.changes)]),
    );
    expect(byOperation).toEqual({
      'POST /api/users': ['removed endpoint  (breaking)'],
      'GET /api/users/page': [
        'removed parameter cursor in query (breaking)',
        'added parameter sort in query (breaking)',
        'added field items[].nickname in response 200 (application/json)',
        'added header X-Total in response 200',
      ],
      'GET /v2/orders/{id}': ['removed status 404 (breaking)'],
      'GET /v2/orders/{id}/items': ['added endpoint '],
    });
    expect(guide.operations.find((operation) => operation.path === '/v2/orders/{id}/items')?.successor_path).toBe(
      '/v3/orders/{id}/items',
    );
  });

  it('finds nothing between a document and itself', () => {
    expect(buildMigrationGuide(1, 2, committedDocument(1), asVersion(committedDocument(1), 1, 2))).toEqual({
      version: 1,
      successor: 2,
      breaking_changes: 0,
      compatible_changes: 0,
      operations: [],
      other_changes: [],
    });
  });

  it(
    "lists the policy's declarations first on each operation of their resource, then only what they do not " +
      'explain',
    () => {
      const after = ordersDocument(2);
      const before = deriveDocument(after, stepsOf(ORDERS_V1_CHANGES)) as Json;
      // One difference no declaration explains: version 1's order path lost its 404.
      delete node(before, 'paths', '/v1/orders/{id}', 'get', 'responses')['404'];
      const guide = buildMigrationGuide(1, 2, before, after, ORDERS_V1_CHANGES);
      const declared = [
        {
          change: 'renamed',
          kind: 'field',
          name: 'user_id',
          to: 'customer_id',
          where: '',
          declared: true,
          breaking: true,
          description: 'The customer identifier under its old name.',
        },
        {
          change: 'converted',
          kind: 'field',
          name: 'total',
          to: 'total_cents',
          factor: 100,
          from_type: 'decimal',
          to_type: 'integer',
          where: '',
          declared: true,
          breaking: true,
          description: 'total_cents is total × 100.',
        },
        {
          change: 'added',
          kind: 'field',
          name: 'currency',
          where: '',
          declared: true,
          breaking: false,
          description: 'currency is new.',
        },
      ];
      expect(guide.operations.map(({ path, changes }) => ({ path, changes }))).toEqual([
        {
          path: '/v1/orders/{id}',
          changes: [
            ...declared,
            expect.objectContaining({ change: 'added', kind: 'status', name: '404', breaking: false }),
          ],
        },
        { path: '/api/v1/orders/{id}', changes: declared },
      ]);
      expect(guide).toMatchObject({ breaking_changes: 4, compatible_changes: 3 });
    },
  );

  it('maps, removes and lists a declaration whose field the documents never show', () => {
    const after = ordersDocument(2);
    const changes = [
      { resource: '/orders/:id', op: 'map' as const, field: 'state', values: { open: 'pending' } },
      { resource: '/orders/:id', op: 'remove' as const, field: 'legacy' },
    ];
    const guide = buildMigrationGuide(1, 2, deriveDocument(after, stepsOf(changes)), after, changes);
    expect(guide.operations[0]?.changes).toEqual([
      {
        change: 'mapped',
        kind: 'field',
        name: 'state',
        values: { open: 'pending' },
        where: '',
        declared: true,
        breaking: true,
        description: 'state takes other values.',
      },
      {
        change: 'removed',
        kind: 'field',
        name: 'legacy',
        where: '',
        declared: true,
        breaking: true,
        description: 'legacy is gone.',
      },
    ]);
  });

  it('lists each operation of the second edition in its words, and nothing its structure explains again', () => {
    const after = ordersDocument(2);
    const purchases = '/purchases/:id';
    const changes: VersionChange[] = [
      { resource: purchases, op: 'path', to: '/orders/:id' },
      { resource: purchases, op: 'move', field: 'money.currency', to: 'currency' },
      { resource: purchases, op: 'status', from: 404, to: 410 },
      { resource: purchases, op: 'rename', field: 'reason', to: 'details', on: 'error' },
      { resource: purchases, op: 'link', field: 'id' },
    ];
    const resources = [
      { path: purchases, versions: [1] },
      { path: '/orders/:id', versions: [2] },
    ];
    const before = deriveDocument(after, stepsOf(changes, resources)) as Json;
    const guide = buildMigrationGuide(
      1,
      2,
      before,
      after,
      changes,
      resources.map((resource) => ({ ...resource })),
    );
    const [bare, api] = guide.operations;
    expect([bare?.path, bare?.successor_path, api?.path, api?.successor_path]).toEqual([
      '/v1/purchases/{id}',
      '/v2/orders/{id}',
      '/api/v1/purchases/{id}',
      '/api/v2/orders/{id}',
    ]);
    expect(
      bare?.changes.map((change) => [change.change, change.kind, change.name, change.to, change.breaking]),
    ).toEqual([
      ['endpoint renamed', 'endpoint', '/v1/purchases/{id}', '/v2/orders/{id}', true],
      ['moved', 'field', 'money.currency', 'currency', true],
      ['status changed', 'status', '410', '404', true],
      ['renamed', 'field', 'reason', 'details', true],
      ['links rewritten', 'field', 'id', undefined, false],
    ]);
    expect(bare?.changes.map((change) => declaredSentence(change).toString())).toEqual([
      'endpoint renamed <code>/v1/purchases/{id}</code> → <code>/v2/orders/{id}</code>',
      'moved <code>money.currency</code> → <code>currency</code>',
      'status changed <code>410</code> → <code>404</code>',
      'renamed <code>reason</code> → <code>details</code> (error responses)',
      'links rewritten in <code>id</code>',
    ]);
    // Nothing the declarations explain shows again as a difference of the documents.
    expect(guide).toMatchObject({ breaking_changes: 8, compatible_changes: 2, other_changes: [] });
  });

  it('says what a wrapped body, a renamed header and a module are', () => {
    const changes: VersionChange[] = [
      { resource: '/orders/:id', op: 'envelope', field: 'data' },
      { resource: '/orders/:id', op: 'header', name: 'Total-Count', to: 'X-Total-Count' },
      { resource: '/orders/:id', op: 'module', module: 'changes/split-name.mjs', description: 'One name, split.' },
      { resource: '/orders/:id', op: 'link', field: 'Link' },
    ];
    const after = ordersDocument(2);
    const guide = buildMigrationGuide(1, 2, asVersion(after, 2, 1), after, changes);
    expect(
      guide.operations[0]?.changes.map((change) => [
        change.change,
        declaredSentence(change).toString(),
        change.description,
      ]),
    ).toEqual([
      ['wrapped', 'wrapped in <code>data</code>', 'The successor wraps the body in data.'],
      [
        'header renamed',
        'header renamed <code>X-Total-Count</code> → <code>Total-Count</code>',
        'The header X-Total-Count is called Total-Count in the successor.',
      ],
      ['translated by module', 'translated by module <code>changes/split-name.mjs</code>', 'One name, split.'],
      [
        'links rewritten',
        'links rewritten in the <code>Link</code> header',
        "The Link header's links name the successor's paths.",
      ],
    ]);
  });
});
