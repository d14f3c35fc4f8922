// The backend pool and what goes to the backend and back: forwarded headers, hop-by-hop headers, 502/504 when
// the backend refuses, times out or cuts its answer.
import type { AddressInfo } from 'node:net';
import { request, type IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeEach, describe, expect, it } from 'vitest';
import { postExpectingContinue } from '../../../platform/test/support/expect-continue.js';
import { buildTestGateway, stubbedGatewayPerTest } from '../support/helpers.js';
import { ACCENTED_BODY } from '../support/stub-backend.js';

const fixture = stubbedGatewayPerTest();
let port: number;

/** For the blocks that need real sockets: the test's gateway on a loopback port. */
async function listen(): Promise<void> {
  await fixture.gateway.app.listen({ host: '127.0.0.1', port: 0 });
  port = (fixture.gateway.app.server.address() as AddressInfo).port;
}

const get = (url: string, headers: Record<string, string> = {}) =>
  fixture.gateway.app.inject({ method: 'GET', url, headers });
const DEPRECATION_V1 = { deprecation: 'true', sunset: 'Fri, 01 Jan 2027 00:00:00 GMT' };

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The body as it arrived, byte for byte. */
  bytes: Buffer;
}

/** Reads a response whole and hands it on as an Answer. */
function collectAnswer(res: IncomingMessage, onAnswer: (answer: Answer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () => {
    const bytes = Buffer.concat(chunks);
    onAnswer({ status: res.statusCode ?? 0, headers: res.headers, body: bytes.toString(), bytes });
  });
}

/** A real socket, because app.inject cannot show connection headers. */
function send(method: string, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => collectAnswer(res, resolve));
    req.on('error', reject);
    req.end();
  });
}

describe('gateway on a real listener', () => {
  beforeEach(listen);

  // On a real socket: app.inject resolves dot-segments (also percent-encoded ones) before routing.
  it.each([
    '/api/users/../v1/orders/ord-1001',
    '/api/users/%2e%2e/v1/orders/ord-1001',
    '/api/users/x/%2E%2E/%2E%2E/v1',
  ])('refuses %s, a path that climbs out of /api/users, with a 400 and forwards nothing', async (path) => {
    const res = await send('GET', path, {});
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toEqual({
      error: 'bad request',
      code: 400,
      details: 'source/request contain invalid characters',
    });
    expect(fixture.stub.seen).toHaveLength(0);
  });

  it('accepts an Expect: 100-continue upload (curl -d @big.json) and streams it to the backend', async () => {
    const body = Buffer.alloc(1_048_576, 'a');
    const res = await postExpectingContinue(`http://127.0.0.1:${port}/api/users`, body, {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(res.sawContinue).toBe(true);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ method: 'POST', bodyBytes: body.length });
    expect(fixture.stub.seen[0]?.headers).not.toHaveProperty('expect');
  });

  it("keeps the client connection alive and does not leak the backend's hop-by-hop headers", async () => {
    const res = await send('GET', '/v2/orders/ord-1001', {});
    expect(res.status).toBe(200);
    expect(res.headers.connection).toBe('keep-alive');
    expect(res.headers['keep-alive']).toBe('timeout=120');
  });

  it.each(['/v2/orders/hop-by-hop', '/api/users/hop-by-hop'])(
    "passes on none of the hop-by-hop headers of the backend's answer to %s, those its Connection names included",
    async (path) => {
      const res = await send('GET', path, {});
      expect(res.status).toBe(200);
      expect(res.headers.connection).toBe('keep-alive');
      expect(res.headers['keep-alive']).toBe('timeout=120');
      expect(res.headers).not.toHaveProperty('x-hop');
      expect(res.headers).not.toHaveProperty('proxy-connection');
      expect(res.headers).not.toHaveProperty('upgrade');
      expect(res.headers['x-end-to-end']).toBe('kept');
    },
  );

  it.each<Record<string, string>>([
    { 'keep-alive': 'timeout=5' },
    { upgrade: 'websocket' },
    { 'keep-alive': 'timeout=5', upgrade: 'h2c' },
  ])(
    'forwards a request carrying %j without failing and without passing it on (undici refuses to send them)',
    async (headers) => {
      const res = await send('GET', '/api/users', headers);
      expect(res.status).toBe(200);
      expect(fixture.stub.seen[0]?.headers).not.toHaveProperty('keep-alive');
      expect(fixture.stub.seen[0]?.headers).not.toHaveProperty('upgrade');
    },
  );
});

/**
 * Sends a POST whose body arrives in two parts, `pauseMs` apart; resolves with the URLs the backend had seen
 * arrive before the second part left, and the answer.
 */
function postInTwoParts(
  path: string,
  headers: Record<string, string>,
  body: Buffer,
  pauseMs: number,
): Promise<{ arrivedBeforeEnd: string[]; answer: Answer }> {
  return new Promise((resolve, reject) => {
    let arrivedBeforeEnd: string[] = [];
    const req = request(
      { host: '127.0.0.1', port, method: 'POST', path, headers: { ...headers, 'content-length': String(body.length) } },
      (res) => collectAnswer(res, (answer) => resolve({ arrivedBeforeEnd, answer })),
    );
    req.on('error', reject);
    req.write(body.subarray(0, 10));
    void sleep(pauseMs).then(() => {
      arrivedBeforeEnd = fixture.stub.arrived.map((arrival) => arrival.url);
      req.end(body.subarray(10));
    });
  });
}

describe('request bodies', () => {
  beforeEach(listen);

  // The stub answers a POST on an order with the backend's 405: forwarded all the same.
  it.each([
    ['/api/users', 200],
    ['/v2/orders/ord-1001', 405],
  ])(
    "reads a body of at most 16 KiB whole before forwarding it to %s, with the client's bytes and Content-Type",
    async (path, status) => {
      const json = Buffer.from('{"name":"Zoë","email":"zoe@example.com"}');
      const body = Buffer.concat([json, Buffer.alloc(16 * 1024 - json.length, ' ')]);
      const contentType = 'application/json; charset=utf-8';
      const { arrivedBeforeEnd, answer } = await postInTwoParts(path, { 'content-type': contentType }, body, 300);
      expect(arrivedBeforeEnd).toEqual([]);
      expect(answer.status).toBe(status);
      expect(fixture.stub.seen).toHaveLength(1);
      expect(fixture.stub.seen[0]?.body.equals(body)).toBe(true);
      expect(fixture.stub.seen[0]?.headers['content-type']).toBe(contentType);
      expect(fixture.stub.seen[0]?.headers['content-length']).toBe(String(body.length));
    },
  );

  it.each<[string, Record<string, string>, number]>([
    ['declares more than 16 KiB', { 'content-type': 'application/json' }, 16 * 1024 + 1],
    ['has no Content-Type', {}, 100],
  ])(
    'streams a body that %s: the backend has the request before its body is complete',
    async (_what, headers, length) => {
      const body = Buffer.alloc(length, ' ');
      const { arrivedBeforeEnd, answer } = await postInTwoParts('/api/users', headers, body, 300);
      expect(arrivedBeforeEnd).toEqual(['/api/users']);
      expect(answer.status).toBe(200);
      expect(fixture.stub.seen[0]?.body.equals(body)).toBe(true);
    },
  );
});

describe('small answers sent whole', () => {
  beforeEach(listen);

  // A small ASCII body goes out as text, any other as the bytes it came as: either way byte for byte.
  it.each(['/v2/orders/accented', '/v1/orders/accented'])(
    'passes %s, a body that is not ASCII, on byte for byte with its length',
    async (path) => {
      const res = await send('GET', path, {});
      expect(res.status).toBe(200);
      expect(res.bytes.equals(Buffer.from(ACCENTED_BODY))).toBe(true);
      expect(res.headers['content-length']).toBe(String(Buffer.byteLength(ACCENTED_BODY)));
    },
  );

  // Fastify would add `; charset=utf-8` to a JSON type without one if the body went as text.
  it.each([
    'application/json',
    'APPLICATION/JSON',
    'application/problem+json',
    'application/json; charset=utf-8',
    'application/json;charset=UTF-8',
    'text/plain',
  ])("passes the backend's Content-Type %s on as it came", async (type) => {
    const res = await send('GET', `/v2/orders/typed?type=${encodeURIComponent(type)}`, {});
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(type);
    expect(res.body).toBe('{"typed":true}');
  });

  it('passes an ASCII body on unchanged', async () => {
    const res = await send('GET', '/v2/orders/ord-1001', {});
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ method: 'GET', url: '/v2/orders/ord-1001' });
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(res.body)));
  });
});

describe('a backend that drops the connection in the middle of a small answer', () => {
  beforeEach(listen);

  it.each(['/v2/orders/ord-1001?cut=0', '/v1/openapi.json?cut=0'])(
    'answers %s with 502 bad gateway when no byte of the body came',
    async (path) => {
      const res = await send('GET', path, {});
      expect(res.status).toBe(502);
      expect(JSON.parse(res.body)).toEqual({ error: 'bad gateway', code: 502 });
      expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
    },
  );

  it.each(['/v2/orders/ord-1001?cut=10', '/v1/openapi.json?cut=10'])(
    'ends the connection on %s rather than pass a cut body off as whole',
    async (path) => {
      await expect(send('GET', path, {})).rejects.toThrow(/socket hang up|aborted|ECONNRESET/);
      expect((await send('GET', '/v2/orders/ord-1001', {})).status).toBe(200);
    },
  );
});

describe('backend failures', () => {
  it('answers 502 bad gateway, without internal addresses, when the backend refuses connections', async () => {
    await fixture.stub.close();
    for (const url of ['/v1/orders/ord-1001', '/api/users']) {
      const res = await get(url);
      expect(res.statusCode).toBe(502);
      expect(res.json()).toEqual({ error: 'bad gateway', code: 502 });
      expect(res.body).not.toContain('127.0.0.1');
    }
    expect((await get('/v1/orders/ord-1001')).headers).toMatchObject({ vary: 'API-Version', ...DEPRECATION_V1 });
  });

  it('answers 504 gateway timeout when the backend does not answer within BACKEND_TIMEOUT_MS', async () => {
    await fixture.gateway.app.close();
    fixture.gateway = await buildTestGateway(fixture.stub.url, { backendTimeoutMs: 150 });
    fixture.stub.delayMs = 5_000;
    for (const url of ['/v2/orders/ord-1001', '/api/users']) {
      const started = Date.now();
      const res = await get(url);
      expect(res.statusCode).toBe(504);
      expect(res.json()).toEqual({ error: 'gateway timeout', code: 504 });
      // The 150 ms limit, not the stub's answer at 5 s: undici checks its timeouts on a ~0.5 s tick, so the 504
      // comes within about a second of the limit on a quiet machine; 3 s leaves a loaded one room.
      expect(Date.now() - started).toBeGreaterThanOrEqual(150);
      expect(Date.now() - started).toBeLessThan(3_000);
    }
  });

  it('does not retry a backend 503', async () => {
    const res = await get('/v2/orders/unavailable');
    expect(res.statusCode).toBe(503);
    expect(fixture.stub.seen).toHaveLength(1);
  });
});

describe('request ids and forwarding headers', () => {
  it('keeps a sane X-Request-Id, forwards it and echoes it', async () => {
    const res = await get('/v2/orders/ord-1001', { 'x-request-id': 'client-id-42' });
    expect(res.headers['x-request-id']).toBe('client-id-42');
    expect(fixture.stub.seen[0]?.headers['x-request-id']).toBe('client-id-42');
  });

  it('replaces an unsafe X-Request-Id with a generated one, sent to the backend too', async () => {
    for (const sent of ['x'.repeat(129), 'has space']) {
      const res = await get('/api/users', { 'x-request-id': sent });
      const id = res.headers['x-request-id'];
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(fixture.stub.seen.at(-1)?.headers['x-request-id']).toBe(id);
    }
    expect((await get('/v9/orders/x')).headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("sets X-Forwarded-For, -Proto and -Host and keeps the client's Host out of the upstream Host", async () => {
    await get('/api/users', { host: 'api.example.com', 'x-forwarded-for': '203.0.113.9' });
    const headers = fixture.stub.seen[0]?.headers;
    expect(headers?.['x-forwarded-for']).toBe('203.0.113.9, 127.0.0.1');
    expect(headers?.['x-forwarded-proto']).toBe('http');
    expect(headers?.['x-forwarded-host']).toBe('api.example.com');
    expect(headers?.host).toBe(new URL(fixture.stub.url).host);
  });
});
