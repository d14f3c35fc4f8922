/**
 * Several built backend processes on one PostgreSQL database, as a fleet runs them
 * (docs/backend.md#users-in-postgresql): ids, visibility, cursors, updates and deletes across replicas.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPostgres, type TestPostgres } from '../../../../../platform/test/support/postgres.js';
import type { ServiceProcess } from '../../../../../platform/test/support/service-process.js';
import type { User } from '../../../src/users/store.js';
import { startBackend } from '../../process.js';

interface Page {
  items: User[];
  next_cursor?: string;
  has_more: boolean;
}

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startTestPostgres();
});
afterAll(async () => {
  await postgres.close();
});

/** Two replicas that start together on a new database: the migration runs once, under the advisory lock. */
async function twoReplicas(): Promise<[ServiceProcess, ServiceProcess]> {
  const url = await postgres.createDatabase();
  const replicas = await Promise.all([startBackend({ DATABASE_URL: url }), startBackend({ DATABASE_URL: url })]);
  return replicas;
}

async function stopAll(replicas: ServiceProcess[]): Promise<void> {
  await Promise.all(replicas.map((replica) => replica.stop()));
}

async function create(replica: ServiceProcess, i: number): Promise<User> {
  const res = await fetch(`${replica.apiUrl}/api/users`, {
    method: 'POST',
    body: JSON.stringify({ name: `n${i}`, email: `e${i}@example.com` }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as User;
}

describe('two backend replicas on one database', () => {
  it(
    'numbers concurrent creates through both replicas 1..N, without gaps or duplicates, and each replica sees ' +
      'every user',
    async () => {
      const replicas = await twoReplicas();
      try {
        // 200 through each replica at once: each replica batches what it holds, and the batches meet on the counter.
        const created = await Promise.all(
          Array.from({ length: 400 }, (_, i) => create(replicas[i % 2] as ServiceProcess, i)),
        );
        const ids = created.map((user) => user.id);
        expect(ids).toHaveLength(400);
        expect(new Set(ids)).toEqual(new Set(Array.from({ length: 400 }, (_, i) => `user-${i + 1}`)));
        // Each request got the user it asked for.
        expect(created.map((user) => user.name)).toEqual(Array.from({ length: 400 }, (_, i) => `n${i}`));
        for (const replica of replicas) {
          const listed = (await (await fetch(`${replica.apiUrl}/api/users`)).json()) as User[];
          expect(listed.map((user) => user.id)).toEqual(Array.from({ length: 400 }, (_, i) => `user-${i + 1}`));
          // Read back exactly as created (same timestamp strings), whichever replica created it.
          expect(new Set(listed.map((user) => JSON.stringify(user)))).toEqual(
            new Set(created.map((user) => JSON.stringify(user))),
          );
        }
      } finally {
        await stopAll(replicas);
      }
    },
  );

  it('accepts a cursor issued by one replica on the other, and walks every user once', async () => {
    const replicas = await twoReplicas();
    try {
      for (let i = 0; i < 25; i++) await create(replicas[0], i);
      const seen: string[] = [];
      let cursor = '';
      for (let page = 0; ; page++) {
        const replica = replicas[page % 2] as ServiceProcess;
        const res = await fetch(`${replica.apiUrl}/api/users/page?limit=4&cursor=${cursor}`);
        expect(res.status).toBe(200);
        const body = (await res.json()) as Page;
        seen.push(...body.items.map((user) => user.id));
        if (!body.has_more) break;
        cursor = body.next_cursor ?? '';
      }
      expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => `user-${i + 1}`));
    } finally {
      await stopAll(replicas);
    }
  });

  it(
    'shows an update made on one replica on the other, and a deletion too; a deleted number is never given ' + 'again',
    async () => {
      const [a, b] = await twoReplicas();
      try {
        const created = await create(a, 1);
        const put = await fetch(`${b.apiUrl}/api/users/${created.id}`, {
          method: 'PUT',
          body: '{"email":"new@example.com"}',
        });
        expect(put.status).toBe(200);
        const updated = (await put.json()) as User;
        expect(updated).toMatchObject({
          id: created.id,
          name: 'n1',
          email: 'new@example.com',
          created_at: created.created_at,
        });
        expect(await (await fetch(`${a.apiUrl}/api/users/${created.id}`)).json()).toStrictEqual(updated);
        expect((await fetch(`${a.apiUrl}/api/users/${created.id}`, { method: 'DELETE' })).status).toBe(204);
        const gone = await fetch(`${b.apiUrl}/api/users/${created.id}`);
        expect(gone.status).toBe(404);
        expect(await gone.json()).toEqual({ error: 'user not found', code: 404 });
        expect((await fetch(`${b.apiUrl}/api/users/${created.id}`, { method: 'DELETE' })).status).toBe(404);
        expect((await create(b, 2)).id).toBe('user-2');
      } finally {
        await stopAll([a, b]);
      }
    },
  );
});
