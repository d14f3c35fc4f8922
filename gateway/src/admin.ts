import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { buildAdminApp } from '@version-router/platform/admin';
import { sendError } from '@version-router/platform/errors';
import { changelogRoutes } from './changelog/routes.js';
import { changesRoutes } from './changes/routes.js';
import { statusRoutes } from './status/routes.js';

/**
 * The admin routes only the gateway has: `POST /-/reload` re-reads the version policy file; `GET /`
 * and `GET /consumers` show the versions and who still calls the deprecated ones; `GET
 * /versions/{n}/changes` (the migration guide) and `GET /changelog` are the page's links.
 */
function gatewayAdminRoutes(app: FastifyInstance, replica: string): FastifyPluginAsync {
  return async function gatewayAdminRoutes(admin) {
    admin.post('/-/reload', async (_request, reply) => {
      const result = app.versionPolicies.reload();
      if (!result.ok) return sendError(reply, 400, 'invalid version policy', result.reason);
      return { reloaded: true };
    });
    await admin.register(statusRoutes, { policies: app.versionPolicies, usage: app.versionUsage, replica });
    // The status page links each deprecated version's guide on its own port.
    await admin.register(changesRoutes, { policies: app.versionPolicies, guides: app.migrationGuides });
    await admin.register(changelogRoutes, app.changelog);
  };
}

export interface GatewayAdminOptions {
  app: FastifyInstance;
  registry: Registry;
  logger: Logger;
  /** This replica's name on the status page: the host name (main.ts), injected so tests choose it. */
  replica: string;
}

/**
 * The gateway's admin listener: /metrics, /healthz, /readyz (this replica only: ready whether or not the
 * backend answers, which `backend_up` shows), the reload and the status page.
 */
export function buildGatewayAdmin({ app, registry, logger, replica }: GatewayAdminOptions): Promise<FastifyInstance> {
  return buildAdminApp({ registry, logger, lifecycle: app.lifecycle, routes: gatewayAdminRoutes(app, replica) });
}
