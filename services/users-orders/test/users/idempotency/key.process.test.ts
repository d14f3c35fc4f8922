/**
 * POST /api/users with an Idempotency-Key on both stores (docs/backend.md#retries-and-idempotency-key):
 * the replay, the refusals, the key's grammar and lifetime, and the in-memory bound. What needs two
 * processes (409 while the first runs, a crash mid-create, a race across replicas) is in
 * ../postgres/idempotency.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { KEY_LIFETIME_MS } from '../../../src/users/idempotency/key.js';
import type { PostgresUserStore } from '../../../src/users/postgres/store.js';
import { MemoryUserStore, StorageUnavailableError, type User } from '../../../src/users/store.js';
import { manualClock, testApp } from '../../helpers.js';
import { useStoreKinds } from '../../stores.js';

const storeKinds = useStoreKinds();

const ada = { name: 'Ada', email: 'ada@example.com' };
const KEY = '8e03978e-40d5-43e8-bc93-6894a57f9324';
const INVALID_KEY = {
  error: 'invalid idempotency key',
  code: 400,
  details: 'Idempotency-Key must be 1 to 255 visible ASCII characters other than " and \\, optionally in double quotes',
};

type App = Awaited<ReturnType<typeof testApp>>;

const post = (app: App, payload: string, key?: string): Promise<LightMyRequestResponse> =>
  app.inject({
    method: 'POST',
    url: '/api/users',
    payload,
    headers: key === undefined ? {} : { 'idempotency-key': key },
  });

const usersOf = async (app: App): Promise<User[]> =>
  (await app.inject({ method: 'GET', url: '/api/users' })).json<User[]>();

/** The parts of an answer a replay must repeat, and the replay marker. */
const answerOf = (res: LightMyRequestResponse) => ({
  status: res.statusCode,
  location: res.headers.location,
  body: res.body,
  replayed: res.headers['idempotent-replayed'],
});

describe.each(storeKinds)('Idempotency-Key on the $name store', ({ newStore }) => {
  const appOn = async (clock = manualClock()) => ({
    app: await testApp({ store: await newStore(), clock: clock.clock }),
    advance: clock.advance,
  });

  it(
    'answers the same key and body again with the first answer (status, body, Location) and creates ' + 'nothing',
    async () => {
      const { app } = await appOn();
      const first = await post(app, JSON.stringify(ada), KEY);
      expect(answerOf(first)).toEqual({
        status: 201,
        location: '/api/users/user-1',
        body: first.body,
        replayed: undefined,
      });
      expect(first.json()).toMatchObject({ id: 'user-1', ...ada });
      for (let i = 0; i < 3; i++) {
        const again = await post(app, JSON.stringify(ada), KEY);
        expect(answerOf(again)).toEqual({ ...answerOf(first), replayed: 'true' });
        expect(again.headers['content-type']).toBe(first.headers['content-type']);
      }
      expect((await usersOf(app)).map((user) => user.id)).toEqual(['user-1']);
    },
  );

  it(
    'takes the same name and email in another spelling (field order, whitespace, escapes, a duplicate field) as ' +
      'the same body',
    async () => {
      const { app } = await appOn();
      const first = await post(app, '{"name":"Ada","email":"ada@example.com"}', KEY);
      for (const payload of [
        '{"email":"ada@example.com","name":"Ada"}',
        ' {\n "name" : "\\u0041da", "email":"ada@example.com" } ',
        '{"name":"Bo","name":"Ada","email":"ada@example.com"}',
      ]) {
        const again = await post(app, payload, KEY);
        expect(answerOf(again), payload).toEqual({ ...answerOf(first), replayed: 'true' });
      }
      expect(await usersOf(app)).toHaveLength(1);
    },
  );

  it('answers the same key with another body 422 idempotency key reused, and creates nothing', async () => {
    const { app } = await appOn();
    await post(app, JSON.stringify(ada), KEY);
    for (const other of [
      { name: 'Ada', email: 'ada@example.org' },
      { name: 'Ada Lovelace', email: 'ada@example.com' },
    ]) {
      const res = await post(app, JSON.stringify(other), KEY);
      expect(res.statusCode).toBe(422);
      expect(res.json()).toEqual({ error: 'idempotency key reused', code: 422 });
      expect(res.headers).not.toHaveProperty('location');
    }
    expect(await usersOf(app)).toHaveLength(1);
  });

  it('replays the first answer after the user was updated or deleted', async () => {
    const { app } = await appOn();
    const first = await post(app, JSON.stringify(ada), KEY);
    expect(
      (await app.inject({ method: 'PUT', url: '/api/users/user-1', payload: '{"name":"Renamed"}' })).statusCode,
    ).toBe(200);
    expect((await post(app, JSON.stringify(ada), KEY)).body).toBe(first.body);
    expect((await app.inject({ method: 'DELETE', url: '/api/users/user-1' })).statusCode).toBe(204);
    const replay = await post(app, JSON.stringify(ada), KEY);
    expect(answerOf(replay)).toEqual({ ...answerOf(first), replayed: 'true' });
  });

  it('remembers a key for 24 h: a replay 1 ms before, a new user from then on', async () => {
    const { app, advance } = await appOn();
    const first = await post(app, JSON.stringify(ada), KEY);
    advance(KEY_LIFETIME_MS - 1);
    expect(answerOf(await post(app, JSON.stringify(ada), KEY))).toEqual({ ...answerOf(first), replayed: 'true' });
    advance(1);
    const later = await post(app, JSON.stringify(ada), KEY);
    expect(answerOf(later)).toMatchObject({ status: 201, location: '/api/users/user-2', replayed: undefined });
    // The key now belongs to the new create, for 24 h from it.
    expect(answerOf(await post(app, JSON.stringify(ada), KEY))).toEqual({ ...answerOf(later), replayed: 'true' });
    advance(KEY_LIFETIME_MS);
    expect((await post(app, JSON.stringify({ name: 'Bo', email: 'bo@example.com' }), KEY)).json()).toMatchObject({
      id: 'user-3',
      name: 'Bo',
    });
  });

  it('keeps keys apart, and creates as before without one', async () => {
    const { app } = await appOn();
    expect((await post(app, JSON.stringify(ada), 'key-a')).json()).toMatchObject({ id: 'user-1' });
    expect((await post(app, JSON.stringify(ada), 'key-b')).json()).toMatchObject({ id: 'user-2' });
    for (const id of ['user-3', 'user-4']) {
      const res = await post(app, JSON.stringify(ada));
      expect(res.statusCode).toBe(201);
      expect(res.headers).not.toHaveProperty('idempotent-replayed');
      expect(res.json()).toMatchObject({ id });
    }
  });

  it('takes a key in double quotes (the IETF draft spelling) as the same key bare', async () => {
    const { app } = await appOn();
    const first = await post(app, JSON.stringify(ada), `"${KEY}"`);
    expect(answerOf(await post(app, JSON.stringify(ada), KEY))).toEqual({ ...answerOf(first), replayed: 'true' });
  });

  it('accepts a key of 255 visible ASCII characters', async () => {
    const { app } = await appOn();
    const key = `${'!#$%&()*+,-./:;<=>?@[]^_`{|}~'}${'a'.repeat(226)}`;
    expect(key).toHaveLength(255);
    expect((await post(app, JSON.stringify(ada), key)).statusCode).toBe(201);
    expect((await post(app, JSON.stringify(ada), key)).headers['idempotent-replayed']).toBe('true');
  });

  it.each([
    ['empty', ''],
    ['empty in quotes', '""'],
    ['256 characters', 'k'.repeat(256)],
    ['258 characters in quotes', `"${'k'.repeat(256)}"`],
    ['a space', 'two words'],
    ['two keys joined by a repeated header', 'key-a, key-b'],
    ['a quote inside', 'ab"cd'],
    ['one quote only', '"abcd'],
    ['a backslash', 'ab\\cd'],
    ['a tab', 'ab\tcd'],
  ])('answers a key with %s 400 invalid idempotency key, before the body, and creates nothing', async (_case, key) => {
    const { app } = await appOn();
    for (const payload of [JSON.stringify(ada), '{not json']) {
      const res = await post(app, payload, key);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual(INVALID_KEY);
    }
    expect(await usersOf(app)).toEqual([]);
  });

  it('answers two Idempotency-Key headers 400 invalid idempotency key', async () => {
    const { app } = await appOn();
    const res = await app.inject({
      method: 'POST',
      url: '/api/users',
      payload: JSON.stringify(ada),
      headers: { 'idempotency-key': ['key-a', 'key-b'] },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(INVALID_KEY);
  });

  it(
    'leaves the key unused when the body is undecodable (400) or invalid (422): the corrected request ' + 'creates',
    async () => {
      const { app } = await appOn();
      const undecodable = await post(app, '{"name":', KEY);
      expect(undecodable.statusCode).toBe(400);
      expect(undecodable.json()).toMatchObject({ error: 'invalid JSON', code: 400 });
      const invalid = await post(app, '{"name":"Ada"}', KEY);
      expect(invalid.statusCode).toBe(422);
      expect(invalid.json()).toEqual({ error: 'validation failed', code: 422, details: 'email is required' });
      const created = await post(app, JSON.stringify(ada), KEY);
      expect(answerOf(created)).toMatchObject({ status: 201, location: '/api/users/user-1', replayed: undefined });
    },
  );

  it(
    'gives 20 concurrent sends of one key one user: one creates, every other answers the same (a replay, or 409 ' +
      'while it runs)',
    async () => {
      const { app } = await appOn();
      const answers = await Promise.all(Array.from({ length: 20 }, () => post(app, JSON.stringify(ada), KEY)));
      const created = answers.filter(
        (res) => res.statusCode === 201 && res.headers['idempotent-replayed'] === undefined,
      );
      expect(created).toHaveLength(1);
      for (const res of answers) {
        if (res.statusCode === 201) expect(res.body).toBe(created[0]?.body);
        else
          expect({ status: res.statusCode, body: res.json<unknown>() }).toEqual({
            status: 409,
            body: { error: 'request in progress', code: 409 },
          });
      }
      expect(await usersOf(app)).toHaveLength(1);
    },
  );
});

describe('Idempotency-Key in memory', () => {
  it('remembers at most the configured number of keys, forgetting the oldest first', async () => {
    const app = await testApp({ store: new MemoryUserStore({ idempotencyKeys: 2 }) });
    for (const key of ['k1', 'k2', 'k3']) await post(app, JSON.stringify(ada), key);
    // k1 was dropped for k3: it creates again (and k2, now the oldest, is dropped for it).
    expect((await post(app, JSON.stringify(ada), 'k3')).headers['idempotent-replayed']).toBe('true');
    expect((await post(app, JSON.stringify(ada), 'k1')).json()).toMatchObject({ id: 'user-4' });
    expect((await post(app, JSON.stringify(ada), 'k3')).headers['idempotent-replayed']).toBe('true');
    expect((await post(app, JSON.stringify(ada), 'k2')).json()).toMatchObject({ id: 'user-5' });
  });

  it('remembers 10,000 keys by default', async () => {
    const store = new MemoryUserStore();
    const now = '2026-11-22T10:00:00.000Z';
    const create = (key: string) => store.createOnce({ key, fingerprint: 'f', fields: ada }, now);
    for (let i = 0; i <= 10_000; i++) create(`k${i}`);
    expect(create('k1')).toMatchObject({ kind: 'replayed' });
    expect(create('k0')).toMatchObject({ kind: 'created' });
  });

  it('answers 503 storage unavailable with Retry-After when the store cannot be reached', async () => {
    const store = new (class extends MemoryUserStore {
      override createOnce(): never {
        throw new StorageUnavailableError('connect ECONNREFUSED 10.0.0.5:5432');
      }
    })();
    const app = await testApp({ store });
    const res = await post(app, JSON.stringify(ada), KEY);
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.json()).toEqual({ error: 'storage unavailable', code: 503 });
  });
});

describe('expired keys in PostgreSQL', () => {
  const postgresKind = storeKinds.find(({ name }) => name === 'postgres');

  it('are deleted in bounded batches, oldest first, while unexpired ones stay', async () => {
    const store = (await postgresKind!.newStore()) as PostgresUserStore;
    const at = (ms: number): string => new Date(Date.parse('2026-11-22T10:00:00.000Z') + ms).toISOString();
    for (let i = 0; i < 5; i++) await store.createOnce({ key: `early-${i}`, fingerprint: 'f', fields: ada }, at(i));
    await store.createOnce({ key: 'late', fingerprint: 'f', fields: ada }, at(60_000));
    const now = at(KEY_LIFETIME_MS + 4);
    expect([
      await store.deleteExpiredKeys(now, 2),
      await store.deleteExpiredKeys(now, 2),
      await store.deleteExpiredKeys(now, 2),
    ]).toEqual([2, 2, 1]);
    expect(await store.createOnce({ key: 'late', fingerprint: 'f', fields: ada }, now)).toMatchObject({
      kind: 'replayed',
      user: { id: 'user-6' },
    });
    // A deleted key is free again.
    expect(await store.createOnce({ key: 'early-0', fingerprint: 'other', fields: ada }, now)).toMatchObject({
      kind: 'created',
      user: { id: 'user-7' },
    });
  });
});
