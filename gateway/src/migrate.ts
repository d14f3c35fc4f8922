import { runMigrationCommand } from '@version-router/platform/postgres';
import { migrateGatewaySchema } from './database/migrate.js';

// The gateway's migration command (MIGRATE_COMMAND): its schema up to this build's, then exit.
await runMigrationCommand('gateway', (database, logger) => migrateGatewaySchema(database, logger));
