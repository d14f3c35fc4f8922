import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { buildAdminApp } from '@version-router/platform/admin';
import { sendError } from '@version-router/platform/errors';
import type { Clock } from '@version-router/platform/clock';
import { changelogRoutes } from './changelog/routes.js';
import { changesRoutes } from './changes/routes.js';
import { comparisonRoutes } from './comparison/routes.js';
import { registryRoutes } from './consumers/registry-routes.js';
import { adminPinRoutes } from './consumers/self-service-routes.js';
import { versionConsumersRoutes } from './consumers/reports/version-consumers-routes.js';
import { statusRoutes } from './status/routes.js';

/**
 * The admin routes only the gateway has: `POST /-/reload` re-reads the version policy file; `GET /`
 * and `GET /consumers` show the versions and who still calls the deprecated ones; `GET
 * /versions/{n}/changes` (the migration guide) and `GET /changelog` are the page's links; the consumer
 * registry registers consumers and issues and revokes their keys; `GET /versions/{n}/consumers` lists whom
 * to reach about a version; `GET /versions/{n}/comparison` what comparing a version's declarations found.
 */
function gatewayAdminRoutes(app: FastifyInstance, replica: string, clock: Clock): FastifyPluginAsync {
  return async function gatewayAdminRoutes(admin) {
    admin.post('/-/reload', async (_request, reply) => {
      const result = await app.versionPolicies.reload();
      if (!result.ok) return sendError(reply, 400, 'invalid version policy', result.reason);
      return { reloaded: true };
    });
    await admin.register(statusRoutes, {
      policies: app.versionPolicies,
      usage: app.versionUsage,
      reader: app.consumers.store,
      replica,
      notices: app.noticeStore,
      pinnedConsumers: () => app.consumers.keys.pinnedConsumers(),
      guides: app.migrationGuides,
      comparisons: app.comparisons,
    });
    // The status page links each deprecated version's guide on its own port.
    await admin.register(changesRoutes, { policies: app.versionPolicies, guides: app.migrationGuides });
    await admin.register(changelogRoutes, app.changelog);
    const { store, keys, ledger } = app.consumers;
    await admin.register(registryRoutes, { store, keys, clock, policies: app.versionPolicies, ledger });
    await admin.register(adminPinRoutes, {
      policies: app.versionPolicies,
      ...app.consumers,
      clock,
      guides: app.migrationGuides,
      notifyPinMoved: app.notifyPinMoved,
    });
    const noticeStore = app.noticeStore;
    const noticesSentFor = noticeStore === undefined ? undefined : (version: number) => noticeStore.sentOf(version);
    await admin.register(versionConsumersRoutes, {
      policies: app.versionPolicies,
      reader: app.consumers.store,
      noticesSentFor,
      clock,
    });
    await admin.register(comparisonRoutes, { policies: app.versionPolicies, comparisons: app.comparisons, replica });
  };
}

export interface GatewayAdminOptions {
  app: FastifyInstance;
  registry: Registry;
  logger: Logger;
  /** This replica's name on the status page: the host name (main.ts), injected so tests choose it. */
  replica: string;
  /**
   * ADMIN_TOKEN, and the address the listener binds: who may use the admin routes
   * (docs/consumers.md#admin-authentication).
   */
  adminToken: string | undefined;
  host: string;
  /** The app's clock: when a consumer or key was made or revoked. */
  clock: Clock;
}

/**
 * The gateway's admin listener: /metrics, /healthz, /readyz (this replica only: ready whether or not the
 * backend answers, which `backend_up` shows), the reload, the consumers and the status page.
 */
export function buildGatewayAdmin({
  app,
  registry,
  logger,
  replica,
  adminToken,
  host,
  clock,
}: GatewayAdminOptions): Promise<FastifyInstance> {
  return buildAdminApp({
    registry,
    logger,
    adminToken,
    host,
    lifecycle: app.lifecycle,
    routes: gatewayAdminRoutes(app, replica, clock),
  });
}
