import type { Logger } from 'pino';
import { ConfigError, logLevelSchema, readDatabaseConfig, readEnv, type DatabaseConfig } from '../config.js';
import { createLogger } from '../logger.js';

/** What a migration command reads of its environment. */
export interface MigrationCommandConfig {
  database: DatabaseConfig;
  logLevel: ReturnType<typeof logLevelSchema.parse>;
}

/**
 * DATABASE_URL (required: there is nothing to migrate without it), DATABASE_MIGRATION_TIMEOUT_MS and LOG_LEVEL, as the
 * process reads them; throws ConfigError naming the variable.
 */
export function loadMigrationCommandConfig(env: NodeJS.ProcessEnv): MigrationCommandConfig {
  const { LOG_LEVEL: logLevel } = readEnv(env, { LOG_LEVEL: { schema: logLevelSchema, default: 'info' } });
  const database = readDatabaseConfig(env);
  if (database === undefined)
    throw new ConfigError('DATABASE_URL: must be set (the migration command applies the schema of that database)');
  return { database, logLevel };
}

/**
 * A process's migration command (`node <process>/dist/src/migrate.js`; on Kubernetes the migration Job, run before a
 * rollout as a role that may change the schema): brings the schema up to this build's with the process's own
 * migrations, the same runner its start uses with DATABASE_MIGRATIONS=apply, and exits 0. A bad configuration or a
 * failed migration is one line on stderr and exit 1.
 */
export async function runMigrationCommand(
  service: string,
  migrate: (database: DatabaseConfig, logger: Logger) => Promise<void>,
): Promise<never> {
  let config: MigrationCommandConfig;
  try {
    config = loadMigrationCommandConfig(process.env);
  } catch (err) {
    process.stderr.write(`invalid configuration: ${(err as Error).message}\n`);
    process.exit(1);
  }
  const logger = createLogger(config.logLevel, service, { pretty: process.stdout.isTTY === true });
  try {
    await migrate(config.database, logger);
  } catch (err) {
    process.stderr.write(`cannot migrate: ${(err as Error).message}\n`);
    process.exit(1);
  }
  logger.info('schema migrated');
  // The log's periodic flush would keep the process alive; its exit hook writes what is left.
  process.exit(0);
}
