import { fileURLToPath } from 'node:url';
import { schemaMigrations } from '@version-router/platform/postgres';

export const APPLICATION_NAME = 'gateway';

/**
 * The gateway's tables and their migration history, in a schema of their own (`gateway`), apart from the backend's
 * (`public`) in a shared database.
 */
export const gatewaySchema = schemaMigrations({
  dir: fileURLToPath(new URL('./migrations', import.meta.url)),
  schema: 'gateway',
  applicationName: APPLICATION_NAME,
  processName: 'gateway',
  migrateCommand: 'node gateway/dist/src/migrate.js',
});
