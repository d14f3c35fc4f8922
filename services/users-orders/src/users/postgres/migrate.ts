import { fileURLToPath } from 'node:url';
import { schemaMigrations } from '@version-router/platform/postgres';

/** The users' tables, in the connection's default schema (`public`) with node-pg-migrate's own history table there. */
export const usersSchema = schemaMigrations({
  dir: fileURLToPath(new URL('./migrations', import.meta.url)),
  applicationName: 'users-orders',
  processName: 'backend',
  migrateCommand: 'node services/users-orders/dist/src/migrate.js',
});
