import { runMigrationCommand } from '@version-router/platform/postgres';
import { usersSchema } from './users/postgres/migrate.js';

// The backend's migration command (usersSchema.migrateCommand): the users' schema up to this build's, then exit.
await runMigrationCommand('users-orders', (database, logger) => usersSchema.apply(database, logger));
