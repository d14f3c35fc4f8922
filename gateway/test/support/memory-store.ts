import { StorageUnavailableError } from '@version-router/platform/postgres';
import { generateKey } from '../../src/consumers/keys.js';
import {
  MAX_FIELDS_PER_OPERATION,
  dayOf,
  type ConsumerRecord,
  type ConsumerStore,
  type FieldDelta,
  type FirstUse,
  type KeyEntry,
  type KeyRecord,
  type PinRecord,
  type Refused,
  type UsageDelta,
  type UsageRow,
  versionUses,
} from '../../src/consumers/store.js';

/**
 * A ConsumerStore in memory for app.inject tests, with a switch that makes every call fail as a database outage would.
 */
export interface MemoryConsumerStore extends ConsumerStore {
  /** While true, every call rejects with StorageUnavailableError. */
  down: boolean;
  /** Every addUsage call's rows, in order (uses only: refusals are kept apart). */
  readonly writes: UsageDelta[][];
}

const iso = (ms: number): string => new Date(ms).toISOString();

export function createMemoryConsumerStore(): MemoryConsumerStore {
  let seq = 0;
  type StoredConsumer = ConsumerRecord & { seq: number; previous_version: number | null; pinned_at: string | null };
  const consumers = new Map<string, StoredConsumer>();
  const keys = new Map<string, Omit<KeyEntry, 'pin'> & { createdMs: number; revokedMs: number | null; seq: number }>();
  const recordOf = (record: ConsumerRecord): ConsumerRecord => {
    const { id, name, contact_email, webhook_url, created_at, pinned_version } = record;
    return { id, name, contact_email, webhook_url, created_at, pinned_version };
  };
  const pinOf = (id: string): PinRecord | undefined => {
    const found = consumers.get(id);
    if (found === undefined) return undefined;
    const { name, pinned_version, previous_version, pinned_at } = found;
    return { id, name, pinned_version, previous_version, pinned_at };
  };
  const pinOfKey = (consumerId: string): number | null => consumers.get(consumerId)?.pinned_version ?? null;
  const firstUses = new Map<string, FirstUse & { seq: number }>();
  const usage = new Map<string, UsageDelta>();
  const refusals = new Map<string, UsageDelta>();
  /** Adds rows to `table` as the SQL store's upsert does. */
  const addTo = (table: Map<string, UsageDelta>, rows: readonly UsageDelta[]): void => {
    for (const row of rows) {
      const key = [row.consumerId, row.version, row.operation, row.day].join('\n');
      const known = table.get(key);
      table.set(
        key,
        known === undefined
          ? { ...row }
          : {
              ...known,
              requests: known.requests + row.requests,
              firstSeenMs: Math.min(known.firstSeenMs, row.firstSeenMs),
              lastSeenMs: Math.max(known.lastSeenMs, row.lastSeenMs),
            },
      );
    }
  };
  /** Refusals summed per consumer and version. */
  const refusedBy = (keep: (row: UsageDelta) => boolean): Map<string, Map<number, Refused>> => {
    const summed = new Map<string, Map<number, Refused>>();
    for (const row of refusals.values()) {
      if (!keep(row)) continue;
      let versions = summed.get(row.consumerId);
      if (versions === undefined) summed.set(row.consumerId, (versions = new Map<number, Refused>()));
      const known = versions.get(row.version);
      versions.set(row.version, {
        count: (known?.count ?? 0) + row.requests,
        last_at: iso(Math.max(row.lastSeenMs, known === undefined ? 0 : Date.parse(known.last_at))),
      });
    }
    return summed;
  };
  /** Request field paths per consumer, version, operation and field, bounded per operation as the SQL store's. */
  const fields = new Map<string, FieldDelta>();
  const writes: UsageDelta[][] = [];
  const store: MemoryConsumerStore = {
    down: false,
    writes,
    async createConsumer(consumer, nowMs) {
      check();
      if (consumers.has(consumer.id)) return undefined;
      const record = {
        id: consumer.id,
        name: consumer.name,
        contact_email: consumer.contact_email,
        webhook_url: consumer.webhook_url,
        created_at: iso(nowMs),
        pinned_version: consumer.pinned_version,
      };
      consumers.set(consumer.id, { ...record, seq: ++seq, previous_version: null, pinned_at: iso(nowMs) });
      return record;
    },
    async consumers() {
      check();
      return [...consumers.values()].map(recordOf).sort((a, b) => (a.id < b.id ? -1 : 1));
    },
    async consumer(id) {
      check();
      const found = consumers.get(id);
      if (found === undefined) return undefined;
      const record = recordOf(found);
      const owned: KeyRecord[] = [...keys.values()]
        .filter((key) => key.consumerId === id)
        .map((key) => ({
          key_id: key.keyId,
          created_at: iso(key.createdMs),
          revoked_at: key.revokedMs === null ? null : iso(key.revokedMs),
        }));
      return { ...record, keys: owned };
    },
    async addKey(consumerId, { keyId, digest }, nowMs) {
      check();
      if (!consumers.has(consumerId)) return undefined;
      keys.set(keyId, { keyId, consumerId, digest, revoked: false, createdMs: nowMs, revokedMs: null, seq: ++seq });
      return { key_id: keyId, created_at: iso(nowMs), revoked_at: null, pin: pinOfKey(consumerId) };
    },
    async revokeKey(consumerId, keyId, nowMs) {
      check();
      const key = keys.get(keyId);
      if (key === undefined || key.consumerId !== consumerId) return false;
      keys.set(keyId, { ...key, revoked: true, revokedMs: key.revokedMs ?? nowMs, seq: ++seq });
      return true;
    },
    async pinOf(id) {
      check();
      return pinOf(id);
    },
    async movePin(id, version, nowMs) {
      check();
      const found = consumers.get(id);
      if (found === undefined || found.pinned_version === version) return pinOf(id);
      consumers.set(id, {
        ...found,
        previous_version: found.pinned_version,
        pinned_version: version,
        pinned_at: iso(nowMs),
        seq: ++seq,
      });
      return pinOf(id);
    },
    async rollBackPin(id, from, movedSinceMs, nowMs) {
      check();
      const found = consumers.get(id);
      if (found === undefined || found.pinned_version !== from.pinned_version) return undefined;
      if (found.previous_version !== from.previous_version) return undefined;
      if (found.pinned_at === null || Date.parse(found.pinned_at) < movedSinceMs) return undefined;
      consumers.set(id, {
        ...found,
        pinned_version: found.previous_version,
        previous_version: null,
        pinned_at: iso(nowMs),
        seq: ++seq,
      });
      return pinOf(id);
    },
    async changesSince(known) {
      check();
      if (seq <= known) return { seq: known, keys: [], firstUses: [] };
      return {
        seq,
        keys: [...keys.values()]
          .filter((key) => key.seq > known || (consumers.get(key.consumerId)?.seq ?? 0) > known)
          .map(({ keyId, consumerId, digest, revoked }) => {
            return { keyId, consumerId, digest, revoked, pin: pinOfKey(consumerId) };
          }),
        firstUses: [...firstUses.values()]
          .filter((use) => use.seq > known)
          .map(({ consumerId, version, firstSeenMs }) => ({ consumerId, version, firstSeenMs })),
      };
    },
    async recordFirstUse(use) {
      check();
      const key = `${use.consumerId}/${use.version}`;
      const known = firstUses.get(key);
      if (known === undefined || use.firstSeenMs < known.firstSeenMs) firstUses.set(key, { ...use, seq: ++seq });
    },
    async addUsage(rows) {
      check();
      writes.push(rows.map((row) => ({ ...row })));
      addTo(usage, rows);
    },
    async addRefusals(rows) {
      check();
      addTo(refusals, rows);
    },
    async addRequestFields(rows) {
      check();
      for (const row of rows) {
        const operation = [row.consumerId, row.version, row.operation].join('\n');
        const key = `${operation}\n${row.field}`;
        const known = fields.get(key);
        if (known !== undefined) {
          known.requests += row.requests;
          known.firstSeenMs = Math.min(known.firstSeenMs, row.firstSeenMs);
          known.lastSeenMs = Math.max(known.lastSeenMs, row.lastSeenMs);
          continue;
        }
        const stored = [...fields.keys()].filter((other) => other.startsWith(`${operation}\n`)).length;
        if (stored < MAX_FIELDS_PER_OPERATION) fields.set(key, { ...row });
      }
    },
    async requestFieldsOf(version, sinceMs, consumerId) {
      check();
      return [...fields.values()]
        .filter(
          (row) =>
            row.version === version &&
            row.lastSeenMs >= sinceMs &&
            (consumerId === undefined || row.consumerId === consumerId),
        )
        .sort(
          (a, b) =>
            a.consumerId.localeCompare(b.consumerId) ||
            a.operation.localeCompare(b.operation) ||
            a.field.localeCompare(b.field),
        )
        .map((row) => ({
          consumer_id: row.consumerId,
          version: row.version,
          operation: row.operation,
          field: row.field,
          requests: row.requests,
          last_seen: iso(row.lastSeenMs),
        }));
    },
    async refusalsOf(consumerId) {
      check();
      const versions = refusedBy((row) => row.consumerId === consumerId).get(consumerId) ?? new Map<number, Refused>();
      return [...versions.entries()]
        .map(([version, refused]) => ({ version, ...refused }))
        .sort((a, b) => a.version - b.version);
    },
    async refusedOf(version) {
      check();
      return [...refusedBy((row) => row.version === version).entries()]
        .map(([id, versions]) => ({
          consumer: recordOf(consumers.get(id) as ConsumerRecord),
          refused: versions.get(version) as Refused,
        }))
        .sort((a, b) => b.refused.count - a.refused.count || (a.consumer.id < b.consumer.id ? -1 : 1));
    },
    async usageOf(consumerId, sinceMs) {
      check();
      const byOperation = new Map<string, UsageRow>();
      for (const row of usage.values()) {
        if (row.consumerId !== consumerId) continue;
        if (sinceMs !== undefined && (row.day < dayOf(sinceMs) || row.lastSeenMs < sinceMs)) continue;
        const key = `${row.version} ${row.operation}`;
        const known = byOperation.get(key);
        byOperation.set(key, {
          consumer_id: consumerId,
          version: row.version,
          operation: row.operation,
          requests: (known?.requests ?? 0) + row.requests,
          first_seen: iso(Math.min(row.firstSeenMs, known === undefined ? Infinity : Date.parse(known.first_seen))),
          last_seen: iso(Math.max(row.lastSeenMs, known === undefined ? 0 : Date.parse(known.last_seen))),
        });
      }
      return [...byOperation.values()].sort((a, b) => a.version - b.version || a.operation.localeCompare(b.operation));
    },
    async consumersOf(version, sinceMs) {
      check();
      const byOperation = new Map<
        string,
        { consumerId: string; operation: string; requests: number; lastSeenMs: number }
      >();
      for (const row of usage.values()) {
        if (row.version !== version) continue;
        const key = `${row.consumerId}\n${row.operation}`;
        const known = byOperation.get(key) ?? {
          consumerId: row.consumerId,
          operation: row.operation,
          requests: 0,
          lastSeenMs: 0,
        };
        byOperation.set(key, {
          ...known,
          requests: known.requests + (row.day >= dayOf(sinceMs) ? row.requests : 0),
          lastSeenMs: Math.max(known.lastSeenMs, row.lastSeenMs),
        });
      }
      return versionUses(
        [...byOperation.values()]
          .sort((a, b) =>
            a.consumerId < b.consumerId ? -1 : a.consumerId > b.consumerId ? 1 : a.operation < b.operation ? -1 : 1,
          )
          .map(({ consumerId, operation, requests, lastSeenMs }) => ({
            consumer: recordOf(consumers.get(consumerId) as ConsumerRecord),
            pinned_at: consumers.get(consumerId)?.pinned_at ?? null,
            operation,
            requests,
            last_seen: iso(lastSeenMs),
          })),
      );
    },
    async close() {},
  };
  function check(): void {
    if (store.down) throw new StorageUnavailableError('connect ECONNREFUSED 10.0.0.9:5432');
  }
  return store;
}

/**
 * A consumer with a key, written to the store as another replica (or an earlier run) would have; without a
 * `pinned_version`, as registered before pins (it follows default_version).
 */
export async function consumerWithKey(
  store: ConsumerStore,
  id: string,
  // The tests' usual today (TODAY in ../helpers.ts, which imports this file).
  {
    nowMs = Date.parse('2026-11-22T12:00:00Z'),
    name = id,
    contact_email = null,
    pinned_version = null,
  }: { nowMs?: number; name?: string; contact_email?: string | null; pinned_version?: number | null } = {},
): Promise<{ key: string; keyId: string }> {
  const consumer = { id, name, contact_email, webhook_url: null, webhook_secret: null, pinned_version };
  await store.createConsumer(consumer, nowMs);
  const { keyId, key, digest } = generateKey();
  await store.addKey(id, { keyId, digest }, nowMs);
  return { key, keyId };
}
