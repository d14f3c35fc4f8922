import type { FastifyInstance } from 'fastify';
import { describe, expect, it, onTestFinished } from 'vitest';
import { buildAdminApp } from '../src/admin.js';
import { createLogger } from '../src/logger.js';
import { createRegistry } from '../src/metrics.js';

const TOKEN = 'an-admin-token-of-32-characters!';

/** An admin listener with one ordinary route (`/status`) and one that hands out credentials (`/keys`). */
async function admin(adminToken: string | undefined, host: string): Promise<FastifyInstance> {
  const app = await buildAdminApp({
    registry: createRegistry(),
    logger: createLogger('silent', 'test'),
    lifecycle: { leaving: false },
    adminToken,
    host,
    routes: async (routes) => {
      routes.get('/status', async () => ({ page: true }));
      routes.post('/keys', { config: { handsOutCredentials: true } }, async (_request, reply) =>
        reply.code(201).send({ key: 'k' }),
      );
    },
  });
  onTestFinished(() => app.close());
  return app;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('the admin listener with ADMIN_TOKEN', () => {
  it.each(['/healthz', '/readyz', '/metrics'])(
    'serves %s without a token (probes and Prometheus carry none)',
    async (url) => {
      const app = await admin(TOKEN, '0.0.0.0');
      expect((await app.inject({ url })).statusCode).toBe(200);
    },
  );

  it.each([
    ['GET', '/status'],
    ['POST', '/keys'],
    ['GET', '/no-such-route'],
  ])('answers %s %s without a token 401 admin token required, with WWW-Authenticate: Bearer', async (method, url) => {
    const app = await admin(TOKEN, '127.0.0.1');
    const res = await app.inject({ method: method as 'GET', url });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="admin"');
    expect(res.json()).toEqual({ error: 'admin token required', code: 401 });
  });

  it.each([
    ['another scheme', { authorization: `Basic ${Buffer.from(`admin:${TOKEN}`).toString('base64')}` }],
    ['an empty Bearer', { authorization: 'Bearer ' }],
  ])('answers %s 401 admin token required', async (_what, headers) => {
    const app = await admin(TOKEN, '127.0.0.1');
    const res = await app.inject({ url: '/status', headers });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'admin token required', code: 401 });
  });

  it.each([
    ['a wrong token', 'an-admin-token-of-32-characters?'],
    ['a prefix of the token', TOKEN.slice(0, 16)],
    ['the token and more', `${TOKEN}x`],
  ])('answers %s 401 invalid admin token, with WWW-Authenticate naming the error', async (_what, token) => {
    const app = await admin(TOKEN, '127.0.0.1');
    const res = await app.inject({ url: '/status', headers: bearer(token) });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="admin", error="invalid_token"');
    expect(res.json()).toEqual({ error: 'invalid admin token', code: 401 });
  });

  it(
    'serves every route with the token, the credential routes off loopback too; unknown paths are then ' + '404',
    async () => {
      const app = await admin(TOKEN, '0.0.0.0');
      expect((await app.inject({ url: '/status', headers: bearer(TOKEN) })).json()).toEqual({ page: true });
      expect(
        (await app.inject({ method: 'POST', url: '/keys', headers: { authorization: `bearer ${TOKEN}` } })).statusCode,
      ).toBe(201);
      expect((await app.inject({ url: '/no-such-route', headers: bearer(TOKEN) })).statusCode).toBe(404);
    },
  );
});

describe('the admin listener without ADMIN_TOKEN', () => {
  it.each(['127.0.0.1', '127.0.0.2', 'localhost', '::1'])(
    'serves every route, the credential routes too, when bound to %s (loopback)',
    async (host) => {
      const app = await admin(undefined, host);
      expect((await app.inject({ url: '/status' })).statusCode).toBe(200);
      expect((await app.inject({ method: 'POST', url: '/keys' })).statusCode).toBe(201);
    },
  );

  it.each(['0.0.0.0', '::', '10.0.0.5', 'gateway.internal'])(
    'refuses the credential routes 403 when bound to %s, and serves the rest',
    async (host) => {
      const app = await admin(undefined, host);
      const res = await app.inject({ method: 'POST', url: '/keys' });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: 'admin token required off loopback', code: 403 });
      expect((await app.inject({ url: '/status' })).statusCode).toBe(200);
      expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200);
    },
  );
});
