import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GUIDE_PAGE_CSP } from '../../src/changes/page.js';
import { buildTestGateway, designPolicyFile, type TestGateway } from '../support/helpers.js';
import { ordersDocument, startDocumentBackend, type DocumentBackend } from '../support/documents.js';
import { ORDERS_V1_CHANGES } from '../support/orders-v1.js';

const FIELDS_V1_TO_V2 = [
  { change: 'removed', kind: 'field', name: 'user_id', where: 'response 200 (application/json)', breaking: true },
  { change: 'removed', kind: 'field', name: 'total', where: 'response 200 (application/json)', breaking: true },
  { change: 'added', kind: 'field', name: 'customer_id', where: 'response 200 (application/json)', breaking: false },
  { change: 'added', kind: 'field', name: 'total_cents', where: 'response 200 (application/json)', breaking: false },
  { change: 'added', kind: 'field', name: 'currency', where: 'response 200 (application/json)', breaking: false },
];
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

interface Guide {
  version: number;
  successor: number;
  breaking_changes: number;
  operations: {
    method: string;
    path: string;
    successor_path: string;
    forms: { form: string; call: string; instead: string }[];
    changes: { change: string; kind: string; name: string; where: string; breaking: boolean }[];
  }[];
}

let backend: DocumentBackend;
let gateway: TestGateway;

beforeEach(async () => {
  backend = await startDocumentBackend();
  gateway = await buildTestGateway(backend.url, { backendTimeoutMs: 500 });
});
afterEach(async () => {
  await gateway.app.close();
  await backend.close();
});

const get = (url: string, headers: Record<string, string> = {}) => gateway.app.inject({ method: 'GET', url, headers });
const fieldsOf = (guide: Guide) =>
  guide.operations.map(({ changes }) =>
    changes.map(({ change, kind, name, where, breaking }) => ({ change, kind, name, where, breaking })),
  );

describe('GET /versions/{n}/changes', () => {
  it(
    'answers JSON by default: per operation, user_id and total removed (breaking), customer_id, total_cents, ' +
      'currency added',
    async () => {
      for (const accept of [undefined, '*/*', 'application/json', 'application/json, text/html;q=0.5']) {
        const res = await get('/versions/1/changes', accept === undefined ? {} : { accept });
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(res.headers.vary).toBe('Accept');
        const guide = res.json<Guide>();
        expect(guide).toMatchObject({ version: 1, successor: 2, breaking_changes: 4 });
        expect(
          guide.operations.map(({ method, path, successor_path }) => `${method} ${path} → ${successor_path}`),
        ).toEqual(['GET /v1/orders/{id} → /v2/orders/{id}', 'GET /api/v1/orders/{id} → /api/v2/orders/{id}']);
        expect(fieldsOf(guide)).toEqual([FIELDS_V1_TO_V2, FIELDS_V1_TO_V2]);
      }
    },
  );

  it('fetches both documents from the backend with the request id', async () => {
    await get('/versions/1/changes', { 'x-request-id': 'guide-1' });
    expect(backend.seen.map(({ url }) => url).sort()).toEqual(['/v1/openapi.json', '/v2/openapi.json']);
    expect(backend.seen.map(({ headers }) => headers['x-request-id'])).toEqual(['guide-1', 'guide-1']);
  });

  it('answers a page for Accept: text/html, under its own strict CSP, loading and running nothing', async () => {
    for (const accept of ['text/html', BROWSER_ACCEPT]) {
      const res = await get('/versions/1/changes', { accept });
      expect(res.statusCode).toBe(200);
      expect(res.headers).toMatchObject({
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': GUIDE_PAGE_CSP,
        'x-content-type-options': 'nosniff',
        vary: 'Accept',
      });
      expect(GUIDE_PAGE_CSP).toMatch(
        /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]+=*'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'$/,
      );
      expect(res.body).toContain('<title>Moving from v1 to v2</title>');
      expect(res.body).toContain(
        'Version 1 is deprecated from 2026-06-01; it is removed on 2027-01-01 (answered 410 from then on).',
      );
      expect(res.body).toContain('<p class="summary">4 breaking changes and 6 compatible changes in 2 operations.');
      expect(res.body).toContain('<h2><code>GET /v1/orders/{id}</code> → <code>GET /v2/orders/{id}</code></h2>');
      expect(res.body).toContain(
        '<tr class="is-breaking"><td>removed</td><td>field</td><td><code>user_id</code></td><td ' +
          'class="where">response 200 (application/json)</td><td><span class="tag breaking">breaking</span></td>',
      );
      expect(res.body).toContain(
        '<tr class="is-compatible"><td>added</td><td>field</td><td><code>currency</code></td>',
      );
      expect(res.body).toContain('Without a declaration, a renamed field shows as one field removed and one added');
      expect(res.body).not.toMatch(/<script|<link|<img|@import|url\(|src=/i);
      expect([...res.body.matchAll(/<style>/g)]).toHaveLength(1);
    }
  });

  it(
    'names every form a client calls an operation in (path, header, query, media type) and what it sends instead, ' +
      'in the JSON and on the page',
    async () => {
      const all = await buildTestGateway(backend.url, {
        backendTimeoutMs: 500,
        policy: {
          ...designPolicyFile,
          schemes: ['path', 'header', 'query', 'media_type'],
          query_parameter: 'api-version',
        },
      });
      try {
        const guide = (await all.app.inject({ url: '/versions/1/changes' })).json<Guide>();
        expect(guide.operations.map(({ path, forms }) => [path, forms])).toEqual([
          [
            '/v1/orders/{id}',
            [
              { form: 'path', call: 'GET /v1/orders/{id}', instead: 'GET /v2/orders/{id}' },
              {
                form: 'header',
                call: 'GET /orders/{id} with API-Version: 1',
                instead: 'GET /orders/{id} with API-Version: 2',
              },
              { form: 'query', call: 'GET /orders/{id}?api-version=1', instead: 'GET /orders/{id}?api-version=2' },
              {
                form: 'media_type',
                call: 'GET /orders/{id} with Accept: application/vnd.version-router.v1+json',
                instead: 'GET /orders/{id} with Accept: application/vnd.version-router.v2+json',
              },
            ],
          ],
          [
            '/api/v1/orders/{id}',
            [{ form: 'path', call: 'GET /api/v1/orders/{id}', instead: 'GET /api/v2/orders/{id}' }],
          ],
        ]);
        const page = await all.app.inject({ url: '/versions/1/changes', headers: { accept: 'text/html' } });
        expect(page.body).toContain(
          '<tr><td><code>GET /orders/{id} with API-Version: 1</code></td><td><code>GET /orders/{id} with ' +
            'API-Version: 2</code></td></tr>',
        );
        expect(page.body).toContain(
          '<tr><td><code>GET /orders/{id}?api-version=1</code></td><td><code>GET /orders/{id}?api-version=2' +
            '</code></td></tr>',
        );
        expect(page.body).toContain('<thead><tr><th>you call</th><th>send instead</th></tr></thead>');
      } finally {
        await all.app.close();
      }
    },
  );

  it('names only the forms the policy reads: path and header by default', async () => {
    const guide = (await get('/versions/1/changes')).json<Guide>();
    expect(guide.operations.map(({ forms }) => forms.map(({ form }) => form))).toEqual([['path', 'header'], ['path']]);
  });

  it.each([
    '/versions/2/changes',
    '/versions/9/changes',
    '/versions/0/changes',
    '/versions/01/changes',
    '/versions/x/changes',
    '/versions/1.0/changes',
  ])('answers 404 not found for %s (no such version, or no successor), without asking the backend', async (url) => {
    const res = await get(url, { accept: 'text/html' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'not found', code: 404 });
    expect(backend.seen).toHaveLength(0);
  });

  it('follows a changed document and a reloaded policy, and reuses the guide while neither changes', async () => {
    const first = await get('/versions/1/changes', { accept: 'text/html' });
    expect((await get('/versions/1/changes', { accept: 'text/html' })).body).toBe(first.body);

    const v2 = ordersDocument(2) as {
      paths: Record<
        string,
        {
          get: {
            responses: Record<string, { content: Record<string, { schema: { properties: Record<string, unknown> } }> }>;
          };
        }
      >;
    };
    const properties =
      v2.paths['/v2/orders/{id}']?.get.responses['200']?.content['application/json']?.schema.properties ?? {};
    properties.note = { type: 'string' };
    backend.documents.set('/v2/openapi.json', JSON.stringify(v2));
    const changed = (await get('/versions/1/changes')).json<Guide>();
    expect(changed.operations[0]?.changes.map(({ name }) => name)).toEqual([
      'user_id',
      'total',
      'customer_id',
      'total_cents',
      'currency',
      'note',
    ]);

    gateway.setNextPolicy({
      ...designPolicyFile,
      versions: [{ ...designPolicyFile.versions[0], sunset: '2027-03-01T00:00:00Z' }, designPolicyFile.versions[1]],
    });
    expect((await (await gateway.admin()).inject({ method: 'POST', url: '/-/reload' })).statusCode).toBe(200);
    expect((await get('/versions/1/changes', { accept: 'text/html' })).body).toContain('it is removed on 2027-03-01');
  });

  it(
    'answers 502 bad gateway when the backend has no document or sends one that is not JSON, and 504 when it does ' +
      'not answer in time',
    async () => {
      backend.documents.delete('/v2/openapi.json');
      const missing = await get('/versions/1/changes');
      expect(missing.statusCode).toBe(502);
      expect(missing.json()).toEqual({ error: 'bad gateway', code: 502 });

      backend.documents.set('/v2/openapi.json', '<html>');
      expect((await get('/versions/1/changes')).json()).toEqual({ error: 'bad gateway', code: 502 });

      backend.silent = true;
      const slow = await get('/versions/1/changes', { accept: 'text/html' });
      expect(slow.statusCode).toBe(504);
      expect(slow.json()).toEqual({ error: 'gateway timeout', code: 504 });
      expect(
        gateway.logs.some((line) => line.msg === "migration guide: the backend's OpenAPI documents are unavailable"),
      ).toBe(true);
    },
  );

  it('answers 502 bad gateway, naming no internal address, when the backend refuses connections', async () => {
    await backend.close();
    const res = await get('/versions/1/changes');
    expect(res.statusCode).toBe(502);
    expect(res.body).toBe('{"error":"bad gateway","code":502}');
  });

  it('is served on the admin port too, where the status page links it', async () => {
    const admin = await gateway.admin();
    const res = await admin.inject({ method: 'GET', url: '/versions/1/changes', headers: { accept: 'text/html' } });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<title>Moving from v1 to v2</title>');
    expect((await admin.inject({ method: 'GET', url: '/' })).body).toContain(
      '<a href="/versions/1/changes">what changes</a>',
    );
  });

  it('refuses a resource template that would shadow the guide', async () => {
    gateway.setNextPolicy({ ...designPolicyFile, resources: ['/versions/:id/changes'] });
    const res = await (await gateway.admin()).inject({ method: 'POST', url: '/-/reload' });
    expect(res.json()).toMatchObject({
      error: 'invalid version policy',
      details: 'invalid at resources.0: "/versions/:id/changes" collides with /versions/:version/changes',
    });
  });
});

describe('GET /versions/{n}/changes of a version declared as changes', () => {
  const policy = {
    ...designPolicyFile,
    versions: [{ ...designPolicyFile.versions[0], changes: ORDERS_V1_CHANGES }, designPolicyFile.versions[1]],
  };
  let declaring: TestGateway;
  beforeEach(async () => {
    declaring = await buildTestGateway(backend.url, { policy });
  });
  afterEach(async () => {
    await declaring.app.close();
  });

  it(
    "lists the declarations as JSON, derives version 1's document from version 2's and finds nothing " + 'else',
    async () => {
      const res = await declaring.app.inject({ url: '/versions/1/changes' });
      expect(res.statusCode).toBe(200);
      const guide = res.json<Guide & { compatible_changes: number }>();
      const declared = [
        {
          change: 'renamed',
          kind: 'field',
          name: 'user_id',
          where: '',
          breaking: true,
          declared: true,
          to: 'customer_id',
          description: 'The customer identifier under its old name.',
        },
        {
          change: 'converted',
          kind: 'field',
          name: 'total',
          where: '',
          breaking: true,
          declared: true,
          to: 'total_cents',
          factor: 100,
          from_type: 'decimal',
          to_type: 'integer',
          description: 'total_cents is total × 100.',
        },
        {
          change: 'added',
          kind: 'field',
          name: 'currency',
          where: '',
          breaking: false,
          declared: true,
          description: 'currency is new.',
        },
      ];
      expect(guide.operations.map(({ path, changes }) => ({ path, changes }))).toEqual([
        { path: '/v1/orders/{id}', changes: declared },
        { path: '/api/v1/orders/{id}', changes: declared },
      ]);
      expect(guide).toMatchObject({ breaking_changes: 4, compatible_changes: 2 });
      // Only the successor's document: version 1 has none of its own at a backend that serves only version 2.
      expect(new Set(backend.seen.map(({ url }) => url))).toEqual(new Set(['/v2/openapi.json']));
    },
  );

  it('says each declaration in a sentence on the page', async () => {
    const res = await declaring.app.inject({ url: '/versions/1/changes', headers: { accept: 'text/html' } });
    expect(res.statusCode).toBe(200);
    const text = res.body.replace(/<[^>]+>/g, '');
    expect(text).toContain('renamed user_id → customer_id breaking The customer identifier under its old name.');
    expect(text).toContain('converted total (decimal) → total_cents (integer, × 100) breaking');
    expect(text).toContain('added currency compatible');
    expect(res.body).toContain(
      '<li class="is-breaking">renamed <code>user_id</code> → <code>customer_id</code> <span class="tag ' +
        'breaking">breaking</span>',
    );
    // Nothing else differs: no table of the documents' differences.
    expect(res.body).not.toContain('<table class="changes"');
  });
});
