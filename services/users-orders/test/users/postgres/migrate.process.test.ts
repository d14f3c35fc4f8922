/**
 * A built backend applying its schema while something else holds what the migration needs: another replica's
 * migration (the advisory lock), or a lock on a table a migration statement reads. A migration may take
 * minutes, so neither wait is bound by the requests' 3 s statement timeout, only by
 * DATABASE_MIGRATION_TIMEOUT_MS (docs/backend.md#users-in-postgresql). A table lock is waited for 2 s at a
 * time (lock_timeout), then given up and tried again, so requests queued behind the migration get through.
 */
import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { PG_MIGRATE_LOCK_ID } from 'node-pg-migrate';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../../../platform/test/support/eventually.mjs';
import { startTestPostgres, type TestPostgres } from '../../../../../platform/test/support/postgres.js';
import { builtMain, startBackend } from '../../process.js';

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startTestPostgres();
});
afterAll(async () => {
  await postgres.close();
});

/**
 * Longer than the requests' statement timeout (3 s) and their read timeout (3.5 s), well inside the harness's 15 s
 * start.
 */
const HOLD_MS = 5_000;

/** Another session holding what a migration needs, as a replica or an operator's session would. */
interface Holder {
  release(): Promise<void>;
  /** Resolves once another session waits on one of this session's locks. */
  someoneWaits(): Promise<void>;
}

async function hold(url: string, statements: string[]): Promise<Holder> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  for (const statement of statements) await client.query(statement);
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
  return {
    async release() {
      await client.end();
    },
    async someoneWaits() {
      // Its own session: inside the holder's transaction, pg_stat_activity would be read once and kept.
      const observer = new pg.Client({ connectionString: url });
      await observer.connect();
      try {
        await eventually(
          'a session waiting on the held lock',
          async () => {
            const { rows } = await observer.query<{ waiting: number }>(
              'SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE $1::int = ANY (pg_blocking_pids(pid))',
              [pid],
            );
            return (rows[0]?.waiting ?? 0) > 0;
          },
          { timeoutMs: 15_000 },
        );
      } finally {
        await observer.end();
      }
    },
  };
}

const holdMigrationLock = (url: string): Promise<Holder> =>
  hold(url, [`SELECT pg_advisory_lock(${PG_MIGRATE_LOCK_ID})`]);

/** The schema applied once, then its migrations table locked in an open transaction. */
async function holdMigrationsTable(url: string): Promise<Holder> {
  const first = await startBackend({ DATABASE_URL: url });
  await first.stop();
  return hold(url, ['BEGIN', 'LOCK TABLE pgmigrations IN ACCESS EXCLUSIVE MODE']);
}

/** The backend's exit code and stderr, run to its end. */
async function runToExit(env: Record<string, string>): Promise<{ code: number | string; stderr: string }> {
  try {
    await promisify(execFile)(process.execPath, [builtMain], {
      env: { ...process.env, BACKEND_PORT: '0', BACKEND_ADMIN_PORT: '0', LOG_LEVEL: 'silent', ...env },
      encoding: 'utf8',
      timeout: 15_000,
    });
    return { code: 0, stderr: '' };
  } catch (err) {
    const failed = err as { code: number | string; stderr: string };
    return { code: failed.code, stderr: failed.stderr };
  }
}

/** What the migration logs while it waits on a table lock: it gives the lock up (lock_timeout) and tries again. */
const LOCK_RETRY_LINE = 'a migration statement waited too long for a lock; trying again';

describe.each([
  [
    "another replica's migration (the advisory lock)",
    holdMigrationLock,
    "waiting for another replica's schema migration",
  ],
  ['a lock on the migrations table', holdMigrationsTable, LOCK_RETRY_LINE],
] as const)('a backend starting while something holds %s', (_what, holdIt, waitingLine) => {
  it(`waits past the requests' statement timeout, then applies the schema and serves`, async () => {
    const url = await postgres.createDatabase();
    const holder = await holdIt(url);
    const starting = startBackend({ DATABASE_URL: url });
    // Awaited below; a start that fails while the lock is still held must not go unhandled meanwhile.
    starting.catch(() => undefined);
    try {
      await holder.someoneWaits();
      await sleep(HOLD_MS);
    } finally {
      await holder.release();
    }
    const backend = await starting;
    try {
      expect(backend.logs.map((line) => line.msg)).toContain(waitingLine);
      expect((await fetch(`${backend.adminUrl}/readyz`)).status).toBe(200);
      const created = await fetch(`${backend.apiUrl}/api/users`, {
        method: 'POST',
        body: '{"name":"Ada","email":"ada@example.com"}',
      });
      expect(created.status).toBe(201);
    } finally {
      await backend.stop();
    }
  });
});

describe('DATABASE_MIGRATION_TIMEOUT_MS', () => {
  it.each([
    [
      "another replica's migration",
      holdMigrationLock,
      "waited for another replica's schema migration (the PostgreSQL advisory lock)",
    ],
    ['a migration statement', holdMigrationsTable, 'a migration statement ran'],
  ] as const)('bounds the wait for %s: exit 1 with one line naming it', async (_what, holdIt, what) => {
    const url = await postgres.createDatabase();
    const holder = await holdIt(url);
    try {
      const result = await runToExit({ DATABASE_URL: url, DATABASE_MIGRATION_TIMEOUT_MS: '1000' });
      expect(result).toEqual({
        code: 1,
        stderr:
          `cannot start: PostgreSQL schema migration failed: ${what} longer than ` +
          `DATABASE_MIGRATION_TIMEOUT_MS (1000 ms)\n`,
      });
    } finally {
      await holder.release();
    }
  });
});
