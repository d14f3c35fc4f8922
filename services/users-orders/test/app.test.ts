import { describe, expect, it } from 'vitest';
import { JSON_TYPE, testApp, UNSERVED_VERSION } from './helpers.js';

describe('errors outside the handlers', () => {
  it.each([
    ['PATCH', '/api/users/user-1', 'GET, HEAD, PUT, DELETE'],
    ['POST', '/api/users/user-1', 'GET, HEAD, PUT, DELETE'],
    ['DELETE', '/api/users', 'GET, HEAD, POST'],
    ['PATCH', '/api/users/page', 'GET, HEAD'],
    ['POST', '/api/users/page?limit=5', 'GET, HEAD'],
    ['POST', '/v2/orders/ord-1001', 'GET, HEAD'],
    ['DELETE', '/api/v2/orders/ord-1001', 'GET, HEAD'],
  ])('answers %s %s with 405 and Allow: %s', async (method, url, allow) => {
    const app = await testApp();
    const res = await app.inject({ method: method as 'PATCH', url, payload: method === 'POST' ? '{}' : undefined });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe(allow);
    expect(res.headers['content-type']).toMatch(JSON_TYPE);
    expect(res.json()).toEqual({ error: 'method not allowed', code: 405 });
  });

  it.each(['/api/user', '/api/users/user-1/orders', `/v${UNSERVED_VERSION}/orders/ord-1001`, '/'])(
    'answers the unmatched path %s with JSON 404 not found',
    async (url) => {
      const app = await testApp();
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toMatch(JSON_TYPE);
      expect(res.json()).toEqual({ error: 'not found', code: 404 });
    },
  );
});
