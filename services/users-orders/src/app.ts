import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Clock } from '@version-router/platform/clock';
import { baseServerOptions, httpFoundation } from '@version-router/platform/http-foundation';
import { createRegistry, httpMetrics } from '@version-router/platform/metrics';
import type { Tracing } from '@version-router/platform/tracing';
import { apiContract } from './contract/openapi.js';
import { orderSchema } from './orders/order.js';
import { orderPresenters, type OrderPresenter } from './orders/presenters.js';
import { orderRoutes } from './orders/routes.js';
import { OrderService } from './orders/service.js';
import { seedRecords, type Seeds } from './resources/seeds.js';
import { bodyReader } from './users/body-reader.js';
import { userRoutes } from './users/routes.js';
import { MemoryUserStore, type UserStore } from './users/store.js';

export interface BuildAppOptions {
  logger: Logger;
  /** Where the HTTP metrics go; one per app so tests can build many. */
  registry?: Registry;
  store?: UserStore;
  /**
   * The records of the read-only resources, each read by name while the app is built: main.ts passes the seed
   * files (`seedFiles`), tests their own (`seedRecords`). None by default, as the users store starts empty.
   */
  seeds?: Seeds;
  clock: Clock;
  /**
   * The order representation of each API major version served (the newest); its keys are the versions the backend
   * serves, documents, and serves every other resource in.
   */
  presenters?: ReadonlyMap<number, OrderPresenter>;
  /** The process's tracer (docs/tracing.md): a server span per request; shut down with the app. Absent: no traces. */
  tracing?: Tracing;
}

/** The backend's API, not listening: main.ts listens, tests inject. */
export async function buildApp({
  logger,
  registry = createRegistry(),
  store = new MemoryUserStore(),
  seeds = seedRecords({}),
  clock,
  presenters = orderPresenters,
  tracing,
}: BuildAppOptions): Promise<FastifyInstance> {
  // Every resource is served in each of these (docs/architecture.md "Adding a resource").
  const versions = [...presenters.keys()].sort((a, b) => a - b);
  const app = Fastify(baseServerOptions(logger, { tracing }));
  // Registered first, so it runs last: the spans of the last requests are sent after everything else has closed.
  if (tracing !== undefined) app.addHook('onClose', () => tracing.shutdown());
  // First, so its onRoute mirror sees every route (405 + Allow).
  await app.register(httpFoundation);
  await app.register(httpMetrics, { registry });
  await app.register(bodyReader);
  // Before the routes: it documents every route registered after it.
  await app.register(apiContract, { versions });
  await app.register(userRoutes, { store, clock });
  await app.register(orderRoutes, { orders: new OrderService(seeds.read('orders', orderSchema)), presenters });
  return app;
}
