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
export { migrate, type MigrationOptions } from './migrate.js';
