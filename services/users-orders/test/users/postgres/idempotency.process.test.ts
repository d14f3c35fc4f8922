/**
 * Idempotency-Key across built backend processes on one PostgreSQL database
 * (docs/backend.md#retries-and-idempotency-key):
 * a key is shared by every replica, a second send while the first still runs is 409, concurrent sends create
 * one user, a replica killed in the middle of a keyed create leaves neither the key nor the user behind, and
 * the cleanup of expired keys never waits for a request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createLogger } from '@version-router/platform/logger';
import { createRegistry } from '@version-router/platform/metrics';
import { eventually } from '../../../../../platform/test/support/eventually.mjs';
import { startTestPostgres, type TestPostgres } from '../../../../../platform/test/support/postgres.js';
import type { ServiceProcess } from '../../../../../platform/test/support/service-process.js';
import { KEY_LIFETIME_MS } from '../../../src/users/idempotency/key.js';
import { openPostgresUsers } from '../../../src/users/postgres/open.js';
import type { User } from '../../../src/users/store.js';
import { startBackend } from '../../process.js';
import { withClient } from './server.js';

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startTestPostgres();
});
afterAll(async () => {
  await postgres.close();
});

const KEY = 'f0b4a0e2-5a55-4c4e-9d55-8d8f6ad0c0de';
const ada = JSON.stringify({ name: 'Ada', email: 'ada@example.com' });

interface Answer {
  status: number;
  body: string;
  location: string | null;
  replayed: string | null;
  retryAfter: string | null;
}

async function post(replica: ServiceProcess, body = ada, key = KEY): Promise<Answer> {
  const res = await fetch(`${replica.apiUrl}/api/users`, { method: 'POST', body, headers: { 'idempotency-key': key } });
  return {
    status: res.status,
    body: await res.text(),
    location: res.headers.get('location'),
    replayed: res.headers.get('idempotent-replayed'),
    retryAfter: res.headers.get('retry-after'),
  };
}

const usersIn = (url: string): Promise<string[]> =>
  withClient(url, async (client) =>
    (await client.query<{ seq: string }>('SELECT seq FROM users ORDER BY seq')).rows.map((row) => `user-${row.seq}`),
  );

/** Advisory locks granted in this database now: a keyed create holds one for its key while it runs. */
const advisoryLocks = (client: pg.Client): Promise<number> =>
  client
    .query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid " +
        'FROM pg_database WHERE datname = current_database())',
    )
    .then(({ rows }) => rows[0]?.n ?? 0);

const inThisDatabase = 'datname = current_database() AND pid <> pg_backend_pid()';
/**
 * Sessions of this database but the caller's in a given state now (`wait_event_type` Lock: waiting for a lock).
 * The caller's transaction would see one snapshot of the statistics throughout, so it is cleared first.
 */
const sessionsWhere = async (client: pg.Client, condition: string): Promise<number> => {
  await client.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE ${inThisDatabase} AND ${condition}`,
  );
  return rows[0]?.n ?? 0;
};

/** How long, and how often, a test here waits for a session's state (`eventually`). */
const SESSION_STATE = { timeoutMs: 2_500, intervalMs: 10 };

/**
 * Another session holds the id counter, so a create queues behind it (for at most the 3 s statement timeout)
 * with its key claimed: the way a slow first request looks to a second one.
 */
async function holdingTheCounter<Result>(url: string, work: (locker: pg.Client) => Promise<Result>): Promise<Result> {
  return withClient(url, async (locker) => {
    await locker.query('BEGIN');
    await locker.query('SELECT last_seq FROM user_id_counter FOR UPDATE');
    try {
      return await work(locker);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
    }
  });
}

describe('Idempotency-Key on two backend replicas sharing one database', () => {
  it(
    'answers a key first used on one replica with the first answer on the other, and another body with 422 ' + 'there',
    async () => {
      const url = await postgres.createDatabase();
      const [a, b] = await Promise.all([startBackend({ DATABASE_URL: url }), startBackend({ DATABASE_URL: url })]);
      try {
        const first = await post(a);
        expect(first).toMatchObject({ status: 201, location: '/api/users/user-1', replayed: null });
        expect(await post(b)).toEqual({ ...first, replayed: 'true' });
        const reused = await post(b, JSON.stringify({ name: 'Ada', email: 'ada@example.org' }));
        expect({ status: reused.status, body: JSON.parse(reused.body) as unknown }).toEqual({
          status: 422,
          body: { error: 'idempotency key reused', code: 422 },
        });
        expect(await usersIn(url)).toEqual(['user-1']);
      } finally {
        await Promise.all([a.stop(), b.stop()]);
      }
    },
  );

  it(
    'answers 409 request in progress with Retry-After: 1 while the first request still runs on the other replica, ' +
      'then the first answer',
    async () => {
      const url = await postgres.createDatabase();
      const [a, b] = await Promise.all([startBackend({ DATABASE_URL: url }), startBackend({ DATABASE_URL: url })]);
      try {
        const first = await holdingTheCounter(url, async (locker) => {
          const pending = post(a);
          await eventually(
            'the first request to claim its key',
            async () => (await advisoryLocks(locker)) === 1,
            SESSION_STATE,
          );
          const second = await post(b);
          expect({
            status: second.status,
            body: JSON.parse(second.body) as unknown,
            retryAfter: second.retryAfter,
          }).toEqual({
            status: 409,
            body: { error: 'request in progress', code: 409 },
            retryAfter: '1',
          });
          await locker.query('ROLLBACK');
          return pending;
        });
        expect(first).toMatchObject({ status: 201, location: '/api/users/user-1', replayed: null });
        expect(await post(b)).toEqual({ ...first, replayed: 'true' });
        expect(await usersIn(url)).toEqual(['user-1']);
      } finally {
        await Promise.all([a.stop(), b.stop()]);
      }
    },
  );

  it(
    'creates one user from 20 concurrent sends of one key through both replicas; every other answer is the same ' +
      'answer or 409',
    async () => {
      const url = await postgres.createDatabase();
      const replicas = await Promise.all([startBackend({ DATABASE_URL: url }), startBackend({ DATABASE_URL: url })]);
      try {
        const answers = await Promise.all(
          Array.from({ length: 20 }, (_, i) => post(replicas[i % 2] as ServiceProcess)),
        );
        const created = answers.filter((answer) => answer.status === 201 && answer.replayed === null);
        expect(created).toHaveLength(1);
        const [first] = created as [Answer];
        for (const answer of answers) {
          if (answer.status === 201) expect(answer).toEqual({ ...first, replayed: answer === first ? null : 'true' });
          else
            expect({ status: answer.status, body: JSON.parse(answer.body) as unknown }).toEqual({
              status: 409,
              body: { error: 'request in progress', code: 409 },
            });
        }
        expect(await usersIn(url)).toEqual([(JSON.parse(first.body) as User).id]);
      } finally {
        await Promise.all(replicas.map((replica) => replica.stop()));
      }
    },
  );

  it(
    'leaves neither key nor user behind when the replica is killed after its user insert, before its key is ' +
      'written: a retry creates user-1',
    async () => {
      const url = await postgres.createDatabase();
      const [a, b] = await Promise.all([startBackend({ DATABASE_URL: url }), startBackend({ DATABASE_URL: url })]);
      try {
        await withClient(url, async (locker) => {
          // An uncommitted row of the same key: the replica reads no key (it sees only commits), inserts its user,
          // then waits on this row to write its key.
          await locker.query('BEGIN');
          await locker.query(
            "INSERT INTO idempotency_keys (key, fingerprint, created_user, expires_at) VALUES ($1, '', '{}', now())",
            [KEY],
          );
          const pending = post(a).catch((err: unknown) => err);
          await eventually(
            'the replica to wait for the key row',
            async () => (await sessionsWhere(locker, "wait_event_type = 'Lock'")) === 1,
            SESSION_STATE,
          );
          a.child.kill('SIGKILL');
          await a.exited;
          expect(await pending).toBeInstanceOf(Error);
          await locker.query('ROLLBACK');
          await eventually(
            'the dead replica’s session to end',
            async () => (await sessionsWhere(locker, "state <> 'idle'")) === 0,
            SESSION_STATE,
          );
        });
        expect(await usersIn(url)).toEqual([]);
        const retried = await post(b);
        expect(retried).toMatchObject({ status: 201, location: '/api/users/user-1', replayed: null });
        expect(await usersIn(url)).toEqual(['user-1']);
      } finally {
        await Promise.all([a.stop(), b.stop()]);
      }
    },
  );
});

describe('the cleanup of expired Idempotency-Keys', () => {
  it(
    'skips an expired key row a request holds instead of waiting for it, and deletes it at the next ' + 'sweep',
    async () => {
      const url = await postgres.createDatabase();
      const users = await openPostgresUsers(
        { url, poolMax: 2, migrationTimeoutMs: 60_000 },
        createLogger('silent', 'users-orders-test'),
        createRegistry(),
      );
      try {
        const created = '2026-11-22T10:00:00.000Z';
        const fields = { name: 'Ada', email: 'ada@example.com' };
        for (const key of ['k-0', 'k-1', 'k-2'])
          await users.store.createOnce({ key, fingerprint: 'f', fields }, created);
        const now = new Date(Date.parse(created) + KEY_LIFETIME_MS).toISOString();
        await withClient(url, async (request) => {
          // A keyed create of k-0 after its 24 h holds its row (it replaces it) until it commits.
          await request.query('BEGIN');
          await request.query("SELECT key FROM idempotency_keys WHERE key = 'k-0' FOR UPDATE");
          expect(await users.store.deleteExpiredKeys(now, 10)).toBe(2);
          await request.query('ROLLBACK');
        });
        expect(await users.store.deleteExpiredKeys(now, 10)).toBe(1);
      } finally {
        await users.close();
      }
    },
  );
});
