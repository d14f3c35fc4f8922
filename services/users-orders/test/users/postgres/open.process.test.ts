/**
 * What a built backend does at start with the PostgreSQL database it is given (docs/backend.md#users-in-postgresql):
 * it brings the schema up to its own, runs on a schema one release newer (a rollback) with a warning, and refuses,
 * with one line, a schema two or more releases newer than it knows or a database it cannot reach.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startTestPostgres, type TestPostgres } from '../../../../../platform/test/support/postgres.js';
import { builtMain, startBackend } from '../../process.js';

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startTestPostgres();
});
afterAll(async () => {
  await postgres.close();
});

/** What a newer release's start does: its statements and its migrations' rows, in one transaction (one `run_on`). */
async function applyNewerRelease(url: string, statements: string[], migrations: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('BEGIN');
    for (const statement of statements) await client.query(statement);
    for (const name of migrations) {
      await client.query('INSERT INTO pgmigrations (name, run_on) VALUES ($1, now())', [name]);
    }
    await client.query('COMMIT');
  } finally {
    await client.end();
  }
}

describe('a replica starting on the database', () => {
  it('runs on a schema one release newer than it knows, as after a rollback, with a warning', async () => {
    const url = await postgres.createDatabase();
    const first = await startBackend({ DATABASE_URL: url });
    const body = '{"name":"Ada","email":"ada@example.com"}';
    const ada = (await (await fetch(`${first.apiUrl}/api/users`, { method: 'POST', body })).json()) as { id: string };
    await first.stop();
    // The next release's migration, as it would apply it (expand: it adds, it drops nothing this build reads).
    await applyNewerRelease(url, ['ALTER TABLE users ADD COLUMN nickname text'], ['1900000000000_add-nickname']);
    const backend = await startBackend({ DATABASE_URL: url });
    try {
      const warnings = backend.logs
        .filter((line) => line.level === 40)
        .map(({ msg, migrations }) => ({ msg, migrations }));
      expect(warnings).toEqual([
        {
          msg: 'the PostgreSQL schema is one release newer than this backend knows (a rollback?); running on it',
          migrations: ['1900000000000_add-nickname'],
        },
      ]);
      expect((await fetch(`${backend.adminUrl}/readyz`)).status).toBe(200);
      expect((await fetch(`${backend.apiUrl}/api/users/${ada.id}`)).status).toBe(200);
      const grace = '{"name":"Grace","email":"grace@example.com"}';
      const created = await fetch(`${backend.apiUrl}/api/users`, { method: 'POST', body: grace });
      expect(created.status).toBe(201);
    } finally {
      await backend.stop();
    }
  });

  it('refuses a schema two releases newer than it knows, with one line and exit 1', async () => {
    const url = await postgres.createDatabase();
    const first = await startBackend({ DATABASE_URL: url });
    await first.stop();
    await applyNewerRelease(url, [], ['1900000000000_from-a-newer-backend']);
    await applyNewerRelease(url, [], ['1900000000001_from-the-one-after', '1900000000002_also-from-the-one-after']);
    const result = spawnSync(process.execPath, [builtMain], {
      env: { ...process.env, BACKEND_PORT: '0', BACKEND_ADMIN_PORT: '0', LOG_LEVEL: 'silent', DATABASE_URL: url },
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      'cannot start: the PostgreSQL schema is 2 releases newer than this backend knows ' +
        '(migrations 1900000000000_from-a-newer-backend, ' +
        '1900000000001_from-the-one-after, 1900000000002_also-from-the-one-after were applied by newer versions); ' +
        'a version runs on a schema at most one release newer: run a newer one\n',
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
