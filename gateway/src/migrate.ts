import { runMigrationCommand } from '@version-router/platform/postgres';
import { gatewaySchema } from './database/migrate.js';

// The gateway's migration command (gatewaySchema.migrateCommand): its schema up to this build's, then exit.
await runMigrationCommand('gateway', (database, logger) => gatewaySchema.apply(database, logger));
