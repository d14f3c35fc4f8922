/** PostgreSQL as both processes use it: a pool with its failure classes and a migration runner. */
export {
  StorageUnavailableError,
  openDatabase,
  readTimeoutMs,
  type Database,
  type DatabaseMetricSources,
  type DatabaseOptions,
  type StatementTimer,
} from './database.js';
export { checkSchema, migrate, type MigrationOptions, type SchemaCheckOptions } from './migrate.js';
export { loadMigrationCommandConfig, runMigrationCommand } from './migration-command.js';
