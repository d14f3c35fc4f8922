import Fastify, { type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { baseServerOptions, httpFoundation } from './http-foundation.js';
import { sendError } from './errors.js';

export interface AdminOptions {
  registry: Registry;
  logger: Logger;
  /** The API listener's shutdown state (`app.lifecycle`): not ready from the moment it is leaving. */
  lifecycle: { readonly leaving: boolean };
  /** Routes a process adds to its own admin listener. */
  routes?: FastifyPluginAsync;
}

/**
 * The admin listener (/metrics, /healthz, /readyz): never on the public port. `/readyz` answers for this
 * replica only: it listens once start-up is complete (the process runner starts it after the API, which is
 * built after the policy is loaded or the migrations applied), and answers 503 from SIGTERM on. It never asks
 * another service (the backend, PostgreSQL): an outage of something every replica shares would take every
 * replica out of its load balancer at once. Those show in metrics (`backend_up`, `db_up`) and alerts.
 */
export async function buildAdminApp({ registry, logger, lifecycle, routes }: AdminOptions): Promise<FastifyInstance> {
  const admin = Fastify(baseServerOptions(logger.child({ listener: 'admin' })));
  await admin.register(httpFoundation);
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
