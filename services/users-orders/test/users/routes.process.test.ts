import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { BuildAppOptions } from '../../src/app.js';
import {
  MemoryUserStore,
  StorageUnavailableError,
  type User,
  type UserFields,
  type UserStore,
} from '../../src/users/store.js';
import { JSON_TYPE, manualClock, testApp } from '../helpers.js';
import { useStoreKinds } from '../stores.js';

const storeKinds = useStoreKinds();

const alice = { name: 'Alice', email: 'alice@example.com' };

/** Names of `size` code points that together hold U+0001..U+10FFFF except the surrogates (not scalar values). */
function namesHoldingEveryScalarValue(size: number): string[] {
  const codePoints: number[] = [];
  for (let codePoint = 1; codePoint <= 0x10ffff; codePoint++)
    if (codePoint < 0xd800 || codePoint > 0xdfff) codePoints.push(codePoint);
  const names: string[] = [];
  for (let from = 0; from < codePoints.length; from += size)
    names.push(String.fromCodePoint(...codePoints.slice(from, from + size)));
  return names;
}

/** The first index where two byte strings differ (a length difference counts), or -1. */
function firstDifference(actual: Buffer, expected: Buffer): number {
  const shorter = Math.min(actual.length, expected.length);
  for (let i = 0; i < shorter; i++) if (actual[i] !== expected[i]) return i;
  return actual.length === expected.length ? -1 : shorter;
}

async function createUser(app: Awaited<ReturnType<typeof testApp>>, fields: UserFields = alice): Promise<User> {
  const res = await app.inject({ method: 'POST', url: '/api/users', payload: JSON.stringify(fields) });
  expect(res.statusCode).toBe(201);
  return res.json<User>();
}

describe.each(storeKinds)('users on the $name store', ({ newStore }) => {
  /** A fresh app on a new, empty store of this kind. */
  const appOn = async (options: Partial<BuildAppOptions> = {}) => testApp({ store: await newStore(), ...options });

  describe('GET /api/users', () => {
    it('answers an empty JSON array when there are no users', async () => {
      const app = await appOn();
      const res = await app.inject({ method: 'GET', url: '/api/users' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(JSON_TYPE);
      expect(res.json()).toEqual([]);
    });

    it('lists every user', async () => {
      const app = await appOn();
      await createUser(app);
      await createUser(app, { name: 'Bob', email: 'bob@example.com' });
      const res = await app.inject({ method: 'GET', url: '/api/users' });
      expect(
        res
          .json<User[]>()
          .map((user) => user.id)
          .sort(),
      ).toEqual(['user-1', 'user-2']);
    });

    it('lists more users than one listing batch holds, in id order, without deleted ones', async () => {
      const store = await newStore();
      // 50 at a time, so the PostgreSQL store commits them in groups (within its pool's 5 s wait for a
      // connection); which name gets which id does not matter here.
      for (let from = 0; from < 2_050; from += 50) {
        await Promise.all(
          Array.from({ length: 50 }, async (_, i) =>
            store.create({ name: `n${from + i}`, email: `e${from + i}@example.com` }, '2026-11-22T10:00:00.000Z'),
          ),
        );
      }
      for (const id of ['user-1', 'user-1000', 'user-1001', 'user-2050']) await store.delete(id);
      const app = await testApp({ store });
      const res = await app.inject({ method: 'GET', url: '/api/users' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(JSON_TYPE);
      const users = res.json<User[]>();
      expect(users.map((user) => user.id)).toEqual(
        Array.from({ length: 2_048 }, (_, i) => `user-${i + 2}`).filter(
          (id) => !['user-1000', 'user-1001'].includes(id),
        ),
      );
      expect(Object.keys(users[0] ?? {})).toEqual(['id', 'name', 'email', 'created_at', 'updated_at']);
      expect(users[0]).toMatchObject({
        id: 'user-2',
        created_at: '2026-11-22T10:00:00.000Z',
        updated_at: '2026-11-22T10:00:00.000Z',
      });
    });

    it(
      'writes each listed user byte for byte as JSON.stringify writes it, for names holding every Unicode scalar ' +
        'value but U+0000',
      async () => {
        // Escaping works one character at a time, so agreeing on every character is agreeing on every string.
        // U+0000 is left out: a PostgreSQL text column cannot hold it.
        const names = namesHoldingEveryScalarValue(4_096);
        const store = await newStore();
        for (const [i, name] of names.entries())
          await store.create({ name, email: `e${i}@example.com` }, '2026-11-22T10:00:00.000Z');
        const app = await testApp({ store });
        const res = await app.inject({ method: 'GET', url: '/api/users' });
        expect(res.statusCode).toBe(200);
        const stored = await Promise.all(
          names.map(async (_, i) =>
            (await app.inject({ method: 'GET', url: `/api/users/user-${i + 1}` })).json<User>(),
          ),
        );
        expect(stored.map((user) => user.name)).toEqual(names);
        const expected = Buffer.from(`[${stored.map((user) => JSON.stringify(user)).join(',')}]`);
        const differsAt = firstDifference(res.rawPayload, expected);
        expect(
          differsAt,
          `listing and JSON.stringify differ at byte ${differsAt}: ` +
            `${res.rawPayload.subarray(differsAt - 20, differsAt + 20).toString()}`,
        ).toBe(-1);
      },
    );
  });

  describe('POST /api/users', () => {
    it('creates a user: 201, Location, id user-1, created_at = updated_at from the clock', async () => {
      const app = await appOn();
      const res = await app.inject({ method: 'POST', url: '/api/users', payload: JSON.stringify(alice) });
      expect(res.statusCode).toBe(201);
      expect(res.headers['content-type']).toMatch(JSON_TYPE);
      expect(res.headers.location).toBe('/api/users/user-1');
      expect(res.json()).toStrictEqual({
        id: 'user-1',
        name: 'Alice',
        email: 'alice@example.com',
        created_at: '2026-11-22T10:00:00.000Z',
        updated_at: '2026-11-22T10:00:00.000Z',
      });
    });

    it.each([
      ['{}', 'name is required'],
      ['{"email":"a@example.com"}', 'name is required'],
      ['{"name":"","email":""}', 'name is required'],
      ['{"name":"Alice"}', 'email is required'],
      ['{"name":"Alice","email":""}', 'email is required'],
    ])('answers %s with 422 validation failed, name checked before email', async (payload, details) => {
      const app = await appOn();
      const res = await app.inject({ method: 'POST', url: '/api/users', payload });
      expect(res.statusCode).toBe(422);
      expect(res.headers['content-type']).toMatch(JSON_TYPE);
      expect(res.json()).toEqual({ error: 'validation failed', code: 422, details });
    });

    it('never reuses an id after deletion', async () => {
      const app = await appOn();
      await createUser(app);
      await createUser(app);
      expect((await app.inject({ method: 'DELETE', url: '/api/users/user-2' })).statusCode).toBe(204);
      expect((await createUser(app)).id).toBe('user-3');
    });

    it('gives 200 concurrent creations 200 distinct, gap-free ids', async () => {
      const app = await appOn();
      const responses = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          app.inject({
            method: 'POST',
            url: '/api/users',
            payload: JSON.stringify({ name: `n${i}`, email: `e${i}@example.com` }),
          }),
        ),
      );
      expect(responses.every((res) => res.statusCode === 201)).toBe(true);
      const ids = new Set(responses.map((res) => res.json<User>().id));
      expect(ids).toEqual(new Set(Array.from({ length: 200 }, (_, i) => `user-${i + 1}`)));
    });
  });

  describe('GET /api/users/:id', () => {
    it('answers the user', async () => {
      const app = await appOn();
      const created = await createUser(app);
      const res = await app.inject({ method: 'GET', url: '/api/users/user-1' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(JSON_TYPE);
      expect(res.json()).toStrictEqual(created);
    });

    it.each(['user-9', 'user-01', 'user-0', 'nobody', 'user-99999999999999999999'])(
      'answers %s with 404 user not found',
      async (id) => {
        const app = await appOn();
        await createUser(app);
        const res = await app.inject({ method: 'GET', url: `/api/users/${id}` });
        expect(res.statusCode).toBe(404);
        expect(res.headers['content-type']).toMatch(JSON_TYPE);
        expect(res.json()).toEqual({ error: 'user not found', code: 404 });
      },
    );
  });

  describe('PUT /api/users/:id', () => {
    it('updates only the fields present and moves updated_at, never created_at', async () => {
      const { clock, advance } = manualClock();
      const app = await appOn({ clock });
      await createUser(app);
      advance(1_500);
      const res = await app.inject({ method: 'PUT', url: '/api/users/user-1', payload: '{"email":"new@example.com"}' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(JSON_TYPE);
      const expected = {
        id: 'user-1',
        name: 'Alice',
        email: 'new@example.com',
        created_at: '2026-11-22T10:00:00.000Z',
        updated_at: '2026-11-22T10:00:01.500Z',
      };
      expect(res.json()).toStrictEqual(expected);
      expect((await app.inject({ method: 'GET', url: '/api/users/user-1' })).json()).toStrictEqual(expected);
    });

    it('does not check present values for emptiness, and an empty object changes only updated_at', async () => {
      const app = await appOn();
      await createUser(app);
      const emptied = await app.inject({ method: 'PUT', url: '/api/users/user-1', payload: '{"name":""}' });
      expect(emptied.statusCode).toBe(200);
      expect(emptied.json()).toMatchObject({ name: '', email: 'alice@example.com' });
      const unchanged = await app.inject({ method: 'PUT', url: '/api/users/user-1', payload: '{}' });
      expect(unchanged.statusCode).toBe(200);
      expect(unchanged.json()).toMatchObject({ name: '', email: 'alice@example.com' });
    });

    it('decodes before looking up: an undecodable body for an unknown id is 400, a valid one 404', async () => {
      const app = await appOn();
      const undecodable = await app.inject({ method: 'PUT', url: '/api/users/user-42', payload: '{"nickname":"x"}' });
      expect(undecodable.statusCode).toBe(400);
      expect(undecodable.json()).toEqual({ error: 'invalid JSON', code: 400, details: 'unknown field "nickname"' });
      const valid = await app.inject({ method: 'PUT', url: '/api/users/user-42', payload: '{"name":"x"}' });
      expect(valid.statusCode).toBe(404);
      expect(valid.json()).toEqual({ error: 'user not found', code: 404 });
    });

    it('rejects an empty body with 400 invalid JSON', async () => {
      const app = await appOn();
      await createUser(app);
      const res = await app.inject({ method: 'PUT', url: '/api/users/user-1' });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid JSON', code: 400, details: 'body is empty' });
    });
  });

  describe('DELETE /api/users/:id', () => {
    it('answers 204 with an empty body, after which the user is gone', async () => {
      const app = await appOn();
      await createUser(app);
      const res = await app.inject({ method: 'DELETE', url: '/api/users/user-1' });
      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
      expect(res.headers['content-length']).toBeUndefined();
      expect((await app.inject({ method: 'GET', url: '/api/users/user-1' })).statusCode).toBe(404);
      const again = await app.inject({ method: 'DELETE', url: '/api/users/user-1' });
      expect(again.statusCode).toBe(404);
      expect(again.json()).toEqual({ error: 'user not found', code: 404 });
    });
  });
});

describe('store failures', () => {
  it('answers a storage failure 500 listing users with the store error as details', async () => {
    const store = new (class extends MemoryUserStore {
      override list(): User[] {
        throw new Error('replica unreachable');
      }
    })();
    const app = await testApp({ store });
    const res = await app.inject({ method: 'GET', url: '/api/users' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: 'listing users', code: 500, details: 'replica unreachable' });
  });

  it('hides the text of an unexpected store failure behind 500 internal error', async () => {
    const store = new (class extends MemoryUserStore {
      override create(): User {
        throw new Error('secret: /var/lib/users.db corrupt');
      }
    })();
    const app = await testApp({ store });
    const res = await app.inject({ method: 'POST', url: '/api/users', payload: JSON.stringify(alice) });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: 'internal error', code: 500 });
    expect(res.body).not.toContain('secret');
  });

  it('cuts the connection when a streamed listing fails after its first batch, never ending the array', async () => {
    const memory = new MemoryUserStore();
    const store: UserStore = {
      create: (fields, now) => memory.create(fields, now),
      createOnce: (request, now) => memory.createOnce(request, now),
      get: (id) => memory.get(id),
      update: (id, changes, now) => memory.update(id, changes, now),
      delete: (id) => memory.delete(id),
      listAfter: (afterSeq, count) => memory.listAfter(afterSeq, count),
      // A database listing whose second batch fails.
      list: () =>
        (async function* () {
          yield Buffer.from(
            JSON.stringify({
              id: 'user-1',
              name: 'A',
              email: 'a@example.com',
              created_at: '2026-11-22T10:00:00.000Z',
              updated_at: '2026-11-22T10:00:00.000Z',
            }),
          );
          throw new Error('connection lost');
        })(),
    };
    const app = await testApp({ store });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/api/users`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(JSON_TYPE);
    await expect(res.text()).rejects.toThrow();
  });

  it(
    'answers a database that cannot be reached 503 storage unavailable with Retry-After: 1, without its ' + 'text',
    async () => {
      const store = new (class extends MemoryUserStore {
        override get(): User {
          throw new StorageUnavailableError('connect ECONNREFUSED 10.0.0.5:5432');
        }
      })();
      const app = await testApp({ store });
      const res = await app.inject({ method: 'GET', url: '/api/users/user-1' });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.headers['content-type']).toMatch(JSON_TYPE);
      expect(res.json()).toEqual({ error: 'storage unavailable', code: 503 });
    },
  );
});
