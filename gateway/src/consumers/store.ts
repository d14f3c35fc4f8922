import type { Database } from '@version-router/platform/postgres';

/** One ledger row, as stored. Times are RFC 3339 UTC with ms. */
export interface UsageRow {
  consumer_id: string;
  version: number;
  operation: string;
  requests: number;
  first_seen: string;
  last_seen: string;
}

export interface ConsumerRecord {
  id: string;
  name: string;
  contact_email: string | null;
  webhook_url: string | null;
  created_at: string;
  /** The version its requests naming none are served with; null: registered before pins, it follows default_version. */
  pinned_version: number | null;
}

/** A consumer's pin as the consumer and the platform team move it (docs/consumers.md#pins). */
export interface PinRecord {
  id: string;
  name: string;
  pinned_version: number | null;
  /** The version the last move left, which a rollback goes back to; null after a rollback or before any move. */
  previous_version: number | null;
  /** When the pin last changed (registration, a move or a rollback); null before the consumer had a pin. */
  pinned_at: string | null;
}

/** One consumer's use of one version, as the per-version lists read it. */
export interface VersionUse {
  consumer: ConsumerRecord;
  /** When its pin last changed (its registration, a move, a rollback); null: never pinned. */
  pinned_at: string | null;
  /** Its requests to the version from the UTC day of `sinceMs` on. */
  requests: number;
  /** Its last request to the version, ever. */
  last_seen: string;
  /** Each operation it called on the version, with its last call ever. */
  operations: { operation: string; last_seen: string }[];
}

/** The requests of one operation of a version whose JSON bodies carried a field, as the upgrade preview reads it. */
export interface RequestFieldRow {
  consumer_id: string;
  version: number;
  operation: string;
  /** `customer.id`, `lines[].sku`: as the declarations name fields. */
  field: string;
  requests: number;
  last_seen: string;
}

/** Requests counted in memory for one (consumer, version, operation, field), added by a flush. */
export interface FieldDelta {
  consumerId: string;
  version: number;
  operation: string;
  field: string;
  requests: number;
  firstSeenMs: number;
  lastSeenMs: number;
}

/** At most this many field paths are kept per consumer, version and operation, in memory and in the store. */
export const MAX_FIELDS_PER_OPERATION = 64;

/** What the consumer reports read (GET /deprecations, GET /versions/{n}/consumers, the status page, the notices). */
export interface ConsumerUsageReader {
  /**
   * The consumer's rows summed over days, one per (version, operation); all of them, or with `sinceMs` only the days'
   * rows with a request at or after it (a day's row counts whole: the ledger keeps days).
   */
  usageOf(consumerId: string, sinceMs?: number): Promise<UsageRow[]>;
  /**
   * Every consumer with any use of `version`: the record and its pin's time, requests since the UTC day of `sinceMs`,
   * last_seen (all time) and its operations; most requests first, then by id.
   */
  consumersOf(version: number, sinceMs: number): Promise<VersionUse[]>;
  /** The consumer's pin and what a rollback needs; undefined: no such consumer. */
  pinOf(id: string): Promise<PinRecord | undefined>;
  /**
   * Every consumer refused `version` as closed to new consumers, with how often (all time) and when last; most
   * refusals first, then by id. Refusals are kept apart from uses: none of these is a user of the version.
   */
  refusedOf(version: number): Promise<{ consumer: ConsumerRecord; refused: Refused }[]>;
}

/** What the upgrade preview reads besides the ledger: the field paths consumers sent. */
export interface RequestFieldsReader {
  /**
   * The field paths sent in request bodies on `version` last seen at or after `sinceMs`: one consumer's, or every
   * consumer's; by consumer, operation and field.
   */
  requestFieldsOf(version: number, sinceMs: number, consumerId?: string): Promise<RequestFieldRow[]>;
}

/** How often a consumer was refused a version closed to new consumers, and when last (RFC 3339 UTC with ms). */
export interface Refused {
  count: number;
  last_at: string;
}

export interface NewConsumer {
  id: string;
  name: string;
  contact_email: string | null;
  webhook_url: string | null;
  /** `whsec_…`: what the webhook notices are signed with; null without a webhook. */
  webhook_secret: string | null;
  /** Its pin from registration on (the registry always gives one; null is a consumer as registered before pins). */
  pinned_version: number | null;
}

export interface KeyRecord {
  key_id: string;
  created_at: string;
  revoked_at: string | null;
}

/** A key as every replica holds it in memory: never the key itself, only its SHA-256. */
export interface KeyEntry {
  keyId: string;
  consumerId: string;
  digest: Buffer;
  revoked: boolean;
  /**
   * The key's consumer's pin (null: none, default_version), so a request's version is a field read on the entry its
   * key check found. A pin change replaces the entries, never changes one (the key cache relies on it).
   */
  pin: number | null;
}

/** The first request a consumer made with a version, fleet-wide. */
export interface FirstUse {
  consumerId: string;
  version: number;
  firstSeenMs: number;
}

/** What changed after a change counter value: keys and first uses, and the counter they bring a replica to. */
export interface StoreChanges {
  seq: number;
  keys: KeyEntry[];
  firstUses: FirstUse[];
}

/** Requests counted in memory for one (consumer, version, operation, UTC day), added to the ledger by a flush. */
export interface UsageDelta {
  consumerId: string;
  version: number;
  operation: string;
  /** YYYY-MM-DD, UTC. */
  day: string;
  requests: number;
  firstSeenMs: number;
  lastSeenMs: number;
}

/** The gateway's consumers, keys and ledger, shared by every replica on one database. */
export interface ConsumerStore extends ConsumerUsageReader, RequestFieldsReader {
  /** undefined: the id is taken. */
  createConsumer(consumer: NewConsumer, nowMs: number): Promise<ConsumerRecord | undefined>;
  consumer(id: string): Promise<(ConsumerRecord & { keys: KeyRecord[] }) | undefined>;
  /** Every registered consumer, by id. */
  consumers(): Promise<ConsumerRecord[]>;
  /** undefined: no such consumer. The consumer's pin comes with the key, for the key cache's entry. */
  addKey(
    consumerId: string,
    key: { keyId: string; digest: Buffer },
    nowMs: number,
  ): Promise<(KeyRecord & { pin: number | null }) | undefined>;
  /** Whether the consumer has that key; revoking a revoked key keeps its first revocation time. */
  revokeKey(consumerId: string, keyId: string, nowMs: number): Promise<boolean>;
  /**
   * Pins the consumer to `version`, the pin it leaves becoming `previous_version`; pinning the version it is on
   * changes nothing. undefined: no such consumer.
   */
  movePin(id: string, version: number, nowMs: number): Promise<PinRecord | undefined>;
  /**
   * Back to `previous_version` (which is then cleared), only while the pin is still `from` and it moved at or
   * after `movedSinceMs`; undefined when that no longer holds (another change came first) or no such consumer.
   */
  rollBackPin(
    id: string,
    from: { pinned_version: number | null; previous_version: number },
    movedSinceMs: number,
    nowMs: number,
  ): Promise<PinRecord | undefined>;
  /** Keys and first uses changed after counter value `seq` (0: all of them); a repinned consumer's keys come again. */
  changesSince(seq: number): Promise<StoreChanges>;
  /** Records a consumer's first use of a version unless one is known (the earliest stays). */
  recordFirstUse(use: FirstUse): Promise<void>;
  /** Adds counted requests to the ledger in one statement. */
  addUsage(rows: readonly UsageDelta[]): Promise<void>;
  /** Adds counted refusals (closed to new consumers) in one statement, apart from the uses. */
  addRefusals(rows: readonly UsageDelta[]): Promise<void>;
  /**
   * Adds counted request field paths in one statement; a field new to a (consumer, version, operation) that already
   * has MAX_FIELDS_PER_OPERATION is left out.
   */
  addRequestFields(rows: readonly FieldDelta[]): Promise<void>;
  /** The consumer's refusals per version it was refused, ascending. */
  refusalsOf(consumerId: string): Promise<({ version: number } & Refused)[]>;
  /** Closes the pool (and the embedded server behind it, if any). */
  close(): Promise<void>;
}

/** RFC 3339 UTC with milliseconds, written by PostgreSQL: a timestamptz never passes through a JS Date. */
const iso = (column: string): string => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const at = (epochMs: number): string => new Date(epochMs).toISOString();

const CONSUMER_COLUMNS = `id, name, contact_email, webhook_url, ${iso('created_at')} AS created_at, pinned_version`;
const PIN_COLUMNS = `id, name, pinned_version, previous_version, ${iso('pinned_at')} AS pinned_at`;

/** Bumps the change counter; run inside the transaction of the change it numbers. */
const BUMP = 'UPDATE gateway.changes SET seq = seq + 1 RETURNING seq';

/**
 * The store on a database the gateway's migrations have been applied to (schema `gateway`); `close` ends what it runs
 * on.
 */
export function createConsumerStore(database: Database, close: () => Promise<void>): ConsumerStore {
  /** Runs `work` in a transaction that first takes the next change number (the counter's row lock orders writers). */
  const inChange = <Result>(
    operation: string,
    work: (query: QueryOnClient, seq: number) => Promise<Result>,
  ): Promise<Result> =>
    database.withClient(operation, async (client) => {
      await client.query('BEGIN');
      try {
        const { rows } = await client.query<{ seq: string }>(BUMP);
        const result = await work((text, values) => client.query(text, values), Number(rows[0]?.seq));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    });

  /** Adds counted rows to `table` (`usage` or `refusals`, one shape) in one statement. */
  const addCounts = async (table: 'usage' | 'refusals', rows: readonly UsageDelta[]): Promise<void> => {
    if (rows.length === 0) return;
    const sorted = [...rows].sort((a, b) => byOperation(a, b) || compare(a.day, b.day));
    await database.query(
      `add_${table}`,
      `INSERT INTO gateway.${table} AS u (consumer_id, version, operation, day, requests, first_seen, last_seen)
       SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::date[], $5::bigint[], $6::timestamptz[], ` +
        `$7::timestamptz[])
       ON CONFLICT (consumer_id, version, operation, day) DO UPDATE SET
         requests = u.requests + excluded.requests,
         first_seen = least(u.first_seen, excluded.first_seen),
         last_seen = greatest(u.last_seen, excluded.last_seen)`,
      [
        sorted.map((row) => row.consumerId),
        sorted.map((row) => row.version),
        sorted.map((row) => row.operation),
        sorted.map((row) => row.day),
        sorted.map((row) => row.requests),
        sorted.map((row) => at(row.firstSeenMs)),
        sorted.map((row) => at(row.lastSeenMs)),
      ],
    );
  };

  return {
    createConsumer(consumer, nowMs) {
      return inChange('create_consumer', async (query, seq) => {
        const { rows } = await query(
          `INSERT INTO gateway.consumers
             (id, name, contact_email, webhook_url, webhook_secret, created_at, seq, pinned_version, pinned_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $6) ON CONFLICT (id) DO NOTHING RETURNING ${CONSUMER_COLUMNS}`,
          [
            consumer.id,
            consumer.name,
            consumer.contact_email,
            consumer.webhook_url,
            consumer.webhook_secret,
            at(nowMs),
            seq,
            consumer.pinned_version,
          ],
        );
        return rows[0] as ConsumerRecord | undefined;
      });
    },

    async consumers() {
      const { rows } = await database.query<ConsumerRecord>(
        'consumers',
        `SELECT ${CONSUMER_COLUMNS} FROM gateway.consumers ORDER BY id`,
        [],
      );
      return rows;
    },

    async consumer(id) {
      const { rows } = await database.query<ConsumerRecord>(
        'consumer',
        `SELECT ${CONSUMER_COLUMNS} FROM gateway.consumers WHERE id = $1`,
        [id],
      );
      const record = rows[0];
      if (record === undefined) return undefined;
      const keys = await database.query<KeyRecord>(
        'consumer_keys',
        `SELECT key_id, ${iso('created_at')} AS created_at, ${iso('revoked_at')} AS revoked_at FROM ` +
          `gateway.api_keys WHERE consumer_id = $1 ORDER BY created_at, key_id`,
        [id],
      );
      return { ...record, keys: keys.rows };
    },

    addKey(consumerId, { keyId, digest }, nowMs) {
      return inChange('add_key', async (query, seq) => {
        const { rows } = await query(
          `WITH owner AS (SELECT id, pinned_version FROM gateway.consumers WHERE id = $2),
                added AS (INSERT INTO gateway.api_keys (key_id, consumer_id, digest, created_at, seq)
                          SELECT $1, id, $3, $4, $5 FROM owner RETURNING key_id, created_at)
           SELECT key_id, ${iso('created_at')} AS created_at, NULL AS revoked_at, owner.pinned_version AS pin
           FROM added, owner`,
          [keyId, consumerId, digest, at(nowMs), seq],
        );
        return rows[0] as (KeyRecord & { pin: number | null }) | undefined;
      });
    },

    revokeKey(consumerId, keyId, nowMs) {
      return inChange('revoke_key', async (query, seq) => {
        const { rowCount } = await query(
          'UPDATE gateway.api_keys SET revoked_at = coalesce(revoked_at, $3), seq = $4 WHERE key_id = $1 AND ' +
            'consumer_id = $2',
          [keyId, consumerId, at(nowMs), seq],
        );
        return rowCount === 1;
      });
    },

    async pinOf(id) {
      const sql = `SELECT ${PIN_COLUMNS} FROM gateway.consumers WHERE id = $1`;
      const { rows } = await database.query<PinRecord>('pin_of', sql, [id]);
      return rows[0];
    },

    movePin(id, version, nowMs) {
      return inChange('move_pin', async (query, seq) => {
        // SET reads the row as it was: the pin left becomes previous_version.
        const { rows } = await query(
          `UPDATE gateway.consumers SET previous_version = pinned_version, pinned_version = $2, pinned_at = $3, seq = $4
           WHERE id = $1 AND pinned_version IS DISTINCT FROM $2 RETURNING ${PIN_COLUMNS}`,
          [id, version, at(nowMs), seq],
        );
        if (rows[0] !== undefined) return rows[0] as PinRecord;
        // Already there (nothing changes) or no such consumer; the number taken numbers no row, which is harmless.
        const unchanged = await query(`SELECT ${PIN_COLUMNS} FROM gateway.consumers WHERE id = $1`, [id]);
        return unchanged.rows[0] as PinRecord | undefined;
      });
    },

    rollBackPin(id, from, movedSinceMs, nowMs) {
      return inChange('roll_back_pin', async (query, seq) => {
        const { rows } = await query(
          `UPDATE gateway.consumers
           SET pinned_version = previous_version, previous_version = NULL, pinned_at = $5, seq = $6
           WHERE id = $1 AND pinned_version IS NOT DISTINCT FROM $2 AND previous_version = $3 AND pinned_at >= $4
           RETURNING ${PIN_COLUMNS}`,
          [id, from.pinned_version, from.previous_version, at(movedSinceMs), at(nowMs), seq],
        );
        return rows[0] as PinRecord | undefined;
      });
    },

    async changesSince(known) {
      const counter = await database.query<{ seq: string }>('change_counter', 'SELECT seq FROM gateway.changes', []);
      const seq = Number(counter.rows[0]?.seq ?? 0);
      if (seq <= known) return { seq: known, keys: [], firstUses: [] };
      // A key changed, or its consumer's pin did: either way the key's entry is built anew.
      type ChangedKey = { key_id: string; consumer_id: string; digest: Buffer; revoked: boolean; pin: number | null };
      const keys = await database.query<ChangedKey>(
        'changed_keys',
        `SELECT k.key_id, k.consumer_id, k.digest, k.revoked_at IS NOT NULL AS revoked, c.pinned_version AS pin
         FROM gateway.api_keys k JOIN gateway.consumers c ON c.id = k.consumer_id WHERE k.seq > $1 OR c.seq > $1`,
        [known],
      );
      const firstUses = await database.query<{ consumer_id: string; version: number; first_seen_ms: number }>(
        'changed_first_uses',
        'SELECT consumer_id, version, (extract(epoch FROM first_seen) * 1000)::float8 AS first_seen_ms FROM ' +
          'gateway.first_uses WHERE seq > $1',
        [known],
      );
      return {
        seq,
        keys: keys.rows.map((row) => ({
          keyId: row.key_id,
          consumerId: row.consumer_id,
          digest: row.digest,
          revoked: row.revoked,
          pin: row.pin,
        })),
        firstUses: firstUses.rows.map((row) => ({
          consumerId: row.consumer_id,
          version: row.version,
          firstSeenMs: row.first_seen_ms,
        })),
      };
    },

    async recordFirstUse({ consumerId, version, firstSeenMs }) {
      await inChange('record_first_use', async (query, seq) => {
        // An earlier first use (another replica's, written late) wins; the row is renumbered so replicas learn it.
        await query(
          `INSERT INTO gateway.first_uses (consumer_id, version, first_seen, seq) VALUES ($1, $2, $3, $4)
           ON CONFLICT (consumer_id, version) DO UPDATE SET first_seen = excluded.first_seen, seq = excluded.seq
           WHERE excluded.first_seen < first_uses.first_seen`,
          [consumerId, version, at(firstSeenMs), seq],
        );
      });
    },

    addUsage: (rows) => addCounts('usage', rows),
    addRefusals: (rows) => addCounts('refusals', rows),

    async addRequestFields(rows) {
      if (rows.length === 0) return;
      const sorted = [...rows].sort((a, b) => byOperation(a, b) || compare(a.field, b.field));
      // A field already stored is counted; a new one only while its operation has room (the new ones numbered in
      // order after those stored).
      await database.query(
        'add_request_fields',
        `WITH input AS (
           SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::bigint[], $6::timestamptz[], ` +
          `$7::timestamptz[])
             AS i (consumer_id, version, operation, field, requests, first_seen, last_seen)
         ), placed AS (
           SELECT i.*,
             EXISTS (SELECT 1 FROM gateway.request_fields f WHERE (f.consumer_id, f.version, f.operation, f.field) =
               (i.consumer_id, i.version, i.operation, i.field)) AS stored,
             (SELECT count(*) FROM gateway.request_fields f WHERE (f.consumer_id, f.version, f.operation) =
               (i.consumer_id, i.version, i.operation)) AS fields
           FROM input i
         ), numbered AS (
           SELECT p.*, row_number() OVER (PARTITION BY consumer_id, version, operation, stored ORDER BY field) AS nth
           FROM placed p
         )
         INSERT INTO gateway.request_fields AS r (consumer_id, version, operation, field, requests, first_seen, last_seen)
         SELECT consumer_id, version, operation, field, requests, first_seen, last_seen FROM numbered
         WHERE stored OR fields + nth <= $8
         ORDER BY consumer_id, version, operation, field
         ON CONFLICT (consumer_id, version, operation, field) DO UPDATE SET
           requests = r.requests + excluded.requests,
           first_seen = least(r.first_seen, excluded.first_seen),
           last_seen = greatest(r.last_seen, excluded.last_seen)`,
        [
          sorted.map((row) => row.consumerId),
          sorted.map((row) => row.version),
          sorted.map((row) => row.operation),
          sorted.map((row) => row.field),
          sorted.map((row) => row.requests),
          sorted.map((row) => at(row.firstSeenMs)),
          sorted.map((row) => at(row.lastSeenMs)),
          MAX_FIELDS_PER_OPERATION,
        ],
      );
    },

    async requestFieldsOf(version, sinceMs, consumerId) {
      const { rows } = await database.query<RequestFieldRow & { requests: string }>(
        'request_fields_of',
        `SELECT consumer_id, version, operation, field, requests, ${iso('last_seen')} AS last_seen
         FROM gateway.request_fields WHERE version = $1 AND last_seen >= $2 AND ($3::text IS NULL OR consumer_id = $3)
         ORDER BY consumer_id, operation, field`,
        [version, at(sinceMs), consumerId ?? null],
      );
      return rows.map((row) => ({ ...row, requests: Number(row.requests) }));
    },

    async refusalsOf(consumerId) {
      const { rows } = await database.query<{ version: number; count: string; last_at: string }>(
        'refusals_of',
        `SELECT version, sum(requests) AS count, ${iso('max(last_seen)')} AS last_at FROM gateway.refusals
         WHERE consumer_id = $1 GROUP BY version ORDER BY version`,
        [consumerId],
      );
      return rows.map(({ version, count, last_at }) => ({ version, count: Number(count), last_at }));
    },

    async refusedOf(version) {
      const { rows } = await database.query<ConsumerRecord & { count: string; last_at: string }>(
        'refused_of',
        `SELECT c.id, c.name, c.contact_email, c.webhook_url, ${iso('c.created_at')} AS created_at, c.pinned_version,
                sum(r.requests) AS count, ${iso('max(r.last_seen)')} AS last_at
         FROM gateway.refusals r JOIN gateway.consumers c ON c.id = r.consumer_id
         WHERE r.version = $1 GROUP BY c.id ORDER BY count DESC, c.id`,
        [version],
      );
      return rows.map(({ count, last_at, ...consumer }) => ({ consumer, refused: { count: Number(count), last_at } }));
    },

    async usageOf(consumerId, sinceMs) {
      const { rows } = await database.query<UsageRow & { requests: string }>(
        'usage_of',
        `SELECT consumer_id, version, operation, sum(requests) AS requests, ${iso('min(first_seen)')} AS ` +
          `first_seen, ${iso('max(last_seen)')} AS last_seen
         FROM gateway.usage WHERE consumer_id = $1 AND ($2::timestamptz IS NULL OR (day >= $2::date AND last_seen >= $2))
         GROUP BY consumer_id, version, operation ORDER BY version, operation`,
        [consumerId, sinceMs === undefined ? null : at(sinceMs)],
      );
      return rows.map((row) => ({ ...row, requests: Number(row.requests) }));
    },

    async consumersOf(version, sinceMs) {
      // One row per consumer and operation: the reports judge each operation's calls (consumers/reports/activity.ts).
      const { rows } = await database.query<
        ConsumerRecord & { pinned_at: string | null; operation: string; requests: string; last_seen: string }
      >(
        'consumers_of',
        `SELECT c.id, c.name, c.contact_email, c.webhook_url, ${iso('c.created_at')} AS created_at, c.pinned_version,
                ${iso('c.pinned_at')} AS pinned_at, u.operation,
                coalesce(sum(u.requests) FILTER (WHERE u.day >= $2::date), 0) AS requests, ` +
          `${iso('max(u.last_seen)')} AS last_seen
         FROM gateway.usage u JOIN gateway.consumers c ON c.id = u.consumer_id
         WHERE u.version = $1 GROUP BY c.id, u.operation ORDER BY c.id, u.operation`,
        [version, dayOf(sinceMs)],
      );
      return versionUses(
        rows.map(({ pinned_at, operation, requests, last_seen, ...consumer }) => ({
          consumer,
          pinned_at,
          operation,
          requests: Number(requests),
          last_seen,
        })),
      );
    },

    close,
  };
}

/**
 * One consumer's rows of (consumer, operation) summed into its use of the version: most requests first, then by id.
 * Times are RFC 3339 UTC with ms, so the later of two is the greater string.
 */
export function versionUses(
  rows: readonly {
    consumer: ConsumerRecord;
    pinned_at: string | null;
    operation: string;
    requests: number;
    last_seen: string;
  }[],
): VersionUse[] {
  const byConsumer = new Map<string, VersionUse>();
  for (const { consumer, pinned_at, operation, requests, last_seen } of rows) {
    let use = byConsumer.get(consumer.id);
    if (use === undefined)
      byConsumer.set(consumer.id, (use = { consumer, pinned_at, requests: 0, last_seen, operations: [] }));
    use.requests += requests;
    if (last_seen > use.last_seen) use.last_seen = last_seen;
    use.operations.push({ operation, last_seen });
  }
  return [...byConsumer.values()].sort((a, b) => b.requests - a.requests || compare(a.consumer.id, b.consumer.id));
}

type QueryOnClient = (text: string, values: unknown[]) => Promise<{ rows: unknown[]; rowCount: number | null }>;

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Rows of a consumer's operation in one order, by consumer, version and operation (then a row kind's own key): replicas
 * writing the same rows at once lock them in the same order, so none waits on another's lock (no deadlock).
 */
const byOperation = (
  a: { consumerId: string; version: number; operation: string },
  b: { consumerId: string; version: number; operation: string },
): number => compare(a.consumerId, b.consumerId) || a.version - b.version || compare(a.operation, b.operation);

/** The UTC calendar day of an instant, as the ledger's `day` keys it. */
export function dayOf(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}
