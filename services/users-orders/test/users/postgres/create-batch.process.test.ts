/**
 * Creates batched by each replica (docs/backend.md#users-in-postgresql): the creates a replica holds at once
 * share one statement, and the id rules hold as for one create at a time: numbers 1..N across replicas without
 * gaps or repeats, in the order each replica was asked, none consumed by a create or a batch that failed, and
 * a create asked for before the replica closes is answered.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createLogger } from '@version-router/platform/logger';
import { createRegistry } from '@version-router/platform/metrics';
import type { Registry } from 'prom-client';
import { CREATE_BATCH_MAX } from '../../../src/users/postgres/create-batch.js';
import { openPostgresUsers, type PostgresUsers } from '../../../src/users/postgres/open.js';
import { StorageUnavailableError, type User } from '../../../src/users/store.js';
import { useTestPostgres, withClient } from './server.js';

const postgres = useTestPostgres();

const NOW = '2026-11-22T10:00:00.000Z';
/** The name a trigger installed by `refuseName` makes the database refuse. */
const REFUSED = 'refused';
/** The name whose insert that trigger holds past the 3 s statement timeout. */
const TOO_SLOW = 'too slow';

interface Replica {
  users: PostgresUsers;
  registry: Registry;
}

/** A replica's users on `url`: its own pool and batches, closed when the test finishes. */
async function replica(url: string): Promise<Replica> {
  const registry = createRegistry();
  const users = await openUsers(url, registry);
  onTestFinished(() => users.close());
  return { users, registry };
}

const openUsers = (url: string, registry = createRegistry()): Promise<PostgresUsers> =>
  openPostgresUsers({ url, poolMax: 5, migrationTimeoutMs: 60_000 }, createLogger('silent', 'users-test'), registry);

/** Makes the database refuse any user named REFUSED, as it would refuse a value it cannot store, and hold TOO_SLOW. */
const refuseName = (url: string): Promise<unknown> =>
  withClient(url, (client) =>
    client.query(`
      CREATE FUNCTION refuse_name() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.name = '${REFUSED}' THEN RAISE EXCEPTION 'refused by the test'; END IF;
          IF NEW.name = '${TOO_SLOW}' THEN PERFORM pg_sleep(4); END IF;
          RETURN NEW;
        END $$;
      CREATE TRIGGER refuse_name BEFORE INSERT ON users FOR EACH ROW EXECUTE FUNCTION refuse_name();`),
  );

/** The numbers stored, in order, and where the counter stands. */
const stored = (url: string): Promise<{ seqs: number[]; counter: number }> =>
  withClient(url, async (client) => ({
    seqs: (await client.query<{ seq: string }>('SELECT seq FROM users ORDER BY seq')).rows.map((row) =>
      Number(row.seq),
    ),
    counter: Number(
      (await client.query<{ last_seq: string }>('SELECT last_seq FROM user_id_counter')).rows[0]?.last_seq,
    ),
  }));

/** How many create statements a replica ran (db_query_duration_seconds observes one per statement). */
async function createStatements(registry: Registry): Promise<number> {
  const match = /^db_query_duration_seconds_count\{operation="create"\} (\d+)$/m.exec(await registry.metrics());
  return Number(match?.[1] ?? 0);
}

const fieldsOf = (name: string): { name: string; email: string } => ({ name, email: `${name}@example.com` });
const seqOf = (user: User): number => Number(user.id.slice('user-'.length));
const oneTo = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);

describe('creates batched by each replica', () => {
  it(
    'numbers 2 × 200 concurrent creates on two replicas 1..400 without gaps or repeats, each its own user, in the ' +
      'order each replica was asked',
    async () => {
      const url = await postgres().createDatabase();
      const [a, b] = await Promise.all([replica(url), replica(url)]);
      const asked = (r: Replica, prefix: string): Promise<User[]> =>
        Promise.all(Array.from({ length: 50 }, (_, i) => r.users.store.create(fieldsOf(`${prefix}${i}`), NOW)));
      // Asked for in waves, both replicas at once, so their batches meet on the counter row.
      const created: { a: User[]; b: User[] } = { a: [], b: [] };
      for (let wave = 0; wave < 4; wave++) {
        const [fromA, fromB] = await Promise.all([
          asked(a, `a${wave}-`),
          sleep(wave).then(() => asked(b, `b${wave}-`)),
        ]);
        created.a.push(...fromA);
        created.b.push(...fromB);
      }
      const all = [...created.a, ...created.b];
      expect(all.map(seqOf).sort((x, y) => x - y)).toEqual(oneTo(400));
      expect(await stored(url)).toEqual({ seqs: oneTo(400), counter: 400 });
      for (const [prefix, users] of Object.entries(created)) {
        // Each caller got the user it asked for, and a replica's numbers rise in the order it was asked.
        expect(users.map((user) => user.name)).toEqual(
          Array.from({ length: 200 }, (_, i) => `${prefix}${Math.floor(i / 50)}-${i % 50}`),
        );
        expect(users.map(seqOf)).toEqual([...users.map(seqOf)].sort((x, y) => x - y));
      }
      for (const user of all) {
        expect(user).toEqual({ id: user.id, ...fieldsOf(user.name), created_at: NOW, updated_at: NOW });
        expect(await a.users.store.get(user.id)).toEqual(user);
      }
      // Shared statements, not one per create.
      expect((await createStatements(a.registry)) + (await createStatements(b.registry))).toBeLessThan(400);
    },
  );

  it(`puts at most ${CREATE_BATCH_MAX} creates in one statement`, async () => {
    const { users, registry } = await replica(await postgres().createDatabase());
    const created = await Promise.all(
      Array.from({ length: 250 }, (_, i) => users.store.create(fieldsOf(`n${i}`), NOW)),
    );
    expect(created.map((user) => user.name)).toEqual(Array.from({ length: 250 }, (_, i) => `n${i}`));
    expect(created.map(seqOf)).toEqual(oneTo(250));
    // Asked for in one tick: 100, 100 and 50.
    expect(await createStatements(registry)).toBe(3);
  });

  it('answers each create of a batch only once the batch committed', async () => {
    const url = await postgres().createDatabase();
    const { users } = await replica(url);
    // A check run at the commit that takes 300 ms: an answer given before the commit would see no row yet.
    await withClient(url, (client) =>
      client.query(
        `
        CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.3); RETURN ` +
          `NULL; END $$;
        CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON users DEFERRABLE INITIALLY DEFERRED FOR EACH ROW ` +
          `EXECUTE FUNCTION slow_commit();`,
      ),
    );
    await withClient(url, async (reader) => {
      const seen = await Promise.all(
        ['a', 'b', 'c'].map(async (name) => {
          const user = await users.store.create(fieldsOf(name), NOW);
          return (await reader.query('SELECT 1 FROM users WHERE seq = $1', [seqOf(user)])).rowCount;
        }),
      );
      expect(seen).toEqual([1, 1, 1]);
    });
  });

  it(
    'fails only the create the database refuses, which consumes no number: the rest of its batch is numbered ' + 'on',
    async () => {
      const url = await postgres().createDatabase();
      const { users, registry } = await replica(url);
      await refuseName(url);
      const asked = ['a', 'b', REFUSED, 'c', 'd', REFUSED].map((name) => users.store.create(fieldsOf(name), NOW));
      const outcomes = await Promise.allSettled(asked);
      expect(
        outcomes.map((outcome) =>
          outcome.status === 'fulfilled' ? outcome.value.id : (outcome.reason as Error).message,
        ),
      ).toEqual(['user-1', 'user-2', 'refused by the test', 'user-3', 'user-4', 'refused by the test']);
      // One batch failed whole, then each create alone.
      expect(await createStatements(registry)).toBe(1 + 6);
      expect((await users.store.create(fieldsOf('e'), NOW)).id).toBe('user-5');
      expect(await stored(url)).toEqual({ seqs: oneTo(5), counter: 5 });
    },
  );

  it(
    'fails the rest of a refused batch once one of its creates, tried alone, finds the database unable to serve ' +
      'it',
    async () => {
      const url = await postgres().createDatabase();
      const { users } = await replica(url);
      await refuseName(url);
      const outcomes = await Promise.allSettled(
        ['a', REFUSED, TOO_SLOW, 'b'].map((name) => users.store.create(fieldsOf(name), NOW)),
      );
      const answers = outcomes.map((outcome) => {
        if (outcome.status === 'fulfilled') return outcome.value.id;
        return outcome.reason instanceof StorageUnavailableError ? 'unavailable' : (outcome.reason as Error).message;
      });
      expect(answers).toEqual(['user-1', 'refused by the test', 'unavailable', 'unavailable']);
      expect((await users.store.create(fieldsOf('c'), NOW)).id).toBe('user-2');
      expect(await stored(url)).toEqual({ seqs: [1, 2], counter: 2 });
    },
  );

  it(
    'fails a batch the database cannot serve in time, and the creates waiting behind it, consuming no ' + 'number',
    async () => {
      const url = await postgres().createDatabase();
      const { users } = await replica(url);
      await withClient(url, async (locker) => {
        // Another transaction holds the counter row: the batch waits past the 3 s statement timeout.
        await locker.query('BEGIN');
        await locker.query('SELECT last_seq FROM user_id_counter FOR UPDATE');
        const first = users.store.create(fieldsOf('first'), NOW);
        first.catch(() => undefined);
        await sleep(200);
        const behind = ['second', 'third'].map((name) => users.store.create(fieldsOf(name), NOW));
        for (const create of behind) create.catch(() => undefined);
        await expect(first).rejects.toBeInstanceOf(StorageUnavailableError);
        // Released at once: a create still waiting would now be numbered.
        await locker.query('ROLLBACK');
        for (const create of behind) await expect(create).rejects.toBeInstanceOf(StorageUnavailableError);
      });
      expect((await users.store.create(fieldsOf('after'), NOW)).id).toBe('user-1');
      expect(await stored(url)).toEqual({ seqs: [1], counter: 1 });
    },
  );

  it('answers the creates asked for before the replica closes, then closes', async () => {
    const url = await postgres().createDatabase();
    const users = await openUsers(url);
    await withClient(url, async (locker) => {
      // The first batch is held on the counter row, so the others are still waiting when the close begins.
      await locker.query('BEGIN');
      await locker.query('SELECT last_seq FROM user_id_counter FOR UPDATE');
      const first = users.store.create(fieldsOf('first'), NOW);
      await sleep(200);
      const behind = ['second', 'third'].map((name) => users.store.create(fieldsOf(name), NOW));
      const closed = users.close();
      await sleep(300);
      await locker.query('ROLLBACK');
      expect((await Promise.all([first, ...behind])).map((user) => user.id)).toEqual(['user-1', 'user-2', 'user-3']);
      await closed;
    });
    expect(await stored(url)).toEqual({ seqs: [1, 2, 3], counter: 3 });
  });
});
