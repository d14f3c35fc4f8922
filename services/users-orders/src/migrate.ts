import { runMigrationCommand } from '@version-router/platform/postgres';
import { migrate } from './users/postgres/migrate.js';

// The backend's migration command (MIGRATE_COMMAND): the users' schema up to this build's, then exit.
await runMigrationCommand('users-orders', (database, logger) => migrate(database, logger));
