// The request headers the gateway owns or rewrites, on every proxied route: API-Version-Requested and API-Consumer
// never as a client sent them; Forwarded and X-Real-IP the hop the gateway saw, like X-Forwarded-*.
import { describe, expect, it } from 'vitest';
import { forwardedElement, forwardedHeader, hopElement } from '../../src/proxy/owned-headers.js';
import { buildTestGateway, stubbedGatewayPerTest } from '../support/helpers.js';

const fixture = stubbedGatewayPerTest();

/** What reached the stub backend for the last request. */
const lastSeen = () => fixture.stub.arrived.at(-1);

/** Every route family the gateway forwards, in each of its forms. */
const ROUTES: [string, string, Record<string, string>][] = [
  ['the path form', '/v2/orders/ord-1001', {}],
  ['the /api path form', '/api/v2/orders/ord-1001', {}],
  ['the header form', '/orders/ord-1001', { 'api-version': '2' }],
  ['a deprecated version', '/v1/orders/ord-1001', {}],
  ['the users', '/api/users', {}],
  ['a user', '/api/users/user-1', {}],
];
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

describe('API-Version-Requested and API-Consumer from a client', () => {
  it.each(ROUTES)('never reach the backend on %s, whatever the method', async (_what, url, headers) => {
    for (const method of METHODS) {
      const before = fixture.stub.arrived.length;
      const body = method === 'GET' || method === 'HEAD' || method === 'OPTIONS' ? undefined : '{}';
      const res = await fixture.gateway.app.inject({
        method,
        url,
        headers: {
          ...headers,
          'api-version-requested': '1',
          'api-consumer': 'someone-else',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { payload: body }),
      });
      expect(fixture.stub.arrived.length, `${method} ${url}: ${res.statusCode}`).toBe(before + 1);
      const seen = lastSeen()?.headers;
      expect(seen, `${method} ${url}`).not.toHaveProperty('api-version-requested');
      expect(seen, `${method} ${url}`).not.toHaveProperty('api-consumer');
    }
  });

  it('are dropped however the client spells or repeats them', async () => {
    const { app } = fixture.gateway;
    await app.inject({
      url: '/v2/orders/ord-1001',
      headers: { 'API-Version-Requested': ['1', '2'], 'Api-Consumer': 'x' },
    });
    expect(lastSeen()?.headers).not.toHaveProperty('api-version-requested');
    expect(lastSeen()?.headers).not.toHaveProperty('api-consumer');
  });
});

describe('API-Version-Requested on a version declared as changes', () => {
  const translated = stubbedGatewayPerTest((stubUrl) =>
    buildTestGateway(stubUrl, {
      policy: {
        default_version: 1,
        versions: [
          {
            version: 1,
            status: 'deprecated',
            announced: '2026-06-01',
            sunset: '2027-01-01T00:00:00Z',
            successor: 2,
            changes: [{ resource: '/orders/:id', op: 'rename', field: 'user_id', to: 'customer_id' }],
          },
          { version: 2, status: 'current' },
        ],
      },
    }),
  );

  it("is the gateway's value, never the client's, on the served request", async () => {
    for (const url of ['/v1/orders/ord-1001', '/orders/ord-1001', '/api/v1/orders/ord-1001']) {
      await translated.gateway.app.inject({ url, headers: { 'api-version-requested': '2' } });
      expect(translated.stub.arrived.at(-1)?.url, url).toMatch(/\/v2\/orders\/ord-1001$/);
      expect(translated.stub.arrived.at(-1)?.headers['api-version-requested'], url).toBe('1');
    }
    await translated.gateway.app.inject({ url: '/v2/orders/ord-1001', headers: { 'api-version-requested': '1' } });
    expect(translated.stub.arrived.at(-1)?.headers).not.toHaveProperty('api-version-requested');
  });
});

describe('Forwarded and X-Real-IP', () => {
  it.each(ROUTES)(
    'are the hop the gateway saw on %s: X-Real-IP replaced, Forwarded appended to',
    async (_what, url, headers) => {
      await fixture.gateway.app.inject({
        url,
        headers: {
          ...headers,
          host: 'api.example.com',
          'x-real-ip': '203.0.113.66',
          forwarded: 'for=203.0.113.66;proto=https',
        },
      });
      const seen = lastSeen()?.headers;
      expect(seen?.['x-real-ip']).toBe('127.0.0.1');
      expect(seen?.forwarded).toBe('for=203.0.113.66;proto=https, for=127.0.0.1;proto=http;host=api.example.com');
      expect(seen?.['x-forwarded-for']).toBe('127.0.0.1');
    },
  );

  it('set Forwarded alone when the client sent none, the host quoted when it has a port', async () => {
    await fixture.gateway.app.inject({ url: '/api/users', headers: { host: 'localhost:8080' } });
    expect(lastSeen()?.headers.forwarded).toBe('for=127.0.0.1;proto=http;host="localhost:8080"');
    expect(lastSeen()?.headers['x-real-ip']).toBe('127.0.0.1');
  });

  it("replace a client's Forwarded that is not RFC 7239 syntax, which could swallow the gateway's element", async () => {
    for (const sent of ['for="203.0.113.66', 'for=203.0.113.66 proto=https', '203.0.113.66', 'for=a=b', 'for="x\\']) {
      await fixture.gateway.app.inject({ url: '/api/users', headers: { host: 'api.example.com', forwarded: sent } });
      expect(lastSeen()?.headers.forwarded, sent).toBe('for=127.0.0.1;proto=http;host=api.example.com');
    }
  });

  it("keep two Forwarded fields of a client as one list before the gateway's element", async () => {
    // Node joins repeated fields into one string on a socket; inject hands them over as an array.
    const twice = ['for=192.0.2.1', 'for="[2001:db8::1]:4711";by=_proxy'] as unknown as string;
    await fixture.gateway.app.inject({
      url: '/v2/orders/ord-1001',
      headers: { host: 'api.example.com', forwarded: twice },
    });
    expect(lastSeen()?.headers.forwarded).toBe(
      'for=192.0.2.1, for="[2001:db8::1]:4711";by=_proxy, for=127.0.0.1;proto=http;host=api.example.com',
    );
  });
});

describe('the Forwarded element and field', () => {
  it('brackets and quotes an IPv6 peer, quotes a host that is no token, escapes quotes in it', () => {
    expect(forwardedElement('192.0.2.7', 'api.example.com')).toBe('for=192.0.2.7;proto=http;host=api.example.com');
    expect(forwardedElement('2001:db8::7', 'api.example.com')).toBe(
      'for="[2001:db8::7]";proto=http;host=api.example.com',
    );
    expect(forwardedElement('::ffff:192.0.2.7', '[::1]:8080')).toBe(
      'for="[::ffff:192.0.2.7]";proto=http;host="[::1]:8080"',
    );
    expect(forwardedElement('192.0.2.7', 'a"b\\c')).toBe('for=192.0.2.7;proto=http;host="a\\"b\\\\c"');
    expect(forwardedElement('192.0.2.7', undefined)).toBe('for=192.0.2.7;proto=http');
  });

  it("builds a connection's element once, and again when its Host changes", () => {
    const connection = {};
    const first = hopElement(connection, '192.0.2.7', 'a.example');
    expect(first).toBe('for=192.0.2.7;proto=http;host=a.example');
    expect(hopElement(connection, '192.0.2.7', 'a.example')).toBe(first);
    expect(hopElement(connection, '192.0.2.7', 'b.example')).toBe('for=192.0.2.7;proto=http;host=b.example');
    expect(hopElement(connection, '192.0.2.7', undefined)).toBe('for=192.0.2.7;proto=http');
    expect(hopElement({}, '192.0.2.8', 'a.example')).toBe('for=192.0.2.8;proto=http;host=a.example');
  });

  it.each([
    ['for=192.0.2.60;proto=http;by=203.0.113.43', true],
    ['for="_gazonk"', true],
    ['For="[2001:db8:cafe::17]:4711"', true],
    ['for=192.0.2.43, for=198.51.100.17', true],
    ['for=192.0.2.43 , for=198.51.100.17 ; proto=https', true],
    ['for="a\\"b", for=c', true],
    [';;, ,for=x', true],
    ['for="203.0.113.66', false],
    ['for=203.0.113.66 proto=https', false],
    ['for', false],
    ['for=', false],
    ['=x', false],
    ['for="x\\', false],
    ['for=a"b"', false],
    ['for="\u0001"', false],
    [`for=x;${' '.repeat(16_000)}"`, false],
  ])('appends to %j: %s', (sent, appended) => {
    const element = 'for=127.0.0.1;proto=http';
    expect(forwardedHeader(sent, element)).toBe(appended ? `${sent}, ${element}` : element);
  });
});
