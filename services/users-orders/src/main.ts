import { buildAdminApp } from '@version-router/platform/admin';
import { createLogger } from '@version-router/platform/logger';
import { createRegistry } from '@version-router/platform/metrics';
import { runProcess } from '@version-router/platform/run-process';
import { startTracing } from '@version-router/platform/tracing';
import { buildApp } from './app.js';
import { loadProcessConfig } from './config.js';
import { seedFiles } from './resources/seeds.js';
import { openPostgresUsers } from './users/postgres/open.js';

await runProcess(async () => {
  const config = loadProcessConfig();
  const logger = createLogger(config.logLevel, 'users-orders', { pretty: process.stdout.isTTY === true });
  const tracing = await startTracing(config.tracing, logger);
  // A process that traces links its latency buckets to traces, which takes the OpenMetrics format.
  const registry = createRegistry({ exemplars: tracing !== undefined });
  // DATABASE_URL unset: the in-memory store, buildApp's default.
  const postgres =
    config.database === undefined ? undefined : await openPostgresUsers(config.database, logger, registry, Date.now);
  const app = await buildApp({
    logger,
    registry,
    seeds: seedFiles(config),
    clock: Date.now,
    tracing,
    ...(postgres === undefined ? {} : { store: postgres.store }),
  });
  if (postgres !== undefined) app.addHook('onClose', () => postgres.close());
  // Ready while PostgreSQL is down too: orders need no database, and user routes answer 503 storage unavailable.
  const admin = await buildAdminApp({
    registry,
    logger,
    lifecycle: app.lifecycle,
    adminToken: config.adminToken,
    host: config.adminHost,
  });
  return {
    app,
    admin,
    logger,
    host: config.host,
    port: config.port,
    adminHost: config.adminHost,
    adminPort: config.adminPort,
    shutdownDelayMs: config.shutdownDelayMs,
  };
});
