import { readFileSync } from 'node:fs';
import type { OpenAPIV3_1 } from 'openapi-types';
import { describe, expect, it } from 'vitest';
import { compareDocuments, type Compatibility } from '@version-router/platform/compatibility';

/** The committed version 2 document, as JSON, so a case can edit a copy of it anywhere. */
const committed = JSON.parse(
  readFileSync(new URL('../../openapi/v2.json', import.meta.url), 'utf8'),
) as OpenAPIV3_1.Document;

// The cases reach into a copy of the document by path, as a person editing the JSON would; typing every
// step would only restate the document.
/* eslint-disable
  @typescript-eslint/no-explicit-any,
  @typescript-eslint/no-unsafe-member-access,
  @typescript-eslint/no-unsafe-assignment,
  @typescript-eslint/no-unsafe-call,
  @typescript-eslint/no-unsafe-return
*/
type Loose = any;

const schemaOf = (response: Loose): Loose => response.content['application/json'].schema;
const order200 = (document: Loose): Loose => schemaOf(document.paths['/v2/orders/{id}'].get.responses['200']);
const user200 = (document: Loose): Loose => schemaOf(document.paths['/api/users/{id}'].get.responses['200']);
const createBody = (document: Loose): Loose =>
  document.paths['/api/users'].post.requestBody.content['application/json'].schema;
const pageParams = (document: Loose): Loose[] => document.paths['/api/users/page'].get.parameters;

const cases: [string, Compatibility, (document: Loose) => void][] = [
  // Breaking changes (a new major version is required).
  [
    'remove a response field',
    'breaking',
    (d) => {
      delete order200(d).properties.currency;
      order200(d).required.pop();
    },
  ],
  [
    'rename a response field',
    'breaking',
    (d) => {
      const s = order200(d);
      s.properties.currency_code = s.properties.currency;
      delete s.properties.currency;
      s.required[3] = 'currency_code';
    },
  ],
  [
    'make an optional response field required',
    'breaking',
    (d) => {
      schemaOf(d.paths['/api/users/page'].get.responses['200']).required.push('next_cursor');
    },
  ],
  [
    'make an optional request field required',
    'breaking',
    (d) => {
      d.paths['/api/users/{id}'].put.requestBody.content['application/json'].schema.required = ['name'];
    },
  ],
  [
    'change a field type',
    'breaking',
    (d) => {
      user200(d).properties.name.type = 'integer';
    },
  ],
  [
    'change a date format',
    'breaking',
    (d) => {
      user200(d).properties.created_at.format = 'date';
    },
  ],
  [
    'change the status of an existing scenario (404 → 410)',
    'breaking',
    (d) => {
      const r = d.paths['/api/users/{id}'].get.responses;
      r['410'] = r['404'];
      delete r['404'];
    },
  ],
  [
    'change the error text of a scenario',
    'breaking',
    (d) => {
      schemaOf(d.paths['/api/users/{id}'].get.responses['404']).properties.error.enum = ['no such user'];
    },
  ],
  [
    'change the plain-text body of the /api order 404',
    'breaking',
    (d) => {
      d.paths['/api/v2/orders/{id}'].get.responses['404'].content['text/plain'].schema.enum = ['missing'];
    },
  ],
  [
    'remove an endpoint (one method)',
    'breaking',
    (d) => {
      delete d.paths['/api/users/{id}'].delete;
    },
  ],
  [
    'remove an endpoint (a whole path)',
    'breaking',
    (d) => {
      delete d.paths['/v2/orders/{id}'];
    },
  ],
  [
    'add a required request field',
    'breaking',
    (d) => {
      createBody(d).properties.age = { type: 'integer' };
      createBody(d).required.push('age');
    },
  ],
  [
    'add a required query parameter',
    'breaking',
    (d) => {
      pageParams(d).push({ in: 'query', name: 'sort', required: true, schema: { type: 'string' } });
    },
  ],
  [
    'make validation stricter (minLength 1 → 2)',
    'breaking',
    (d) => {
      createBody(d).properties.name.minLength = 2;
    },
  ],
  [
    'make validation stricter (limit at most 50)',
    'breaking',
    (d) => {
      pageParams(d)[1].schema.maximum = 50;
    },
  ],
  [
    'remove a response header',
    'breaking',
    (d) => {
      delete d.paths['/api/users'].post.responses['201'].headers;
    },
  ],
  // Backward-compatible changes.
  [
    'add an optional response field',
    'non-breaking',
    (d) => {
      order200(d).properties.note = { type: 'string' };
    },
  ],
  [
    'add a response field that is always present',
    'non-breaking',
    (d) => {
      order200(d).properties.note = { type: 'string' };
      order200(d).required.push('note');
    },
  ],
  [
    'add an endpoint',
    'non-breaking',
    (d) => {
      d.paths['/api/users/{id}'].patch = { ...d.paths['/api/users/{id}'].put, operationId: 'patchUser' };
    },
  ],
  [
    'add an optional query parameter',
    'non-breaking',
    (d) => {
      pageParams(d).push({ in: 'query', name: 'sort', required: false, schema: { type: 'string' } });
    },
  ],
  [
    'add an optional request field',
    'non-breaking',
    (d) => {
      createBody(d).properties.age = { type: 'integer' };
    },
  ],
  [
    'relax validation (no minLength)',
    'non-breaking',
    (d) => {
      delete createBody(d).properties.name.minLength;
    },
  ],
  [
    'add a response header',
    'non-breaking',
    (d) => {
      d.paths['/api/users/{id}'].get.responses['200'].headers = { ETag: { schema: { type: 'string' } } };
    },
  ],
  [
    'add a status for a new scenario',
    'non-breaking',
    (d) => {
      const r = d.paths['/api/users/{id}'].get.responses;
      r['409'] = r['404'];
    },
  ],
  [
    'reword a description and a summary',
    'non-breaking',
    (d) => {
      order200(d).properties.currency.description = 'Currency.';
      d.paths['/api/users'].get.summary = 'Users';
    },
  ],
  [
    'reword a tag, add one',
    'non-breaking',
    (d) => {
      d.tags[0].description = 'Users.';
      d.tags.push({ name: 'invoices', description: 'Invoices.' });
    },
  ],
  [
    'change an example',
    'non-breaking',
    (d) => {
      d.paths['/v2/orders/{id}'].get.responses['200'].content['application/json'].example.total_cents = 5;
    },
  ],
];

describe('compareDocuments classifies each kind of change', () => {
  it.each(cases)('%s: %s', (_name, expected, edit) => {
    const after = structuredClone(committed);
    edit(after);
    const changes = compareDocuments(committed, after);
    expect(changes.length).toBeGreaterThan(0);
    const verdict = changes.some((change) => change.compatibility === 'breaking') ? 'breaking' : 'non-breaking';
    expect(verdict, JSON.stringify(changes, null, 2)).toBe(expected);
  });

  it('finds nothing between a document and its copy', () => {
    expect(compareDocuments(committed, structuredClone(committed))).toEqual([]);
  });
});
