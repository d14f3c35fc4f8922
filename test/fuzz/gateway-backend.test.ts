import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@version-router/platform/logger';
import { buildApp as buildBackend } from '../../services/users-orders/src/app.js';
import { seedRecords } from '../../services/users-orders/src/resources/seeds.js';
import { buildTestGateway, type TestGateway } from '../../gateway/test/support/helpers.js';

// Whatever the API-Version header and the path, the gateway (in front of the real backend, on
// a loopback port) never answers 5xx and stays within the statuses its routes define. Fixed seeds keep CI
// deterministic; a failure prints the seed and the shrunk counterexample.
const SEED = 20261122;
const ALLOWED = [200, 400, 404, 405, 406, 410];

let backend: FastifyInstance;
let gateway: TestGateway;

beforeAll(async () => {
  backend = await buildBackend({
    logger: createLogger('silent', 'fuzz-backend'),
    seeds: seedRecords({ orders: [{ id: 'ord-1001', customer_id: 'user-1', total_cents: 1999, currency: 'EUR' }] }),
    clock: Date.now,
  });
  const url = await backend.listen({ host: '127.0.0.1', port: 0 });
  gateway = await buildTestGateway(url);
});
afterAll(async () => {
  await gateway.app.close();
  await backend.close();
});

/** Header values Node would put on the wire: visible ASCII, spaces and tabs inside, no CR/LF. */
const headerValue = fc.oneof(
  fc.constantFrom('1', '2', '3', '0', '01', '1.0', '2, 1', ' 2', '2 ', '-1', '1e0', '', 'v2', '２'),
  fc.integer({ min: -5, max: 100_000 }).map(String),
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength: 20 }),
);

/** Paths near the real routes (versions, prefixes, ids) and arbitrary ones, percent-encoded where needed. */
const segment = fc.oneof(
  fc.constantFrom(
    'orders',
    'v1',
    'v2',
    'v3',
    'v0',
    'api',
    'users',
    'page',
    'ord-1001',
    'missing',
    '..',
    '.',
    '',
    '%2F',
    '%00',
    '%ZZ',
  ),
  fc.string({ maxLength: 10 }).map(encodeURIComponent),
);
const path = fc.oneof(
  fc
    .tuple(fc.constantFrom('', '/api'), fc.constantFrom('v1', 'v2', 'v3', 'V1', 'v01'), segment)
    .map(([prefix, version, id]) => `${prefix}/${version}/orders/${id}`),
  fc.tuple(fc.constantFrom('/orders/', '/api/orders/', '/api/users/'), segment).map(([head, id]) => `${head}${id}`),
  fc.array(segment, { maxLength: 5 }).map((segments) => `/${segments.join('/')}`),
  fc.webPath().map((text) => (text.startsWith('/') ? text : `/${text}`)),
);
const query = fc.oneof(
  fc.constant(''),
  fc.webQueryParameters().map((text) => `?${text}`),
  fc.constantFrom('?limit=0', '?cursor=%%', '?v=2'),
);
/** POST would create users (201); every other method the routes know or refuse. */
const method = fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS');

describe('fuzz: the gateway never answers 5xx', () => {
  it('arbitrary API-Version values on the three order forms', async () => {
    const forms = fc.constantFrom(
      '/orders/ord-1001',
      '/v1/orders/ord-1001',
      '/v2/orders/ord-1001',
      '/api/v1/orders/ord-1001',
      '/orders/missing',
    );
    await fc.assert(
      fc.asyncProperty(forms, fc.option(headerValue, { nil: undefined }), async (url, version) => {
        const res = await gateway.app.inject({
          method: 'GET',
          url,
          headers: version === undefined ? {} : { 'api-version': version },
        });
        expect(ALLOWED).toContain(res.statusCode);
        expect(res.headers.vary).toContain('API-Version');
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('arbitrary paths, queries, methods and API-Version headers', async () => {
    await fc.assert(
      fc.asyncProperty(
        method,
        path,
        query,
        fc.option(headerValue, { nil: undefined }),
        async (verb, where, search, version) => {
          const res = await gateway.app.inject({
            method: verb as 'GET',
            url: `${where}${search}`,
            headers: version === undefined ? {} : { 'api-version': version },
          });
          expect(ALLOWED).toContain(res.statusCode);
          if (
            res.statusCode >= 400 &&
            res.headers['content-type']?.toString().startsWith('application/json') === true &&
            verb !== 'HEAD'
          ) {
            expect(res.json<{ code: number }>().code).toBe(res.statusCode);
          }
        },
      ),
      { seed: SEED, numRuns: 400 },
    );
  });
});
