import { buildAdminApp } from '@version-router/platform/admin';
import { createLogger } from '@version-router/platform/logger';
import { createRegistry } from '@version-router/platform/metrics';
import { runProcess } from '@version-router/platform/run-process';
import { buildApp } from './app.js';
import { loadProcessConfig } from './config.js';
import { readOrdersFile } from './orders/order.js';

await runProcess(async () => {
  const config = loadProcessConfig();
  const orders = readOrdersFile(config.ordersFile);
  const logger = createLogger(config.logLevel, 'users-orders', { pretty: process.stdout.isTTY === true });
  const registry = createRegistry();
  const app = await buildApp({ logger, registry, orders, clock: Date.now });
  const admin = await buildAdminApp({ registry, logger, isReady: () => !app.lifecycle.leaving });
  return { app, admin, logger, host: config.host, port: config.port, adminHost: config.adminHost, adminPort: config.adminPort, shutdownDelayMs: config.shutdownDelayMs };
});
