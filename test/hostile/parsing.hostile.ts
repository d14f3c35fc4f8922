import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { RawResponse } from '../../platform/test/support/raw-http.js';
import { exchange, expectServes, useTargets } from './raw.js';

/**
 * Requests a lenient parser would misread, against the built processes (npm run build first). Smuggling
 * attempts go through the gateway to a stub backend that counts what reaches it.
 */
const targets = useTargets();

function expectError(responses: RawResponse[], code: number, error: string): void {
  expect(responses).toHaveLength(1);
  const [answer] = responses;
  expect(answer?.status).toBe(code);
  expect(answer?.headers['content-type']).toMatch(/^application\/json/);
  expect(JSON.parse(answer?.body ?? '')).toMatchObject({ error, code });
}

/** A second request hidden in the first one's body, which a desynchronised backend would run. */
const smuggled = 'GET /api/users/smuggled HTTP/1.1\r\nHost: test\r\n\r\n';
const head = 'POST /api/users HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n';

describe('request smuggling through the gateway', () => {
  it.each([
    [
      'Content-Length with Transfer-Encoding: chunked',
      `${head}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${smuggled}`,
    ],
    [
      'two different Content-Length values',
      `${head}Content-Length: 2\r\nContent-Length: ${2 + smuggled.length}\r\n\r\n{}${smuggled}`,
    ],
    ['two equal Content-Length values', `${head}Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}${smuggled}`],
    [
      'Transfer-Encoding: chunked, identity',
      `${head}Transfer-Encoding: chunked, identity\r\n\r\n2\r\n{}\r\n0\r\n\r\n${smuggled}`,
    ],
    [
      'Transfer-Encoding folded onto a second line (obs-fold)',
      `${head}Transfer-Encoding:\r\n chunked\r\nContent-Length: 2\r\n\r\n{}${smuggled}`,
    ],
    [
      'an obs-fold continuation of another header',
      `${head}X-Note: one\r\n two\r\nContent-Length: 2\r\n\r\n{}${smuggled}`,
    ],
    ['a bare LF line end', `${head}X-Note: one\nContent-Length: 2\r\n\r\n{}${smuggled}`],
  ])('refuses %s with 400 JSON, closes the connection, and forwards nothing', async (_what, request) => {
    const before = targets.stub.arrived.length;
    const { responses } = await exchange(targets.stubGateway.apiUrl, request);
    expect(responses.map((res) => res.body)).toEqual(['{"error":"bad request","code":400}']);
    // Anything forwarded would have reached the stub by now; loopback takes well under this.
    await sleep(100);
    const forwarded = targets.stub.arrived.slice(before);
    expect(forwarded.filter((seen) => seen.url.includes('smuggled'))).toEqual([]);
    expect(forwarded.length).toBeLessThanOrEqual(0);
    await expectServes(targets.stubGateway.apiUrl, '/api/users');
  });
});

describe.concurrent('oversized and malformed request heads', () => {
  const services = [
    ['gateway', () => targets.stack.gatewayUrl],
    ['backend', () => targets.stack.backend.apiUrl],
  ] as const;

  it.each(services)('%s: a 20 KB header is 431 JSON and the connection is closed', async (_name, url) => {
    const { responses } = await exchange(
      url(),
      `GET /api/users/page HTTP/1.1\r\nHost: test\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expectError(responses, 431, 'request header fields too large');
    await expectServes(url());
  });

  /** `count` header fields as the limit counts them (Host and X-Request-Id are not counted). */
  const fieldsRequest = (path: string, count: number) =>
    `GET ${path} HTTP/1.1\r\nHost: test\r\nX-Request-Id: fields-${count}\r\nConnection: close\r\n` +
    Array.from({ length: count - 1 }, (_, i) => `X-F${i}: ${i}\r\n`).join('') +
    '\r\n';

  it.each(services)(
    '%s: 101 header fields are 431 JSON; 100 are served, also after the gateway added its own',
    async (_name, url) => {
      const refused = await exchange(url(), fieldsRequest('/api/users/page', 101));
      expectError(refused.responses, 431, 'request header fields too large');
      expect(JSON.parse(refused.responses[0]?.body ?? '')).toEqual({
        error: 'request header fields too large',
        code: 431,
        details: 'more than 100 header fields',
      });
      for (const path of ['/api/users/page?limit=1', '/v2/orders/ord-1001']) {
        const served = await exchange(url(), fieldsRequest(path, 100));
        expect(served.responses.map((res) => res.status)).toEqual([200]);
      }
    },
  );

  it.each(services)('%s: a 100 KB URL is 431 (or 414) JSON', async (_name, url) => {
    const { responses } = await exchange(
      url(),
      `GET /api/users/page?pad=${'a'.repeat(100_000)} HTTP/1.1\r\nHost: test\r\n\r\n`,
    );
    expect([414, 431]).toContain(responses[0]?.status);
    expectError(
      responses,
      responses[0]?.status ?? 0,
      responses[0]?.status === 414 ? 'uri too long' : 'request header fields too large',
    );
    await expectServes(url());
  });

  it.each([
    ['gateway', '/api/users/%zz', () => targets.stack.gatewayUrl],
    ['gateway', '/v1/orders/%E0%A4%A', () => targets.stack.gatewayUrl],
    ['gateway', '/orders/%', () => targets.stack.gatewayUrl],
    ['backend', '/api/users/%zz', () => targets.stack.backend.apiUrl],
    ['backend', '/v2/orders/ord-%G1', () => targets.stack.backend.apiUrl],
  ])('%s: invalid percent-encoding in %s is 400 JSON', async (_name, path, url) => {
    const { responses } = await exchange(
      url(),
      `GET ${path} HTTP/1.1\r\nHost: test\r\nAPI-Version: 2\r\nConnection: close\r\n\r\n`,
    );
    expectError(responses, 400, 'bad request');
    expect(JSON.parse(responses[0]?.body ?? '')).toEqual({ error: 'bad request', code: 400, details: 'malformed URL' });
    await expectServes(url());
  });

  it.each([
    '/versions?at=tomorrow',
    '/versions?at=',
    '/versions?at=2027-02-30',
    '/versions?at=2027-01-01&at=2028-01-01',
    '/versions?at=%00%0d%0a',
    '/versions?at=2027-01-01T00:00:00',
    `/versions?at=${'9'.repeat(8_000)}`,
  ])('gateway: the version preview %s is 400 invalid date JSON, and it serves on', async (path) => {
    const { responses } = await exchange(
      targets.stack.gatewayUrl,
      `GET ${path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n`,
    );
    expectError(responses, 400, 'invalid date');
    await expectServes(targets.stack.gatewayUrl);
  });
});
