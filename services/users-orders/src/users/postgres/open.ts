import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Clock } from '@version-router/platform/clock';
import type { DatabaseConfig } from '@version-router/platform/config';
import { openDatabase } from './database.js';
import { startKeySweep } from './key-sweep.js';
import { usersSchema } from './migrate.js';
import { PostgresUserStore } from './store.js';

/** The users in PostgreSQL as a process holds them: the store, and what to stop on close. */
export interface PostgresUsers {
  store: PostgresUserStore;
  /**
   * Answers the creates still waiting for their batch, stops the sweep of expired Idempotency-Keys and closes the pool.
   */
  close(): Promise<void>;
}

/**
 * Opens the pool and applies the schema, or with DATABASE_MIGRATIONS=check waits for it to be one this build
 * accepts; a database that cannot be reached, migrated or accepted stops the start. Then
 * expired Idempotency-Keys are deleted in the background, by the `clock` the keys were written with.
 */
export async function openPostgresUsers(
  config: DatabaseConfig,
  logger: Logger,
  registry: Registry,
  clock: Clock = Date.now,
): Promise<PostgresUsers> {
  const database = openDatabase({ url: config.url, poolMax: config.poolMax, logger, registry });
  try {
    if (config.migrations === 'check') await usersSchema.check(database, config, logger);
    else await usersSchema.apply(config, logger, (text) => database.redact(text));
  } catch (err) {
    await database.close();
    throw err;
  }
  const store = new PostgresUserStore(database);
  const sweep = startKeySweep({ store, clock, logger });
  return {
    store,
    async close() {
      // A create asked for before the close finishes on the open pool rather than failing on a closed one.
      await store.settled();
      await sweep.stop();
      await database.close();
    },
  };
}
