import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@version-router/platform/logger';
import { buildApp as buildBackend } from '../../services/users-orders/src/app.js';
import { seedRecords } from '../../services/users-orders/src/resources/seeds.js';
import { buildTestGateway, type TestGateway } from '../../gateway/test/support/helpers.js';

// SPEC's order version 1 is declared in ops/versions.json as changes to version 2; the gateway presents it from the
// backend's version 2. Here, in every form a client can name it, through the gateway in front of the real backend:
// exactly SPEC's fields and types, and version 1's headers.

const shipped = JSON.parse(readFileSync(new URL('../../ops/versions.json', import.meta.url), 'utf8')) as Record<
  string,
  unknown
>;
/** Version 1's sunset as its Sunset header writes it. */
const V1_SUNSET = new Date(
  Date.parse(
    (shipped.versions as { version: number; sunset?: string }[]).find(({ version }) => version === 1)?.sunset ?? '',
  ),
).toUTCString();
/** The shipped policy with every scheme on, so the query and media type forms are served too. */
const everyScheme = { ...shipped, schemes: ['path', 'header', 'query', 'media_type'] };

let backend: FastifyInstance;
let gateway: TestGateway;

beforeAll(async () => {
  backend = await buildBackend({
    logger: createLogger('silent', 'spec-v1-backend'),
    seeds: seedRecords({ orders: [{ id: 'ord-1001', customer_id: 'user-1', total_cents: 1999, currency: 'EUR' }] }),
    clock: Date.now,
  });
  gateway = await buildTestGateway(await backend.listen({ host: '127.0.0.1', port: 0 }), { policy: everyScheme });
});
afterAll(async () => {
  await gateway.app.close();
  await backend.close();
});

const V1_BODY = '{"id":"ord-1001","user_id":"user-1","total":19.99}';

describe("SPEC's order version 1 through the gateway, from a backend of version 2", () => {
  it.each([
    ['/v1/orders/ord-1001', {}, '</v2/orders/ord-1001>; rel="successor-version"'],
    ['/api/v1/orders/ord-1001', {}, '</api/v2/orders/ord-1001>; rel="successor-version"'],
    ['/orders/ord-1001', { 'api-version': '1' }, '</v2/orders/ord-1001>; rel="successor-version"'],
    ['/orders/ord-1001?version=1', {}, '</v2/orders/ord-1001>; rel="successor-version"'],
    [
      '/orders/ord-1001',
      { accept: 'application/vnd.version-router.v1+json' },
      '</v2/orders/ord-1001>; rel="successor-version"',
    ],
  ])(
    'GET %s %j: id, user_id (string), total (number 19.99), and the deprecation headers',
    async (url, headers, link) => {
      const res = await gateway.app.inject({ method: 'GET', url, headers });
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe(V1_BODY);
      const order = res.json<Record<string, unknown>>();
      expect(Object.keys(order)).toEqual(['id', 'user_id', 'total']);
      expect([typeof order.id, typeof order.user_id, typeof order.total]).toEqual(['string', 'string', 'number']);
      expect(res.headers).toMatchObject({
        'content-type': 'application/json; charset=utf-8',
        'content-length': String(V1_BODY.length),
        'api-version': '1',
        deprecation: 'true',
        sunset: V1_SUNSET,
        link,
      });
      expect(res.headers.vary).toContain('API-Version');
    },
  );

  it("answers an unknown order with the backend's own not-found forms, with version 1's headers", async () => {
    const bare = await gateway.app.inject({ method: 'GET', url: '/v1/orders/ord-missing' });
    expect(bare.statusCode).toBe(404);
    expect(bare.json()).toMatchObject({ error: 'order not found', code: 404 });
    expect(bare.headers.deprecation).toBe('true');
    const api = await gateway.app.inject({ method: 'GET', url: '/api/v1/orders/ord-missing' });
    expect(api.statusCode).toBe(404);
    expect(api.headers['content-type']).toMatch(/^text\/plain/);
  });

  it('leaves version 2 as the backend sends it', async () => {
    const res = await gateway.app.inject({ method: 'GET', url: '/v2/orders/ord-1001' });
    expect(res.body).toBe('{"id":"ord-1001","customer_id":"user-1","total_cents":1999,"currency":"EUR"}');
  });
});
