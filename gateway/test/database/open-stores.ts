import type { Logger } from 'pino';
import type { Database } from '@version-router/platform/postgres';
import { createConsumerStore, type ConsumerStore } from '../../src/consumers/store.js';
import { openGatewayDatabase, type StoreLocation } from '../../src/database/open.js';

/** The consumer store on a freshly opened gateway database (closing it closes the database), as main.ts builds it. */
export interface OpenStores {
  store: ConsumerStore;
  /** The same pool, for the notices' store. */
  database: Database;
}

export async function openStores(location: StoreLocation, logger: Logger): Promise<OpenStores> {
  const opened = await openGatewayDatabase(location, logger);
  return { store: createConsumerStore(opened.database, opened.close), database: opened.database };
}
