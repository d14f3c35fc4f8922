import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import type { DatabaseConfig } from '@version-router/platform/config';
import { checkSchema, migrate, type Database } from '@version-router/platform/postgres';

/** TypeScript under the tests, compiled JavaScript in dist/: node-pg-migrate loads either. */
const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url));

/**
 * The gateway's tables and their migration history live here, apart from the backend's (`public`) in a shared database.
 */
const SCHEMA = 'gateway';

export const APPLICATION_NAME = 'gateway';

/** What applies this build's migrations without serving (src/migrate.ts, built; the image's working directory). */
export const MIGRATE_COMMAND = 'node gateway/dist/src/migrate.js';

/** Brings the gateway's schema up to this build's (the platform's runner, under its advisory lock). */
export function migrateGatewaySchema(
  { url, migrationTimeoutMs }: Pick<DatabaseConfig, 'url' | 'migrationTimeoutMs'>,
  logger: Logger,
  redact?: (text: string) => string,
): Promise<void> {
  return migrate({
    url,
    migrationTimeoutMs,
    logger,
    ...(redact === undefined ? {} : { redact }),
    dir: MIGRATIONS_DIR,
    schema: SCHEMA,
    applicationName: APPLICATION_NAME,
    processName: 'gateway',
  });
}

/**
 * DATABASE_MIGRATIONS=check: waits for the gateway's schema to hold this build's migrations (applied by
 * MIGRATE_COMMAND), through the replica's own pool, and refuses one it does not accept (the platform's check).
 */
export function checkGatewaySchema(
  database: Database,
  { migrationTimeoutMs }: Pick<DatabaseConfig, 'migrationTimeoutMs'>,
  logger: Logger,
): Promise<void> {
  return checkSchema({
    database,
    migrationTimeoutMs,
    logger,
    dir: MIGRATIONS_DIR,
    schema: SCHEMA,
    processName: 'gateway',
    migrateCommand: MIGRATE_COMMAND,
  });
}
