import { createRequire } from 'node:module';
import type sortedBTree from 'sorted-btree';
import type { User } from './schemas.js';

// sorted-btree is CommonJS exporting `exports.default`. An ESM default import yields the exports object
// under Node but the class under vitest's interop; require() gives the same object in both.
const BTree = (createRequire(import.meta.url)('sorted-btree') as typeof sortedBTree).default;

/** A user's shape is defined once, by the schema the API documents are generated from. */
export type { User };

export interface UserFields {
  name: string;
  email: string;
}

/**
 * Storage behind the user routes. Synchronous because the shipped store is in memory; a method that
 * throws is a storage failure (the listing routes answer it 500 `listing users`).
 */
export interface UserStore {
  create(fields: UserFields, now: string): User;
  get(id: string): User | undefined;
  update(id: string, changes: Partial<UserFields>, now: string): User | undefined;
  delete(id: string): boolean;
  /** Every user, in id order. */
  list(): User[];
  /** At most `count` users whose sequence number is above `afterSeq`, in sequence order: O(log n + count). */
  listAfter(afterSeq: number, count: number): User[];
}

const USER_ID = /^user-([1-9][0-9]*)$/;

export function userId(seq: number): string {
  return `user-${seq}`;
}

/** The sequence number of a well-formed user id, or undefined for anything this service never assigns. */
export function userSeq(id: string): number | undefined {
  const digits = USER_ID.exec(id)?.[1];
  if (digits === undefined) return undefined;
  const seq = Number(digits);
  return Number.isSafeInteger(seq) ? seq : undefined;
}

/** In-memory store ordered by sequence number, so pages are ranges of a B+ tree rather than sorts. */
export class MemoryUserStore implements UserStore {
  private readonly users = new BTree<number, User>();
  private lastSeq = 0;

  create(fields: UserFields, now: string): User {
    // A counter, not the tree's size or max key: ids are never reused, also after deletion.
    this.lastSeq += 1;
    const user: User = { id: userId(this.lastSeq), name: fields.name, email: fields.email, created_at: now, updated_at: now };
    this.users.set(this.lastSeq, user);
    return user;
  }

  get(id: string): User | undefined {
    const seq = userSeq(id);
    return seq === undefined ? undefined : this.users.get(seq);
  }

  update(id: string, changes: Partial<UserFields>, now: string): User | undefined {
    const seq = userSeq(id);
    const current = seq === undefined ? undefined : this.users.get(seq);
    if (seq === undefined || current === undefined) return undefined;
    // Records are replaced, never mutated, so a user already handed to a serializer cannot change under it.
    const updated: User = { ...current, ...changes, updated_at: now };
    this.users.set(seq, updated);
    return updated;
  }

  delete(id: string): boolean {
    const seq = userSeq(id);
    return seq !== undefined && this.users.delete(seq);
  }

  list(): User[] {
    return this.users.valuesArray();
  }

  listAfter(afterSeq: number, count: number): User[] {
    return this.users.getRange(afterSeq + 1, Number.MAX_SAFE_INTEGER, true, count).map(([, user]) => user);
  }
}
