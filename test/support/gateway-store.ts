/**
 * The consumer store the gateway processes of a test run share: one embedded PostgreSQL for the run (vitest
 * globalSetup), one database in it. A gateway opens the embedded PGlite store by default, which costs each
 * process seconds of CPU and about 300 MB (bench/README.md); the suites that start gateways for other reasons
 * give them this database instead. The tests of the store itself choose their own (test/consumers).
 */
import { inject } from 'vitest';
import type { TestProject } from 'vitest/node';
import { startTestPostgres } from '../../platform/test/support/postgres.js';

declare module 'vitest' {
  interface ProvidedContext {
    gatewayDatabaseUrl: string;
  }
}

export default async function startGatewayStore(project: TestProject): Promise<() => Promise<void>> {
  const postgres = await startTestPostgres();
  project.provide('gatewayDatabaseUrl', await postgres.createDatabase());
  return () => postgres.close();
}

/** The environment that points a gateway process at the run's shared store. */
export function sharedGatewayStore(): { DATABASE_URL: string } {
  return { DATABASE_URL: inject('gatewayDatabaseUrl') };
}
