import { describe, expect, it } from 'vitest';
import { seedRecords } from '../../src/resources/seeds.js';
import { JSON_TYPE, testApp } from '../helpers.js';

describe('GET order representations', () => {
  it.each(['', '/api'])(
    'answers %s/v1/orders/:id with its unknown-route 404: version 1 is presented by the gateway',
    async (prefix) => {
      const app = await testApp();
      const res = await app.inject({ method: 'GET', url: `${prefix}/v1/orders/ord-1001` });
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toMatch(JSON_TYPE);
      expect(res.json()).toEqual({ error: 'not found', code: 404 });
    },
  );

  it.each(['', '/api'])(
    'answers %s/v2/orders/:id with exactly id, customer_id, total_cents and currency',
    async (prefix) => {
      const app = await testApp();
      const res = await app.inject({ method: 'GET', url: `${prefix}/v2/orders/ord-1002` });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(JSON_TYPE);
      expect(res.json()).toStrictEqual({ id: 'ord-1002', customer_id: 'user-2', total_cents: 5, currency: 'USD' });
      // The gateway owns the version policy; the backend adds no deprecation headers.
      expect(res.headers).not.toHaveProperty('deprecation');
      expect(res.headers).not.toHaveProperty('sunset');
      expect(res.headers).not.toHaveProperty('link');
    },
  );

  it('answers an unknown order under /api/v2 with 404 text/plain order not found', async () => {
    const app = await testApp();
    const res = await app.inject({ method: 'GET', url: '/api/v2/orders/ord-9999' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toBe('order not found');
  });

  it('answers an unknown order under bare /v2 with the JSON ErrorResponse', async () => {
    const app = await testApp();
    const res = await app.inject({ method: 'GET', url: '/v2/orders/ord-9999' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(JSON_TYPE);
    expect(res.json()).toEqual({ error: 'order not found', code: 404 });
  });

  it('serves the orders it was built with', async () => {
    const app = await testApp({
      seeds: seedRecords({ orders: [{ id: 'x-1', customer_id: 'user-9', total_cents: 100, currency: 'GBP' }] }),
    });
    expect((await app.inject({ method: 'GET', url: '/v2/orders/x-1' })).json()).toMatchObject({ currency: 'GBP' });
    expect((await app.inject({ method: 'GET', url: '/v2/orders/ord-1001' })).statusCode).toBe(404);
  });
});
