/** What the users' PostgreSQL tests share: a test file's server, and a client of one of its databases. */
import { afterAll, beforeAll } from 'vitest';
import pg from 'pg';
import { startTestPostgres, type TestPostgres } from '../../../../../platform/test/support/postgres.js';

/** Starts the file's server before its tests and stops it after; the answer gives the running server. */
export function useTestPostgres(): () => TestPostgres {
  let postgres: TestPostgres | undefined;
  beforeAll(async () => {
    postgres = await startTestPostgres();
  });
  afterAll(async () => {
    await postgres?.close();
  });
  return () => {
    if (postgres === undefined) throw new Error('the PostgreSQL server did not start');
    return postgres;
  };
}

/** `work` on a connection of its own to `url`, closed after. */
export async function withClient<Result>(url: string, work: (client: pg.Client) => Promise<Result>): Promise<Result> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
