import { hostname } from 'node:os';
import { createLogger } from '@version-router/platform/logger';
import { createRegistry } from '@version-router/platform/metrics';
import { runProcess } from '@version-router/platform/run-process';
import { buildGatewayAdmin } from './admin.js';
import { buildApp } from './app.js';
import { loadProcessConfig } from './config.js';
import { readPolicyFile } from './versions/policy-file.js';

await runProcess(async () => {
  const config = loadProcessConfig();
  const readPolicy = () => readPolicyFile(config.policyPath);
  const policy = readPolicy();
  const logger = createLogger(config.logLevel, 'gateway', { pretty: process.stdout.isTTY === true });
  const registry = createRegistry();
  const app = await buildApp({
    config: { backendTimeoutMs: config.backendTimeoutMs },
    policy,
    readPolicy,
    watchPolicy: config.watchPolicy ? { path: config.policyPath } : undefined,
    clock: Date.now,
    backendUrl: config.backendUrl,
    logger,
    registry,
  });
  const admin = await buildGatewayAdmin({ app, registry, logger, replica: hostname() });
  return {
    app,
    admin,
    logger,
    host: config.host,
    port: config.port,
    adminHost: config.adminHost,
    adminPort: config.adminPort,
    shutdownDelayMs: config.shutdownDelayMs,
    // `docker compose kill -s HUP gateway` re-reads the version policy; the outcome is logged.
    onHangup: () => app.versionPolicies.reload(),
  };
});
