import { connect } from 'node:net';
import Fastify from 'fastify';
import { describe, expect, it, onTestFinished } from 'vitest';
import { requestGuards } from '../../src/plugins/request-guards.js';
import { buildFoundationApp } from '../helpers.js';

describe('request guards', () => {
  it('answers more than 100 header fields with 431, not counting Host and the fields a proxy sets', async () => {
    const app = await buildFoundationApp();
    const fields = (count: number) =>
      Object.fromEntries(Array.from({ length: count }, (_, i) => [`x-f${i}`, String(i)]));
    const proxySet = {
      host: 'gateway',
      'x-forwarded-for': '10.0.0.1',
      'x-forwarded-proto': 'http',
      'x-forwarded-host': 'api',
      forwarded: 'for=10.0.0.1;proto=http',
      'x-real-ip': '10.0.0.1',
      'x-request-id': 'r-1',
      'api-consumer': 'acme',
      'api-version-requested': '1',
    };
    const refused = await app.inject({ method: 'GET', url: '/things/1', headers: fields(101) });
    expect(refused.statusCode).toBe(431);
    expect(refused.headers.connection).toBe('close');
    expect(refused.json()).toEqual({
      error: 'request header fields too large',
      code: 431,
      details: 'more than 100 header fields',
    });
    // light-my-request adds user-agent itself: 99 + user-agent = 100 counted fields.
    const served = await app.inject({ method: 'GET', url: '/things/1', headers: { ...fields(99), ...proxySet } });
    expect(served.statusCode).toBe(200);
  });

  it('answers 503 service unavailable in the ErrorResponse shape while draining', async () => {
    const app = await buildFoundationApp();
    await app.ready();
    app.lifecycle.draining = true;
    const res = await app.inject({ method: 'GET', url: '/things/1' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ error: 'service unavailable', code: 503, details: 'shutting down' });
  });
});

describe('request guards on a real connection', () => {
  it('answers an HTTP/1.1 request without Host with 400 in our shape and closes the connection', async () => {
    const app = await buildFoundationApp();
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    const socket = connect(port, '127.0.0.1');
    socket.end('GET /things/1 HTTP/1.1\r\n\r\n');
    let received = '';
    for await (const chunk of socket) received += String(chunk);
    const [head = '', body] = received.split('\r\n\r\n');
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    expect(head.toLowerCase()).toContain('\r\nconnection: close');
    expect(body).toBe('{"error":"bad request","code":400,"details":"missing Host header"}');
  });
});

describe('request guards without draining', () => {
  it('refuses to start, since the guards read the draining state', async () => {
    const app = Fastify();
    onTestFinished(() => app.close());
    await expect(app.register(requestGuards).ready()).rejects.toThrow(/draining/);
  });
});
