import type { AddressInfo } from 'node:net';
import { request } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { postExpectingContinue } from '../../test/support/expect-continue.js';
import { buildTestGateway, type TestGateway } from './helpers.js';
import { startStubBackend, type StubBackend } from './stub-backend.js';

let stub: StubBackend;
let gateway: TestGateway;
let port: number;

beforeEach(async () => {
  stub = await startStubBackend();
  gateway = await buildTestGateway(stub.url);
  await gateway.app.listen({ host: '127.0.0.1', port: 0 });
  port = (gateway.app.server.address() as AddressInfo).port;
});
afterEach(async () => {
  await gateway.app.close();
  await stub.close();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A real socket, because app.inject cannot show connection headers. */
function send(method: string, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('gateway on a real listener', () => {
  // On a real socket: app.inject resolves dot-segments (also percent-encoded ones) before routing.
  it.each(['/api/users/../v1/orders/ord-1001', '/api/users/%2e%2e/v1/orders/ord-1001', '/api/users/x/%2E%2E/%2E%2E/v1'])(
    'refuses %s, a path that climbs out of /api/users, with a 400 and forwards nothing',
    async (path) => {
      const res = await send('GET', path, {});
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body)).toEqual({ error: 'bad request', code: 400, details: 'source/request contain invalid characters' });
      expect(stub.seen).toHaveLength(0);
    },
  );

  it('accepts an Expect: 100-continue upload (curl -d @big.json) and streams it to the backend', async () => {
    const body = Buffer.alloc(1_048_576, 'a');
    const res = await postExpectingContinue(`http://127.0.0.1:${port}/api/users`, body, { 'content-type': 'application/x-www-form-urlencoded' });
    expect(res.sawContinue).toBe(true);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ method: 'POST', bodyBytes: body.length });
    expect(stub.seen[0]?.headers).not.toHaveProperty('expect');
  });

  it('keeps the client connection alive and does not leak the backend\'s hop-by-hop headers', async () => {
    const res = await send('GET', '/v2/orders/ord-1001', {});
    expect(res.status).toBe(200);
    expect(res.headers.connection).toBe('keep-alive');
    expect(res.headers['keep-alive']).toBe('timeout=120');
  });

  it.each<Record<string, string>>([{ 'keep-alive': 'timeout=5' }, { upgrade: 'websocket' }, { 'keep-alive': 'timeout=5', upgrade: 'h2c' }])(
    'forwards a request carrying %j without failing and without passing it on (undici refuses to send them)',
    async (headers) => {
      const res = await send('GET', '/api/users', headers);
      expect(res.status).toBe(200);
      expect(stub.seen[0]?.headers).not.toHaveProperty('keep-alive');
      expect(stub.seen[0]?.headers).not.toHaveProperty('upgrade');
    },
  );
});

describe('a backend that drops the connection in the middle of a small answer', () => {
  it.each(['/v2/orders/ord-1001?cut=0', '/v1/openapi.json?cut=0'])('answers %s with 502 bad gateway when no byte of the body came', async (path) => {
    const res = await send('GET', path, {});
    expect(res.status).toBe(502);
    expect(JSON.parse(res.body)).toEqual({ error: 'bad gateway', code: 502 });
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
  });

  it.each(['/v2/orders/ord-1001?cut=10', '/v1/openapi.json?cut=10'])('ends the connection on %s rather than pass a cut body off as whole', async (path) => {
    await expect(send('GET', path, {})).rejects.toThrow(/socket hang up|aborted|ECONNRESET/);
    expect((await send('GET', '/v2/orders/ord-1001', {})).status).toBe(200);
  });
});
