import { buildAdminApp } from '../../platform/src/admin.js';
import { createLogger } from '../../platform/src/logger.js';
import { createRegistry } from '../../platform/src/metrics.js';
import { runProcess } from '../../platform/src/run-process.js';
import { buildApp } from './app.js';
import { loadProcessConfig } from './config.js';
import { backendAccepts } from './proxy/readiness.js';

await runProcess(async () => {
  const config = loadProcessConfig();
  const logger = createLogger(config.logLevel, 'gateway');
  const registry = createRegistry();
  const app = await buildApp({
    config: { backendTimeoutMs: config.backendTimeoutMs },
    policy: config.policy,
    clock: Date.now,
    backendUrl: config.backendUrl,
    logger,
    registry,
  });
  const admin = await buildAdminApp({
    registry,
    logger,
    isReady: () => !app.lifecycle.draining && backendAccepts(config.backendUrl),
  });
  return { app, admin, logger, host: config.host, port: config.port, adminPort: config.adminPort };
});
