import type { Logger } from 'pino';
import type { ConsumerStore, FirstUse, KeyEntry, StoreChanges } from './store.js';
import { keyIdOf, keyMatches } from './keys.js';

/** How often a replica asks the store whether a key, a consumer or a first use changed. */
const POLL_INTERVAL_MS = 1_000;

export interface KeyCache {
  /**
   * The entry of a key (its consumer and that consumer's pin): undefined when it is malformed, unknown or
   * revoked. Memory only. `connection` (the request's socket) remembers the key it last proved, so the next
   * request on it with the same key skips the digest while the key's entry stays the same object.
   */
  entryOf(key: string, connection?: object): KeyEntry | undefined;
  /** A key this replica made, applied at once rather than at the next poll. */
  remember(entry: KeyEntry): void;
  /** A key this replica revoked, refused at once. */
  revoke(keyId: string): void;
  /** A pin this replica changed, served at once: every key entry of the consumer is replaced by one with the pin. */
  repin(consumerId: string, pin: number | null): void;
  /** How many consumers holding a key that is not revoked are pinned to each version, fleet-wide as last polled. */
  pinnedConsumers(): ReadonlyMap<number, number>;
  /** Reads what changed since the last poll and applies it; resolves when done (tests and the first load). */
  refresh(): Promise<void>;
  /** Stops polling. */
  stop(): void;
}

export interface KeyCacheOptions {
  store: ConsumerStore;
  logger: Logger;
  /** Where first uses go as they are learned (the ledger: closed_to_new and "first use" are answered from it). */
  learnFirstUses: (uses: readonly FirstUse[]) => void;
  pollIntervalMs?: number;
}

/**
 * Every key of every consumer, in memory on every replica: a request is checked without a database round
 * trip, and keeps being checked with the last known keys while the store is down. Loaded whole at start
 * (`load` fails when the store cannot be read); then a poll of the store's change counter reads only the
 * rows changed since, so a key made or revoked on any replica applies here within about a second.
 */
export async function loadKeyCache({
  store,
  logger,
  learnFirstUses,
  pollIntervalMs = POLL_INTERVAL_MS,
}: KeyCacheOptions): Promise<KeyCache> {
  const keys = new Map<string, KeyEntry>();
  let seq = 0;
  const apply = (changes: StoreChanges): void => {
    for (const entry of changes.keys) keys.set(entry.keyId, entry);
    if (changes.firstUses.length > 0) learnFirstUses(changes.firstUses);
    seq = Math.max(seq, changes.seq);
  };
  apply(await store.changesSince(0));

  let failing = false;
  let running: Promise<void> | undefined;
  const refresh = (): Promise<void> =>
    (running ??= store
      .changesSince(seq)
      .then(
        (changes) => {
          apply(changes);
          if (failing) logger.info('consumer store reachable again; keys are current');
          failing = false;
        },
        (err: unknown) => {
          // One line per outage, not one per poll; the keys known so far keep working.
          if (!failing)
            logger.warn(
              { reason: (err as Error).message },
              'consumer store unreachable; checking keys against the last known ones',
            );
          failing = true;
        },
      )
      .finally(() => (running = undefined)));
  const timer = setInterval(() => void refresh(), pollIntervalMs);
  timer.unref();

  /**
   * The key each keep-alive connection last proved, with the entry it matched: a client sends its key on every
   * request, and SHA-256 is most of what checking it costs. Kept only as long as the connection (a WeakMap), as
   * the key already is in that connection's request headers. Comparing against the key this same connection
   * already proved tells a client nothing it did not send itself.
   */
  const proven = new WeakMap<object, { key: string; entry: KeyEntry }>();

  return {
    entryOf(key, connection) {
      const remembered = connection === undefined ? undefined : proven.get(connection);
      // Only while the registry still holds the very (unrevoked) entry the key was proved against: entries are
      // replaced, never changed, so a revocation, a repin or a poll sends the next request through the full check.
      if (remembered !== undefined && remembered.key === key && keys.get(remembered.entry.keyId) === remembered.entry) {
        return remembered.entry;
      }
      const keyId = keyIdOf(key);
      if (keyId === undefined) return undefined;
      const entry = keys.get(keyId);
      if (entry === undefined || entry.revoked || !keyMatches(key, entry.digest)) return undefined;
      if (connection !== undefined) proven.set(connection, { key, entry });
      return entry;
    },
    remember(entry) {
      keys.set(entry.keyId, entry);
    },
    revoke(keyId) {
      const entry = keys.get(keyId);
      if (entry !== undefined) keys.set(keyId, { ...entry, revoked: true });
    },
    repin(consumerId, pin) {
      for (const [keyId, entry] of keys) if (entry.consumerId === consumerId) keys.set(keyId, { ...entry, pin });
    },
    pinnedConsumers() {
      const consumersByPin = new Map<number, Set<string>>();
      for (const { consumerId, revoked, pin } of keys.values()) {
        if (revoked || pin === null) continue;
        let pinned = consumersByPin.get(pin);
        if (pinned === undefined) consumersByPin.set(pin, (pinned = new Set()));
        pinned.add(consumerId);
      }
      return new Map([...consumersByPin].map(([pin, pinned]) => [pin, pinned.size]));
    },
    refresh,
    stop() {
      clearInterval(timer);
    },
  };
}
