import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import Fastify, {
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { baseServerOptions, httpFoundation } from './http-foundation.js';
import { sendError } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route hands out or changes credentials (the consumer registry). Without ADMIN_TOKEN it answers only
     * on an admin listener bound to a loopback address.
     */
    handsOutCredentials?: boolean;
  }
}

/** What a probe or a scraper reaches without a token: orchestrators and Prometheus carry none. */
const OPEN_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

export interface AdminOptions {
  registry: Registry;
  logger: Logger;
  /** The API listener's shutdown state (`app.lifecycle`): not ready from the moment it is leaving. */
  lifecycle: { readonly leaving: boolean };
  /** Routes a process adds to its own admin listener. */
  routes?: FastifyPluginAsync;
  /** ADMIN_TOKEN: when set, every admin route but /healthz, /readyz and /metrics needs it as a Bearer token. */
  adminToken: string | undefined;
  /** The address the admin listener binds (GATEWAY_ADMIN_HOST / BACKEND_ADMIN_HOST). */
  host: string;
}

/** The refusal of a credential route off loopback without a token; the consumers CLI tells it from other 403s. */
export const OFF_LOOPBACK_ERROR = 'admin token required off loopback';

/** 127.0.0.0/8, ::1 and `localhost`: an address only this machine reaches. */
function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1' || host === '[::1]';
}

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * The admin listener's access rule: with a token, a Bearer header carrying it on every route but the open
 * ones (unmatched paths included, so the routes are not revealed); without one, the credential routes only
 * on loopback. The token is compared as SHA-256 digests in constant time, so neither its content nor its
 * length shows in the answer time.
 */
function adminAccess(
  adminToken: string | undefined,
  host: string,
): (request: FastifyRequest, reply: FastifyReply) => Promise<unknown> {
  const expected = adminToken === undefined ? undefined : digest(adminToken);
  const onLoopback = isLoopback(host);
  return async function adminAccess(request, reply) {
    const route = request.routeOptions;
    if (expected === undefined) {
      if (route.config.handsOutCredentials === true && !onLoopback) return sendError(reply, 403, OFF_LOOPBACK_ERROR);
      return undefined;
    }
    if (route.url !== undefined && OPEN_ROUTES.has(route.url)) return undefined;
    const authorization = request.headers.authorization;
    const bearer = authorization === undefined ? undefined : /^Bearer +(\S+) *$/i.exec(authorization)?.[1];
    if (bearer === undefined)
      return sendError(reply.header('www-authenticate', 'Bearer realm="admin"'), 401, 'admin token required');
    if (!timingSafeEqual(digest(bearer), expected)) {
      return sendError(
        reply.header('www-authenticate', 'Bearer realm="admin", error="invalid_token"'),
        401,
        'invalid admin token',
      );
    }
    return undefined;
  };
}

/**
 * The admin listener (/metrics, /healthz, /readyz): never on the public port. `/readyz` answers for this
 * replica only: it listens once start-up is complete (the process runner starts it after the API, which is
 * built after the policy is loaded or the migrations applied), and answers 503 from SIGTERM on. It never asks
 * another service (the backend, PostgreSQL): an outage of something every replica shares would take every
 * replica out of its load balancer at once. Those show in metrics (`backend_up`, `db_up`) and alerts.
 */
export async function buildAdminApp({
  registry,
  logger,
  lifecycle,
  routes,
  adminToken,
  host,
}: AdminOptions): Promise<FastifyInstance> {
  const admin = Fastify(baseServerOptions(logger.child({ listener: 'admin' })));
  await admin.register(httpFoundation);
  admin.addHook('onRequest', adminAccess(adminToken, host));
  admin.get('/healthz', async () => ({ status: 'ok' }));
  admin.get('/readyz', async (_request, reply) => {
    if (!lifecycle.leaving) return { status: 'ready' };
    return sendError(reply, 503, 'not ready');
  });
  admin.get('/metrics', async (_request, reply) => {
    void reply.type(registry.contentType);
    return registry.metrics();
  });
  if (routes !== undefined) await admin.register(routes);
  return admin;
}
