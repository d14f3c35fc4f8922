import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { baseServerOptions, httpFoundation, requestIdFor } from '../src/http-foundation.js';
import { HttpError } from '../src/errors.js';
import { serverLimits } from '../src/server-limits.js';

async function buildTestApp() {
  const app = Fastify(baseServerOptions(createLogger('silent', 'test')));
  await app.register(httpFoundation);
  app.get('/things/:id', async () => ({ ok: true }));
  app.put('/things/:id', async () => ({ ok: true }));
  app.get('/teapot', async () => {
    throw new HttpError(418, 'teapot', 'short and stout');
  });
  app.get('/boom', async () => {
    throw new Error('secret internal detail at /srv/db');
  });
  return app;
}

let app: Awaited<ReturnType<typeof buildTestApp>>;
afterEach(async () => {
  await app.close();
});

describe('httpFoundation', () => {
  it('gives the Node server the read timeout for the whole request (body included), checked twice a second', async () => {
    app = await buildTestApp();
    expect(app.server.requestTimeout).toBe(serverLimits.readTimeoutMs);
    expect(app.server.headersTimeout).toBe(serverLimits.readTimeoutMs);
    expect(serverLimits.timeoutCheckIntervalMs).toBeLessThanOrEqual(1_000);
  });

  it('answers more than 100 header fields with 431, not counting Host and the fields a proxy sets', async () => {
    app = await buildTestApp();
    const fields = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`x-f${i}`, String(i)]));
    const proxySet = { host: 'gateway', 'x-forwarded-for': '10.0.0.1', 'x-forwarded-proto': 'http', 'x-forwarded-host': 'api', 'x-request-id': 'r-1' };
    const refused = await app.inject({ method: 'GET', url: '/things/1', headers: fields(101) });
    expect(refused.statusCode).toBe(431);
    expect(refused.headers.connection).toBe('close');
    expect(refused.json()).toEqual({ error: 'request header fields too large', code: 431, details: 'more than 100 header fields' });
    // light-my-request adds user-agent itself: 99 + user-agent = 100 counted fields.
    const served = await app.inject({ method: 'GET', url: '/things/1', headers: { ...fields(99), ...proxySet } });
    expect(served.statusCode).toBe(200);
  });

  it('answers an unmatched path with a JSON 404', async () => {
    app = await buildTestApp();
    const res = await app.inject({ method: 'GET', url: '/nowhere' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({ error: 'not found', code: 404 });
  });

  it('answers a known path with another method 405 and an Allow header from the route table', async () => {
    app = await buildTestApp();
    const res = await app.inject({ method: 'PATCH', url: '/things/7?x=1' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, PUT');
    expect(res.json()).toEqual({ error: 'method not allowed', code: 405 });
  });

  it('turns an HttpError into the ErrorResponse with details', async () => {
    app = await buildTestApp();
    const res = await app.inject({ method: 'GET', url: '/teapot' });
    expect(res.statusCode).toBe(418);
    expect(res.json()).toEqual({ error: 'teapot', code: 418, details: 'short and stout' });
  });

  it('hides the text of an unhandled failure behind 500 internal error', async () => {
    app = await buildTestApp();
    const res = await app.inject({ method: 'GET', url: '/boom' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: 'internal error', code: 500 });
    expect(res.body).not.toContain('secret');
  });

  it('echoes a sane X-Request-Id and replaces an unsafe one', async () => {
    app = await buildTestApp();
    const kept = await app.inject({ method: 'GET', url: '/things/1', headers: { 'x-request-id': 'abc-123' } });
    expect(kept.headers['x-request-id']).toBe('abc-123');
    const replaced = await app.inject({ method: 'GET', url: '/things/1', headers: { 'x-request-id': 'x'.repeat(129) } });
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('accepts request ids of 1..128 visible ASCII characters only', () => {
    const idFor = (value: string) => requestIdFor({ headers: { 'x-request-id': value } } as never);
    expect(idFor('a'.repeat(128))).toBe('a'.repeat(128));
    expect(idFor('has space')).not.toBe('has space');
    expect(idFor('')).not.toBe('');
  });

  it('answers 503 service unavailable in the ErrorResponse shape while draining', async () => {
    app = await buildTestApp();
    await app.ready();
    app.lifecycle.draining = true;
    const res = await app.inject({ method: 'GET', url: '/things/1' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ error: 'service unavailable', code: 503, details: 'shutting down' });
  });
});

describe('httpFoundation shutdown', () => {
  it('closes the keep-alive connection of a request in flight when shutdown begins, so close() does not wait for the client', async () => {
    const { Agent, request } = await import('node:http');
    app = Fastify(baseServerOptions(createLogger('silent', 'test')));
    await app.register(httpFoundation);
    let arrived: () => void = () => undefined;
    const inFlight = new Promise<void>((resolve) => (arrived = resolve));
    app.get('/slow', async () => {
      arrived();
      await new Promise((resolve) => setTimeout(resolve, 200));
      return { ok: true };
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    const agent = new Agent({ keepAlive: true });
    const response = new Promise<{ status?: number; connection?: string }>((resolve, reject) => {
      request({ host: '127.0.0.1', port, path: '/slow', agent }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
      })
        .on('error', reject)
        .end();
    });
    await inFlight;
    const closed = app.close().then(() => 'closed');
    try {
      expect(await response).toEqual({ status: 200, connection: 'close' });
      const stillOpen = new Promise((resolve) => setTimeout(() => resolve('still waiting for the client'), 2_000));
      expect(await Promise.race([closed, stillOpen])).toBe('closed');
    } finally {
      agent.destroy();
    }
  });
});
