import { afterAll, beforeAll, onTestFinished } from 'vitest';
import { createLogger } from '@version-router/platform/logger';
import { createRegistry } from '@version-router/platform/metrics';
import { startTestPostgres, type TestPostgres } from '../../../platform/test/support/postgres.js';
import { openPostgresUsers } from '../src/users/postgres/open.js';
import { MemoryUserStore, type UserStore } from '../src/users/store.js';

/** A store the user scenarios run against: each test gets a new, empty one. */
export interface StoreKind {
  name: 'memory' | 'postgres';
  newStore: () => Promise<UserStore>;
}

/**
 * Both stores, for `describe.each(useStoreKinds())`: the same scenarios prove the same rules on each. Call it
 * at the top of a test file: it starts that file's PostgreSQL server before its tests and stops it after;
 * each PostgreSQL store is a new database with the schema applied, its pool closed when its test finishes.
 */
export function useStoreKinds(): StoreKind[] {
  let postgres: TestPostgres | undefined;
  beforeAll(async () => {
    postgres = await startTestPostgres();
  });
  afterAll(async () => {
    await postgres?.close();
  });
  return [
    { name: 'memory', newStore: () => Promise.resolve(new MemoryUserStore()) },
    {
      name: 'postgres',
      newStore: async () => {
        if (postgres === undefined) throw new Error('the PostgreSQL server did not start');
        const url = await postgres.createDatabase();
        const users = await openPostgresUsers(
          { url, poolMax: 5, migrationTimeoutMs: 60_000 },
          createLogger('silent', 'users-test'),
          createRegistry(),
        );
        onTestFinished(() => users.close());
        return users.store;
      },
    },
  ];
}
