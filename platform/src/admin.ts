import Fastify, { type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { baseServerOptions, httpFoundation } from './http-foundation.js';
import { sendError } from './errors.js';

export interface AdminOptions {
  registry: Registry;
  logger: Logger;
  /** True when the process can serve traffic: not draining, and (for the gateway) the backend answers. */
  isReady: () => boolean | Promise<boolean>;
  /** Routes a process adds to its own admin listener. */
  routes?: FastifyPluginAsync;
}

/** The admin listener (/metrics, /healthz, /readyz): never on the public port. */
export async function buildAdminApp({ registry, logger, isReady, routes }: AdminOptions): Promise<FastifyInstance> {
  const admin = Fastify(baseServerOptions(logger.child({ listener: 'admin' })));
  await admin.register(httpFoundation);
  admin.get('/healthz', async () => ({ status: 'ok' }));
  admin.get('/readyz', async (_request, reply) => {
    if (await isReady()) return { status: 'ready' };
    return sendError(reply, 503, 'not ready');
  });
  admin.get('/metrics', async (_request, reply) => {
    void reply.type(registry.contentType);
    return registry.metrics();
  });
  if (routes !== undefined) await admin.register(routes);
  return admin;
}
