import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { DatabaseConfig } from '@version-router/platform/config';
import { openDatabase } from './database.js';
import { migrate } from './migrate.js';
import { PostgresUserStore } from './store.js';

/** The users in PostgreSQL as a process holds them: the store, what readiness asks, and the pool to close. */
export interface PostgresUsers {
  store: PostgresUserStore;
  isReachable(): Promise<boolean>;
  close(): Promise<void>;
}

/** Opens the pool and applies the schema; a database that cannot be reached or migrated stops the start. */
export async function openPostgresUsers(config: DatabaseConfig, logger: Logger, registry: Registry): Promise<PostgresUsers> {
  const database = openDatabase({ url: config.url, poolMax: config.poolMax, logger, registry });
  try {
    await migrate(config, logger, (text) => database.redact(text));
  } catch (err) {
    await database.close();
    throw err;
  }
  return { store: new PostgresUserStore(database), isReachable: () => database.isReachable(), close: () => database.close() };
}
