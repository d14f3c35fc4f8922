import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryUserStore, type User } from '../../src/users/store.js';
import { testApp } from '../helpers.js';

// Whatever the body, POST and PUT answer one of their documented statuses, never 5xx, an ErrorResponse on
// errors, and a rejected request changes nothing. Fixed seeds keep CI deterministic; a failure prints the
// seed and the shrunk counterexample.
const SEED = 20261122;
const MIB = 1_048_576;

/** A body and the Content-Type it is sent with (the backend decodes every type as JSON). */
interface Sent {
  payload: string | Buffer;
  contentType: string | undefined;
}

const contentType = fc.constantFrom(
  undefined,
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'foo',
);

const userLike = fc.dictionary(
  fc.oneof(fc.constantFrom('name', 'email'), fc.string({ maxLength: 8 })),
  fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.constant(''), fc.jsonValue({ maxDepth: 2 })),
  { maxKeys: 4 },
);

/** Each member is one family the issue names; `oneof` spreads the runs over all of them. */
const bodies: fc.Arbitrary<string | Buffer> = fc.oneof(
  fc.jsonValue().map((value) => JSON.stringify(value) ?? ''),
  userLike.map((value) => JSON.stringify(value)),
  fc.uint8Array({ maxLength: 512 }).map((bytes) => Buffer.from(bytes)),
  // Deep nesting, as arrays and as objects under a known field.
  fc.integer({ min: 1, max: 20_000 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`),
  fc
    .integer({ min: 1, max: 5_000 })
    .map((depth) => `{"name":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)},"email":"e"}`),
  // Unicode in the fields: lone surrogates, astral characters, control characters.
  fc
    .record({ name: fc.string({ unit: 'binary' }), email: fc.string({ unit: 'grapheme' }) })
    .map((value) => JSON.stringify(value)),
  // Duplicate keys, in any order and mix.
  fc
    .array(
      fc.tuple(
        fc.constantFrom('name', 'email', 'name', 'x'),
        fc.oneof(fc.string({ maxLength: 6 }), fc.constant(null), fc.integer()),
      ),
      { minLength: 2, maxLength: 6 },
    )
    .map((pairs) => `{${pairs.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`).join(',')}}`),
  // Valid JSON followed by extra data, or cut short.
  fc
    .tuple(
      userLike.map((value) => JSON.stringify(value)),
      fc.constantFrom('x', '{}', ' 1', '\u0000', ''),
    )
    .map(([json, tail]) => `${json}${tail}`),
  userLike.map((value) => JSON.stringify(value)).chain((json) => fc.nat(json.length).map((cut) => json.slice(0, cut))),
);

const sent: fc.Arbitrary<Sent> = fc.record({ payload: bodies, contentType });

function expectErrorResponse(status: number, body: string): void {
  const parsed = JSON.parse(body) as Record<string, unknown>;
  expect(Object.keys(parsed).every((key) => ['error', 'code', 'details'].includes(key))).toBe(true);
  expect(typeof parsed.error).toBe('string');
  expect(parsed.code).toBe(status);
  if ('details' in parsed) {
    expect(typeof parsed.details).toBe('string');
    expect(parsed.details).not.toBe('');
  }
}

const snapshot = (store: MemoryUserStore): string => JSON.stringify(store.list());

function send(app: FastifyInstance, method: 'POST' | 'PUT', url: string, { payload, contentType: type }: Sent) {
  return app.inject({ method, url, payload, headers: type === undefined ? {} : { 'content-type': type } });
}

describe('fuzz: request bodies on the users API', () => {
  let app: FastifyInstance;
  let store: MemoryUserStore;
  let existing: User;

  // testApp closes its app after each test.
  beforeEach(async () => {
    store = new MemoryUserStore();
    app = await testApp({ store });
    const res = await app.inject({
      method: 'POST',
      url: '/api/users',
      payload: '{"name":"Alice","email":"alice@example.com"}',
    });
    existing = res.json<User>();
  });

  it('POST /api/users: 201 with the stored user, or 400/422 ErrorResponse with the store unchanged', async () => {
    await fc.assert(
      fc.asyncProperty(sent, async (body) => {
        const before = snapshot(store);
        const res = await send(app, 'POST', '/api/users', body);
        expect([201, 400, 422]).toContain(res.statusCode);
        if (res.statusCode === 201) {
          const user = res.json<User>();
          expect(store.get(user.id)).toEqual(user);
          store.delete(user.id);
        } else {
          expectErrorResponse(res.statusCode, res.body);
          expect(snapshot(store)).toBe(before);
        }
      }),
      { seed: SEED, numRuns: 400 },
    );
  });

  it('PUT /api/users/{id}: 200 for the existing user, or 400/404 ErrorResponse with the store unchanged', async () => {
    const ids = fc.oneof(
      fc.constant(existing.id),
      fc.constantFrom('user-999', 'user-0', 'nobody'),
      fc.string({ minLength: 1, maxLength: 12 }).map(encodeURIComponent),
    );
    await fc.assert(
      fc.asyncProperty(ids, sent, async (id, body) => {
        const before = snapshot(store);
        const res = await send(app, 'PUT', `/api/users/${id}`, body);
        expect([200, 400, 404]).toContain(res.statusCode);
        if (res.statusCode === 200) {
          expect(res.json<User>()).toEqual(store.get(existing.id));
        } else {
          expectErrorResponse(res.statusCode, res.body);
          expect(snapshot(store)).toBe(before);
        }
      }),
      { seed: SEED, numRuns: 400 },
    );
  });

  it('huge strings around the 1 MiB limit: 201 up to 1 MiB, 400 invalid JSON above, nothing stored', async () => {
    const overhead = '{"name":"","email":"e"}'.length;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: MIB - overhead - 64, max: MIB - overhead + 64 }),
        fc.constantFrom('a', 'é', '😀'),
        async (units, char) => {
          const before = snapshot(store);
          const name = char.repeat(Math.ceil(units / Buffer.byteLength(char)));
          const payload = `{"name":"${name}","email":"e"}`;
          const res = await send(app, 'POST', '/api/users', { payload, contentType: 'application/json' });
          if (Buffer.byteLength(payload) <= MIB) {
            expect(res.statusCode).toBe(201);
            store.delete(res.json<User>().id);
          } else {
            expect(res.statusCode).toBe(400);
            expectErrorResponse(400, res.body);
            expect(res.json<{ error: string }>().error).toBe('invalid JSON');
            expect(snapshot(store)).toBe(before);
          }
        },
      ),
      { seed: SEED, numRuns: 12 },
    );
  });
});
