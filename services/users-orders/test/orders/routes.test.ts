import { describe, expect, it } from 'vitest';
import { seedRecords } from '../../src/resources/seeds.js';
import { JSON_TYPE, testApp } from '../helpers.js';

describe('GET order representations', () => {
  it.each(['', '/api'])('answers %s/v1/orders/:id with exactly id, user_id and total = cents / 100', async (prefix) => {
    const app = await testApp();
    const res = await app.inject({ method: 'GET', url: `${prefix}/v1/orders/ord-1001` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(JSON_TYPE);
    expect(res.json()).toStrictEqual({ id: 'ord-1001', user_id: 'user-1', total: 19.99 });
    // The gateway owns the version policy; the backend adds no deprecation headers.
    expect(res.headers).not.toHaveProperty('deprecation');
    expect(res.headers).not.toHaveProperty('sunset');
    expect(res.headers).not.toHaveProperty('link');
  });

  it.each(['', '/api'])(
    'answers %s/v2/orders/:id with exactly id, customer_id, total_cents and currency',
    async (prefix) => {
      const app = await testApp();
      const res = await app.inject({ method: 'GET', url: `${prefix}/v2/orders/ord-1002` });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(JSON_TYPE);
      expect(res.json()).toStrictEqual({ id: 'ord-1002', customer_id: 'user-2', total_cents: 5, currency: 'USD' });
    },
  );

  it('presents 5 cents as 0.05 in version 1', async () => {
    const app = await testApp();
    expect((await app.inject({ method: 'GET', url: '/v1/orders/ord-1002' })).json()).toMatchObject({ total: 0.05 });
  });

  it.each(['v1', 'v2'])(
    'answers an unknown order under /api/%s with 404 text/plain order not found',
    async (version) => {
      const app = await testApp();
      const res = await app.inject({ method: 'GET', url: `/api/${version}/orders/ord-9999` });
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.body).toBe('order not found');
    },
  );

  it.each(['v1', 'v2'])('answers an unknown order under bare /%s with the JSON ErrorResponse', async (version) => {
    const app = await testApp();
    const res = await app.inject({ method: 'GET', url: `/${version}/orders/ord-9999` });
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
