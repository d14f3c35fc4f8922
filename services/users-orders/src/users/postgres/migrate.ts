import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import type { DatabaseConfig } from '@version-router/platform/config';
import { checkSchema, migrate as migrateSchema, type Database } from '@version-router/platform/postgres';

/** TypeScript under the tests, compiled JavaScript in dist/: node-pg-migrate loads either. */
const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url));

/** What applies this build's migrations without serving (src/migrate.ts, built; the image's working directory). */
export const MIGRATE_COMMAND = 'node services/users-orders/dist/src/migrate.js';

/**
 * The users' tables, in the connection's default schema (`public`) with node-pg-migrate's own history table
 * there, under its advisory lock; a schema newer than this build stops the start (the platform's runner).
 */
export function migrate(
  { url, migrationTimeoutMs }: Pick<DatabaseConfig, 'url' | 'migrationTimeoutMs'>,
  logger: Logger,
  redact?: (text: string) => string,
): Promise<void> {
  return migrateSchema({
    url,
    migrationTimeoutMs,
    logger,
    ...(redact === undefined ? {} : { redact }),
    dir: MIGRATIONS_DIR,
    applicationName: 'users-orders',
    processName: 'backend',
  });
}

/**
 * DATABASE_MIGRATIONS=check: waits for the users' schema to hold this build's migrations (applied by
 * MIGRATE_COMMAND), through the replica's own pool, and refuses one it does not accept (the platform's check).
 */
export function checkUsersSchema(
  database: Database,
  { migrationTimeoutMs }: Pick<DatabaseConfig, 'migrationTimeoutMs'>,
  logger: Logger,
): Promise<void> {
  return checkSchema({
    database,
    migrationTimeoutMs,
    logger,
    dir: MIGRATIONS_DIR,
    processName: 'backend',
    migrateCommand: MIGRATE_COMMAND,
  });
}
