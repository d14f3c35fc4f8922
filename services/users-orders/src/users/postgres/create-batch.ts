import { StorageUnavailableError } from '@version-router/platform/postgres';
import type { User, UserFields } from '../store.js';

/**
 * At most this many creates share one statement: enough for every create a replica holds at once under the
 * load the benchmarks run (bench/README.md), small enough that one statement stays a few milliseconds.
 */
export const CREATE_BATCH_MAX = 100;

/** One create as a batch carries it: its fields and the time it is stamped with. */
export interface NewUser {
  fields: UserFields;
  now: string;
}

/** Inserts the users in one atomic statement and answers them in the order given; throws when it inserted none. */
export type InsertUsers = (users: NewUser[]) => Promise<User[]>;

interface Waiting extends NewUser {
  resolve: (user: User) => void;
  reject: (err: unknown) => void;
}

/** A replica's creates, one batch at a time (see `batchCreates`). */
export interface CreateBatches {
  create(fields: UserFields, now: string): Promise<User>;
  /** Resolves once every create asked for so far has been answered. */
  settled(): Promise<void>;
}

/**
 * Group commit for one replica: at most one batch statement is in flight; creates that arrive meanwhile wait
 * and then go together, up to `CREATE_BATCH_MAX`, in arrival order, so they share one commit instead of each
 * waiting for the previous one's. A batch is one statement, so it commits whole or not at all:
 * - the database could not be reached or gave up (StorageUnavailableError): every create of the batch fails
 *   with it, and so does every create waiting behind it, which would otherwise start its own wait only now
 *   (also when it happens to a create tried alone: the rest of its batch fails with it);
 * - any other error (one create's values the database refuses): each create of the batch is tried again
 *   alone, in order, so only the one at fault fails.
 */
export function batchCreates(insertUsers: InsertUsers): CreateBatches {
  const waiting: Waiting[] = [];
  let draining: Promise<void> | undefined;

  /** Answers every create of `batch`; answers the error when the database could not serve it. */
  async function insertEach(batch: Waiting[]): Promise<StorageUnavailableError | undefined> {
    try {
      const users = await insertUsers(batch);
      batch.forEach((create, i) => create.resolve(users[i] as User));
      return undefined;
    } catch (err) {
      if (err instanceof StorageUnavailableError) {
        for (const create of [...batch, ...waiting.splice(0)]) create.reject(err);
        return err;
      }
      if (batch.length === 1) {
        batch[0]?.reject(err);
        return undefined;
      }
      for (const [i, create] of batch.entries()) {
        const unavailable = await insertEach([create]);
        if (unavailable !== undefined) {
          for (const rest of batch.slice(i + 1)) rest.reject(unavailable);
          return unavailable;
        }
      }
      return undefined;
    }
  }

  async function drain(): Promise<void> {
    // Creates asked for in the same tick as the first join its batch.
    await Promise.resolve();
    while (waiting.length > 0) await insertEach(waiting.splice(0, CREATE_BATCH_MAX));
    draining = undefined;
  }

  return {
    create(fields, now) {
      return new Promise<User>((resolve, reject) => {
        waiting.push({ fields, now, resolve, reject });
        draining ??= drain();
      });
    },
    settled: () => draining ?? Promise.resolve(),
  };
}
