import { hostname } from 'node:os';
import { clockStartingAt } from '@version-router/platform/clock';
import { createLogger } from '@version-router/platform/logger';
import { createRegistry } from '@version-router/platform/metrics';
import { runProcess } from '@version-router/platform/run-process';
import { startTracing } from '@version-router/platform/tracing';
import { buildGatewayAdmin } from './admin.js';
import { buildApp } from './app.js';
import { loadProcessConfig } from './config.js';
import { createConsumerStore } from './consumers/store.js';
import { openGatewayDatabase } from './database/open.js';
import { createNoticeStore } from './notices/store.js';
import { loadPolicyFile } from './versions/policy-file.js';

await runProcess(async () => {
  const config = loadProcessConfig();
  const limits = { maxBytes: config.translationMaxBytes, maxDepth: config.translationMaxDepth };
  // The policy's modules are loaded with it, at start and at every reload, before it is activated.
  const readPolicy = () => loadPolicyFile(config.policyPath, limits);
  // The file's own rules refuse a start; those that depend on the date never do (the app says so instead).
  const policy = await readPolicy();
  const logger = createLogger(config.logLevel, 'gateway', { pretty: process.stdout.isTTY === true });
  const tracing = await startTracing(config.tracing, logger);
  const clock = config.clockStartMs === undefined ? Date.now : clockStartingAt(config.clockStartMs);
  if (config.clockStartMs !== undefined)
    logger.warn(
      { clockStart: new Date(config.clockStartMs).toISOString() },
      'the clock is moved for a rehearsal (GATEWAY_CLOCK_START): the policy, the notices and the ledger run at that ' +
        'date, advancing in real time',
    );
  // A process that traces links its latency buckets to traces, which takes the OpenMetrics format.
  const registry = createRegistry({ exemplars: tracing !== undefined });
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
      queryKeyParameters: config.queryKeyParameters,
      pinChangesPerMinute: config.pinChangesPerMinute,
    },
    policy,
    readPolicy,
    watchPolicy: config.watchPolicy ? { path: config.policyPath } : undefined,
    clock,
    backendUrl: config.backendUrl,
    logger,
    registry,
    tracing,
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
    clock,
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
    onHangup: () => {
      void app.versionPolicies.reload();
    },
  };
});
