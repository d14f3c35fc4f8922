// An API key in the query string: refused 400 on every route, never served, forwarded or logged.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/consumers/keys.js';
import { buildTestGateway, type TestGateway } from '../support/helpers.js';
import { startStubBackend, type StubBackend } from '../support/stub-backend.js';
import { consumerWithKey, createMemoryConsumerStore } from '../support/memory-store.js';

let stub: StubBackend;
beforeAll(async () => {
  stub = await startStubBackend();
});
afterAll(async () => {
  await stub.close();
});

let gateway: TestGateway | undefined;
afterEach(async () => {
  await gateway?.app.close();
  gateway = undefined;
});

/** A gateway with the consumer `acme` and one valid and one revoked key of it. */
async function start(
  options: Parameters<typeof buildTestGateway>[1] = {},
): Promise<{ app: TestGateway['app']; logs: TestGateway['logs']; key: string; revoked: string }> {
  const store = createMemoryConsumerStore();
  const { key } = await consumerWithKey(store, 'acme');
  const other = generateKey();
  await store.addKey('acme', { keyId: other.keyId, digest: other.digest }, Date.now());
  await store.revokeKey('acme', other.keyId, Date.now());
  gateway = await buildTestGateway(stub.url, { ...options, consumerStore: store });
  return { app: gateway.app, logs: gateway.logs, key, revoked: other.key };
}

const refusal = (name: string) => ({
  error: 'API key belongs in the API-Key header',
  code: 400,
  details: `the query parameter "${name}" holds an API key; a URL is kept in logs, caches and histories`,
});

describe('an API key in the query string', () => {
  it.each([
    ['a versioned resource', 'GET', '/v2/orders/ord-1001?api_key=KEY'],
    ['a deprecated version', 'GET', '/v1/orders/ord-1001?limit=1&api_key=KEY'],
    ['the header form', 'GET', '/orders/ord-1001?api_key=KEY'],
    ['the users', 'GET', '/api/users?api_key=KEY'],
    ['a user, written', 'PUT', '/api/users/user-1?api_key=KEY'],
    ['the deprecation report', 'GET', '/deprecations?api_key=KEY'],
    ['the self-service pin', 'PUT', '/consumer/version?api_key=KEY'],
    ['the version list', 'GET', '/versions?api_key=KEY'],
    ['an unknown path', 'GET', '/nowhere?api_key=KEY'],
  ])('is refused 400 naming API-Key on %s, and nothing is forwarded', async (_what, method, url) => {
    const { app, key } = await start();
    const before = stub.arrived.length;
    const res = await app.inject({
      method,
      url: url.replace('KEY', key),
      payload: method === 'PUT' ? '{}' : undefined,
    });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.json()).toEqual(refusal('api_key'));
    expect(stub.arrived.length).toBe(before);
  });

  it('is refused whatever the key: valid, revoked or unknown, encoded, under any listed name in any case', async () => {
    const { app, key, revoked } = await start();
    const unknown = generateKey().key;
    const encoded = encodeURIComponent(key).replace('_', '%5F');
    for (const [query, name] of [
      [`api_key=${key}`, 'api_key'],
      [`api_key=${revoked}`, 'api_key'],
      [`api_key=${unknown}`, 'api_key'],
      [`apiKey=${key}`, 'apiKey'],
      [`APIKEY=${key}`, 'apiKey'],
      [`Api_Key=${key}`, 'api_key'],
      [`api%5Fkey=${key}`, 'api_key'],
      [`key=${encoded}`, 'key'],
      [`page=2&token=${key}`, 'token'],
    ] as const) {
      const res = await app.inject({ url: `/v2/orders/ord-1001?${query}`, headers: { 'api-key': key } });
      expect(res.statusCode, query).toBe(400);
      expect(res.json(), query).toEqual(refusal(name));
    }
  });

  it('passes a value that is no key on, as the backend may have a parameter of that name', async () => {
    const { app } = await start();
    for (const query of ['token=abc', 'key=vr_short', 'api_key=', 'api_key', 'apikeys=x', 'api_key=vr%zz']) {
      const res = await app.inject({ url: `/api/users?${query}` });
      expect(res.statusCode, query).toBe(200);
      expect(stub.arrived.at(-1)?.url, query).toBe(`/api/users?${query}`);
    }
  });

  it('never reaches the log: the log line shows every listed parameter [redacted], the rest as sent', async () => {
    const { app, logs, key } = await start();
    await app.inject({ url: `/v2/orders/ord-1001?page=2&api_key=${key}&x=1` });
    await app.inject({ url: '/api/users?token=s3cret-token&limit=1' });
    const lines = logs
      .filter((line) => line.msg === 'request completed')
      .map(({ url, statusCode }) => ({ url, statusCode }));
    expect(lines).toEqual([
      { url: '/v2/orders/ord-1001?page=2&api_key=[redacted]&x=1', statusCode: 400 },
      { url: '/api/users?token=[redacted]&limit=1', statusCode: 200 },
    ]);
    const everything = JSON.stringify(logs);
    expect(everything).not.toContain(key);
    expect(everything).not.toContain('s3cret-token');
  });

  it('follows QUERY_KEY_PARAMETERS: its names are refused and redacted, the default ones no longer', async () => {
    const { app, logs, key } = await start({ queryKeyParameters: ['access_token'] });
    const refused = await app.inject({ url: `/v2/orders/ord-1001?access_token=${key}` });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual(refusal('access_token'));
    const passed = await app.inject({ url: '/api/users?token=visible' });
    expect(passed.statusCode).toBe(200);
    expect(logs.filter((line) => line.msg === 'request completed').map(({ url }) => url)).toEqual([
      '/v2/orders/ord-1001?access_token=[redacted]',
      '/api/users?token=visible',
    ]);
  });
});
