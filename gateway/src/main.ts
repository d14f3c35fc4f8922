import { hostname } from 'node:os';
import { createLogger } from '@version-router/platform/logger';
import { createRegistry } from '@version-router/platform/metrics';
import { runProcess } from '@version-router/platform/run-process';
import { buildGatewayAdmin } from './admin.js';
import { buildApp } from './app.js';
import { loadProcessConfig } from './config.js';
import { createConsumerStore } from './consumers/store.js';
import { openGatewayDatabase } from './database/open.js';
import { createNoticeStore } from './notices/store.js';
import { refusedAtStart } from './versions/load-rules.js';
import { readPolicyFile } from './versions/policy-file.js';

await runProcess(async () => {
  const config = loadProcessConfig();
  const readPolicy = () => readPolicyFile(config.policyPath);
  const policy = readPolicy();
  const refused = refusedAtStart(policy.file, config.policyPath, Date.now());
  if (refused !== undefined) throw refused;
  const logger = createLogger(config.logLevel, 'gateway', { pretty: process.stdout.isTTY === true });
  const registry = createRegistry();
  // Consumers and keys must be readable before the first request: a database that cannot be opened or migrated
  // stops the start.
  const database = await openGatewayDatabase({ database: config.database, dataDir: config.dataDir }, logger);
  logger.info(
    database.kind === 'postgres'
      ? { consumerStore: 'postgres' }
      : { consumerStore: 'embedded', dataDir: config.dataDir },
    'consumer store open',
  );
  // The app closes the database (its onClose hook); a build that fails closes what it opened, so the embedded
  // store's process ends before this one.
  const app = await buildApp({
    config: {
      backendTimeoutMs: config.backendTimeoutMs,
      translationMaxBytes: config.translationMaxBytes,
      translationMaxDepth: config.translationMaxDepth,
      translationMaxInflightBytes: config.translationMaxInflightBytes,
      consumerKeysUrl: config.consumerKeysUrl,
    },
    policy,
    readPolicy,
    watchPolicy: config.watchPolicy ? { path: config.policyPath } : undefined,
    clock: Date.now,
    backendUrl: config.backendUrl,
    logger,
    registry,
    consumerStore: createConsumerStore(database.database, database.close),
    notices: { store: createNoticeStore(database.database), config: config.notices },
  }).catch(async (err: unknown) => {
    await database.close();
    throw err;
  });
  const admin = await buildGatewayAdmin({
    app,
    registry,
    logger,
    replica: hostname(),
    adminToken: config.adminToken,
    host: config.adminHost,
    clock: Date.now,
  }).catch(async (err: unknown) => {
    await app.close();
    throw err;
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
    // `docker compose kill -s HUP gateway` re-reads the version policy; the outcome is logged.
    onHangup: () => app.versionPolicies.reload(),
  };
});
