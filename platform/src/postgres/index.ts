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
export { loadMigrationCommandConfig, runMigrationCommand } from './migration-command.js';
export { schemaMigrations, type SchemaDefinition, type SchemaMigrations } from './schema.js';
