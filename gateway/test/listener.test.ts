import type { AddressInfo } from 'node:net';
import { request } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
  sawContinue: boolean;
}

/** A real socket, because app.inject cannot do `Expect: 100-continue` or show connection headers. */
function send(method: string, path: string, headers: Record<string, string>, body?: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let sawContinue = false;
    const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString(), sawContinue }));
    });
    req.on('error', reject);
    if (headers.expect === '100-continue') {
      // As curl does: the body follows only after the server's 100 Continue.
      req.on('continue', () => {
        sawContinue = true;
        req.end(body);
      });
    } else {
      req.end(body);
    }
  });
}

describe('gateway on a real listener', () => {
  it('accepts an Expect: 100-continue upload (curl -d @big.json) and streams it to the backend', async () => {
    const body = Buffer.alloc(1_048_576, 'a');
    const res = await send('POST', '/api/users', { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(body.length), expect: '100-continue' }, body);
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

  it('sends the request id it echoes', async () => {
    const res = await send('GET', '/api/users', { 'x-request-id': 'abc-123' });
    expect(res.headers['x-request-id']).toBe('abc-123');
    expect(stub.seen[0]?.headers['x-request-id']).toBe('abc-123');
  });

  it('forwards a client Keep-Alive or Upgrade header without failing (undici refuses to send them)', async () => {
    const res = await send('GET', '/api/users', { 'keep-alive': 'timeout=5' });
    expect(res.status).toBe(200);
  });
});
