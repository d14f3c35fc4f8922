// /api/users and /api/users/*: forwarded with no version logic.
import { describe, expect, it } from 'vitest';
import { stubbedGatewayPerTest } from '../support/helpers.js';

const fixture = stubbedGatewayPerTest();
const get = (url: string, headers: Record<string, string> = {}) =>
  fixture.gateway.app.inject({ method: 'GET', url, headers });

describe('users: proxied unchanged', () => {
  it('passes method, path, query, body and Content-Type through', async () => {
    const res = await fixture.gateway.app.inject({
      method: 'POST',
      url: '/api/users?trace=1',
      headers: { 'content-type': 'application/json' },
      payload: '{"name":"Ada","email":"ada@example.com"}',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      method: 'POST',
      url: '/api/users?trace=1',
      contentType: 'application/json',
      bodyBytes: 40,
    });
    expect(fixture.stub.seen[0]?.body.toString()).toBe('{"name":"Ada","email":"ada@example.com"}');
    expect(res.headers).not.toHaveProperty('vary');
  });

  it('passes an Idempotency-Key through byte for byte (the backend owns the rule)', async () => {
    fixture.stub.seen.length = 0;
    const key = '"8e03978e-40d5-43e8-bc93-6894a57f9324:~!"';
    const res = await fixture.gateway.app.inject({
      method: 'POST',
      url: '/api/users',
      headers: { 'idempotency-key': key },
      payload: '{"name":"Ada","email":"ada@example.com"}',
    });
    expect(res.statusCode).toBe(200);
    expect(fixture.stub.seen.map((request) => request.headers['idempotency-key'])).toEqual([key]);
  });

  it.each(['foo', 'application/x-www-form-urlencoded', 'text/plain; charset=utf-8', 'garbage/;;'])(
    'streams a body with Content-Type %j to the backend untouched instead of answering 415',
    async (contentType) => {
      const res = await fixture.gateway.app.inject({
        method: 'PUT',
        url: '/api/users/user-1',
        headers: { 'content-type': contentType },
        payload: '{"name":"x"}',
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ method: 'PUT', url: '/api/users/user-1', contentType, bodyBytes: 12 });
    },
  );

  it('passes the query string byte for byte, repeated and percent-encoded keys included', async () => {
    const res = await fixture.gateway.app.inject({ method: 'GET', url: '/api/users/user-1?a=1&a=2&q=%20x%2B&flag' });
    expect(res.statusCode).toBe(200);
    expect(res.json<{ url: string }>().url).toBe('/api/users/user-1?a=1&a=2&q=%20x%2B&flag');
  });

  it('streams a body larger than 1 MiB to the backend (the backend owns the limit)', async () => {
    const payload = `{"name":"${'a'.repeat(1_048_576)}"}`;
    const res = await fixture.gateway.app.inject({
      method: 'POST',
      url: '/api/users',
      headers: { 'content-type': 'application/json' },
      payload,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json<{ bodyBytes: number }>().bodyBytes).toBe(payload.length);
  });

  it('passes the backend 405 and its Allow header through', async () => {
    const res = await fixture.gateway.app.inject({ method: 'PATCH', url: '/api/users', payload: '{}' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, POST');
    expect(res.json()).toEqual({ error: 'method not allowed', code: 405 });
  });

  it('proxies /api/users/ paths only', async () => {
    expect((await get('/api/users/user-1/orders?x=1')).json()).toMatchObject({ url: '/api/users/user-1/orders?x=1' });
    expect((await get('/api/usersx')).statusCode).toBe(404);
    expect((await get('/api/other')).statusCode).toBe(404);
  });
});
