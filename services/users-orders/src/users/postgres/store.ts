import { KEY_LIFETIME_MS, type KeyedCreate, type KeyedOutcome } from '../idempotency/key.js';
import type { User, UserFields, UserStore } from '../store.js';
import { formatUserId, parseUserId } from '../user-id.js';
import { batchCreates, type CreateBatches, type NewUser } from './create-batch.js';
import type { Database, Statement } from './database.js';
import { LISTING_BATCH, listingBatchStatement, readListingBatch, type ListingBatch } from './listing.js';

interface UserRow {
  /** bigint arrives as a string, which is all an id needs. */
  seq: string;
  name: string;
  email: string;
  created_at: string;
  updated_at: string;
}

const COLUMNS = 'seq, name, email, created_at, updated_at';

/**
 * The numbers come from the counter row in the insert's own statement: the row is moved on by as many users as
 * the statement inserts, and each takes `last_seq - count + its position` (WITH ORDINALITY: the order given).
 * Concurrent statements on any replica queue on that row, and a failed insert rolls the increment back, so
 * numbers have no gaps or repeats.
 */
const CREATE =
  `WITH next AS (UPDATE user_id_counter SET last_seq = last_seq + cardinality($1::text[]) RETURNING ` +
  `last_seq)
  INSERT INTO users (seq, name, email, created_at, updated_at)
  SELECT next.last_seq - cardinality($1::text[]) + created.position, created.name, created.email, created.at, created.at
  FROM next, unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS created (name, email, at, position)
  RETURNING ${COLUMNS}`;

function toUser(row: UserRow): User {
  return {
    id: formatUserId(Number(row.seq)),
    name: row.name,
    email: row.email,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/**
 * Users in PostgreSQL, shared by every replica on the same database (docs/backend.md#users-in-postgresql).
 * Each method is one statement, but a keyed create, whose key and user are written in one transaction.
 * Creates without a key are batched (./create-batch.ts): the creates a replica holds at once share one
 * statement and one commit, where one at a time each would wait for the previous one's commit on the counter
 * row (bench/README.md#users-in-postgresql).
 */
export class PostgresUserStore implements UserStore {
  private readonly batches: CreateBatches;

  constructor(private readonly db: Database) {
    this.batches = batchCreates((users) =>
      insertUsers((statement, text, values) => this.db.query(statement, text, values), users),
    );
  }

  create(fields: UserFields, now: string): Promise<User> {
    return this.batches.create(fields, now);
  }

  /** Resolves once every create asked for so far has been answered: before the pool closes. */
  settled(): Promise<void> {
    return this.batches.settled();
  }

  /**
   * One transaction: claim the key with a transaction-scoped advisory lock, which is never waited for (held:
   * the key's first request is still running on some replica) and is released by the commit, the rollback or
   * a lost connection, so a crash leaves no claim behind; then answer the key's unexpired row, or insert the
   * user and the key's row together. The row is read after the lock is held, so it shows every commit of
   * the key's earlier holders.
   */
  createOnce({ key, fingerprint, fields }: KeyedCreate, now: string): Promise<KeyedOutcome> {
    return this.db.transaction('create_keyed', async (statement): Promise<KeyedOutcome> => {
      const { rows: claims } = await statement<{ claimed: boolean }>(
        'key_claim',
        'SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS claimed',
        [key],
      );
      if (claims[0]?.claimed !== true) return { kind: 'in-progress' };
      const { rows: earlier } = await statement<{ fingerprint: string; created_user: string }>(
        'key_read',
        'SELECT fingerprint, created_user FROM idempotency_keys WHERE key = $1 AND expires_at > $2',
        [key, now],
      );
      if (earlier[0] !== undefined)
        return earlier[0].fingerprint === fingerprint
          ? { kind: 'replayed', user: JSON.parse(earlier[0].created_user) as User }
          : { kind: 'reused' };
      const user = await insertUser(statement, fields, now);
      // An expired row of the same key may still be there (the sweep is occasional): it is replaced.
      await statement(
        'key_remember',
        `INSERT INTO idempotency_keys (key, fingerprint, created_user, expires_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, created_user = EXCLUDED.created_user, ` +
          `expires_at = EXCLUDED.expires_at`,
        [key, fingerprint, JSON.stringify(user), new Date(Date.parse(now) + KEY_LIFETIME_MS).toISOString()],
      );
      return { kind: 'created', user };
    });
  }

  /**
   * Deletes at most `limit` keys that expired by `now`, oldest first, and answers how many. Rows another
   * transaction holds are skipped, so the delete waits for no request, and one batch is a short statement.
   */
  async deleteExpiredKeys(now: string, limit: number): Promise<number> {
    const { rowCount } = await this.db.query(
      'key_expire',
      'DELETE FROM idempotency_keys WHERE key IN (SELECT key FROM idempotency_keys WHERE expires_at <= $1 ORDER BY ' +
        'expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)',
      [now, limit],
    );
    return rowCount ?? 0;
  }

  async get(id: string): Promise<User | undefined> {
    const seq = parseUserId(id);
    if (seq === undefined) return undefined;
    const { rows } = await this.db.query<UserRow>('get', `SELECT ${COLUMNS} FROM users WHERE seq = $1`, [seq]);
    return rows[0] === undefined ? undefined : toUser(rows[0]);
  }

  async update(id: string, changes: Partial<UserFields>, now: string): Promise<User | undefined> {
    const seq = parseUserId(id);
    if (seq === undefined) return undefined;
    const { rows } = await this.db.query<UserRow>(
      'update',
      `UPDATE users SET name = COALESCE($2, name), email = COALESCE($3, email), updated_at = $4 WHERE seq = $1 ` +
        `RETURNING ${COLUMNS}`,
      [seq, changes.name ?? null, changes.email ?? null, now],
    );
    return rows[0] === undefined ? undefined : toUser(rows[0]);
  }

  async delete(id: string): Promise<boolean> {
    const seq = parseUserId(id);
    if (seq === undefined) return false;
    const { rowCount } = await this.db.query('delete', 'DELETE FROM users WHERE seq = $1', [seq]);
    return rowCount === 1;
  }

  /**
   * Batches of keyset pages rather than one cursor: each batch is a short statement on a connection held only
   * for it, so a slow reader of a million users holds no connection or long transaction. PostgreSQL writes
   * each batch's JSON and COPY hands it over as bytes, so no per-user object or string is made: what keeps
   * the backend's memory flat while it streams a million users (bench/README.md). The first batch is read
   * before returning, so an unreachable database fails the listing before its response starts.
   */
  async list(): Promise<AsyncIterable<Uint8Array>> {
    const first = await this.listingBatch(0);
    return this.listingFrom(first);
  }

  listAfter(afterSeq: number, count: number): Promise<User[]> {
    return this.page('list_page', afterSeq, count);
  }

  private async *listingFrom(first: ListingBatch): AsyncGenerator<Uint8Array> {
    let batch = first;
    for (;;) {
      if (batch.lastSeq === undefined) return;
      yield batch.json;
      if (batch.count < LISTING_BATCH) return;
      batch = await this.listingBatch(batch.lastSeq);
    }
  }

  private async listingBatch(afterSeq: number): Promise<ListingBatch> {
    return readListingBatch(await this.db.copyOut('list', listingBatchStatement(afterSeq)));
  }

  private async page(operation: string, afterSeq: number, count: number): Promise<User[]> {
    const { rows } = await this.db.query<UserRow>(
      operation,
      `SELECT ${COLUMNS} FROM users WHERE seq > $1 ORDER BY seq LIMIT $2`,
      [afterSeq, count],
    );
    return rows.map(toUser);
  }
}

/** The users in the order given, inserted by one statement: all of them or, when it fails, none. */
async function insertUsers(statement: Statement, users: NewUser[]): Promise<User[]> {
  const { rows } = await statement<UserRow>('create', CREATE, [
    users.map((user) => user.fields.name),
    users.map((user) => user.fields.email),
    users.map((user) => user.now),
  ]);
  if (rows.length !== users.length) throw new Error(`expected ${users.length} rows, got ${rows.length}`);
  // RETURNING keeps no order: the numbers follow the order given.
  return rows.sort((a, b) => Number(a.seq) - Number(b.seq)).map(toUser);
}

async function insertUser(statement: Statement, fields: UserFields, now: string): Promise<User> {
  const [user] = await insertUsers(statement, [{ fields, now }]);
  return user as User;
}
