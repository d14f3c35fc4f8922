import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { baseServerOptions, httpFoundation } from '../../platform/src/http-foundation.js';
import { httpMetrics } from '../../platform/src/metrics.js';
import { orderRoutes } from './orders/routes.js';
import { createBackendPool } from './proxy/backend.js';
import { usersProxy } from './proxy/users.js';
import { createVersionMetrics } from './versions/metrics.js';
import type { VersionPolicy } from './versions/policy.js';

export interface GatewayAppOptions {
  config: { backendTimeoutMs: number };
  policy: VersionPolicy;
  /** Epoch milliseconds. */
  clock: () => number;
  backendUrl: string;
  logger: Logger;
  registry: Registry;
}

/** The public gateway (DESIGN "Shape"), not listening: main.ts listens, tests inject. */
export async function buildApp({ config, policy, clock, backendUrl, logger, registry }: GatewayAppOptions): Promise<FastifyInstance> {
  const app = Fastify(baseServerOptions(logger));
  await app.register(httpFoundation);
  await app.register(httpMetrics, { registry });

  const pool = createBackendPool(backendUrl, config.backendTimeoutMs);
  // reply-from leaves a pool it was handed open; its keep-alive sockets would hold shutdown up.
  app.addHook('onClose', async () => {
    await pool.close();
  });

  await app.register(usersProxy, { backendUrl, pool });
  await app.register(orderRoutes, { policy, clock, metrics: createVersionMetrics(registry, policy), backendUrl, pool });
  return app;
}
