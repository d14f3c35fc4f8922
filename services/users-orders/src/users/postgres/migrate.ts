import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import type { DatabaseConfig } from '@version-router/platform/config';
import { migrate as migrateSchema } from '@version-router/platform/postgres';

/** TypeScript under the tests, compiled JavaScript in dist/: node-pg-migrate loads either. */
const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url));

/**
 * The users' tables, in the connection's default schema (`public`) with node-pg-migrate's own history table
 * there, under its advisory lock; a schema newer than this build stops the start (the platform's runner).
 */
export function migrate(
  { url, migrationTimeoutMs }: Pick<DatabaseConfig, 'url' | 'migrationTimeoutMs'>,
  logger: Logger,
  redact: (text: string) => string,
): Promise<void> {
  return migrateSchema({
    url,
    migrationTimeoutMs,
    logger,
    redact,
    dir: MIGRATIONS_DIR,
    applicationName: 'users-orders',
    processName: 'backend',
  });
}
