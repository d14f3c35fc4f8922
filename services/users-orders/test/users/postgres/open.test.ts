/**
 * What a built backend does at start with the PostgreSQL database it is given (docs/behaviour.md#users-in-postgresql):
 * it brings the schema up to its own, and refuses, with one line, a schema newer than it knows or a database it cannot reach.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startTestPostgres, type TestPostgres } from '../../../../../test/support/postgres.js';
import { builtMain, startBackend } from '../../process.js';

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startTestPostgres();
});
afterAll(async () => {
  await postgres.close();
});

describe('a replica starting on the database', () => {
  it('refuses a schema newer than it knows, with one line and exit 1', async () => {
    const url = await postgres.createDatabase();
    const first = await startBackend({ DATABASE_URL: url });
    await first.stop();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`INSERT INTO pgmigrations (name, run_on) VALUES ('1900000000000_from-a-newer-backend', now())`);
    await client.end();
    const result = spawnSync(process.execPath, [builtMain], {
      env: { ...process.env, BACKEND_PORT: '0', BACKEND_ADMIN_PORT: '0', LOG_LEVEL: 'silent', DATABASE_URL: url },
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      'cannot start: the PostgreSQL schema is newer than this backend knows (migration 1900000000000_from-a-newer-backend was applied by a newer version); run that version or a newer one\n',
    );
  });

  it('stops with one line, without the password, when the database cannot be reached', () => {
    const url = `postgres://postgres:secret-pw@127.0.0.1:1/none`;
    const result = spawnSync(process.execPath, [builtMain], {
      env: { ...process.env, BACKEND_PORT: '0', BACKEND_ADMIN_PORT: '0', LOG_LEVEL: 'silent', DATABASE_URL: url },
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe('cannot start: PostgreSQL schema migration failed: connect ECONNREFUSED 127.0.0.1:1\n');
  });
});
