import { createRequire } from 'node:module';
import type sortedBTree from 'sorted-btree';
import { MemoryIdempotencyKeys } from './idempotency/memory-keys.js';
import type { KeyedCreate, KeyedOutcome } from './idempotency/key.js';
import type { User, UserFields } from './schemas.js';
import { formatUserId, parseUserId } from './user-id.js';

// sorted-btree is CommonJS exporting `exports.default`. An ESM default import yields the exports object
// under Node but the class under vitest's interop; require() gives the same object in both.
const BTree = (createRequire(import.meta.url)('sorted-btree') as typeof sortedBTree).default;

/** A user's shape is defined once, by the schema the API documents are generated from. */
export type { User, UserFields };

/** A value now (the in-memory store) or later (a database): the routes await either. */
export type MaybePromise<Value> = Value | Promise<Value>;

/**
 * Every user in id order: an array, or batches read as the response is written, so a database listing never
 * holds every user in memory. A batch is UTF-8 bytes: its users' JSON objects joined by commas, each exactly
 * what `JSON.stringify` makes of the User, so a database can write them without the backend making an object
 * per user. A store resolves the batches only once the first one has been read, so a database that cannot
 * answer fails before any byte of the response is sent.
 */
export type UserListing = User[] | AsyncIterable<Uint8Array>;

/**
 * The database behind a store could not be reached in time (refused, unreachable, timed out, shutting
 * down). The user routes answer it 503 `storage unavailable` with Retry-After, the listing routes 500
 * `listing users` with this text (docs/backend.md#users-in-postgresql).
 */
export { StorageUnavailableError } from '@version-router/platform/postgres';

/**
 * Storage behind the user routes, answered now or later: the in-memory store answers synchronously so its
 * path costs no more than before, a database store with promises. A method that throws is a storage
 * failure: the listing routes answer it 500 `listing users`, the others 503 when it is a
 * StorageUnavailableError and 500 `internal error` otherwise.
 */
export interface UserStore {
  create(fields: UserFields, now: string): MaybePromise<User>;
  /**
   * A create sent with an Idempotency-Key: creates the user unless the key was used in the last 24 h; then it
   * answers the first create's user (same payload), or refuses (another payload, or the first still running).
   * Claiming the key and creating the user are one step: neither happens without the other.
   */
  createOnce(request: KeyedCreate, now: string): MaybePromise<KeyedOutcome>;
  get(id: string): MaybePromise<User | undefined>;
  update(id: string, changes: Partial<UserFields>, now: string): MaybePromise<User | undefined>;
  delete(id: string): MaybePromise<boolean>;
  /** Every user, in id order. */
  list(): MaybePromise<UserListing>;
  /** At most `count` users whose sequence number is above `afterSeq`, in sequence order: O(log n + count). */
  listAfter(afterSeq: number, count: number): MaybePromise<User[]>;
}

/** In-memory store ordered by sequence number, so pages are ranges of a B+ tree rather than sorts. */
export class MemoryUserStore implements UserStore {
  private readonly users = new BTree<number, User>();
  private lastSeq = 0;
  private readonly keys: MemoryIdempotencyKeys;

  /** `idempotencyKeys`: how many Idempotency-Keys are remembered at most (the oldest is forgotten first). */
  constructor({ idempotencyKeys }: { idempotencyKeys?: number } = {}) {
    this.keys = new MemoryIdempotencyKeys(idempotencyKeys);
  }

  create(fields: UserFields, now: string): User {
    // A counter, not the tree's size or max key: ids are never reused, also after deletion.
    this.lastSeq += 1;
    const user: User = {
      id: formatUserId(this.lastSeq),
      name: fields.name,
      email: fields.email,
      created_at: now,
      updated_at: now,
    };
    this.users.set(this.lastSeq, user);
    return user;
  }

  createOnce(request: KeyedCreate, now: string): KeyedOutcome {
    return this.keys.createOnce(request, Date.parse(now), () => this.create(request.fields, now));
  }

  get(id: string): User | undefined {
    const seq = parseUserId(id);
    return seq === undefined ? undefined : this.users.get(seq);
  }

  update(id: string, changes: Partial<UserFields>, now: string): User | undefined {
    const seq = parseUserId(id);
    const current = seq === undefined ? undefined : this.users.get(seq);
    if (seq === undefined || current === undefined) return undefined;
    // Records are replaced, never mutated, so a user already handed to a serializer cannot change under it.
    const updated: User = { ...current, ...changes, updated_at: now };
    this.users.set(seq, updated);
    return updated;
  }

  delete(id: string): boolean {
    const seq = parseUserId(id);
    return seq !== undefined && this.users.delete(seq);
  }

  list(): User[] {
    return this.users.valuesArray();
  }

  listAfter(afterSeq: number, count: number): User[] {
    return this.users.getRange(afterSeq + 1, Number.MAX_SAFE_INTEGER, true, count).map(([, user]) => user);
  }
}
