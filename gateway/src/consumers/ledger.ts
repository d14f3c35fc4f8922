import type { Logger } from 'pino';
import { CALL_FORMS, type CallForm } from '../versions/call-forms.js';
import { dayOf, type ConsumerStore, type FirstUse, type UsageDelta } from './store.js';

/** Counts wait at most this long in memory before they are written (the design allows 10 s). */
const FLUSH_INTERVAL_MS = 5_000;
/** Rows a replica keeps while it cannot write; past this, new rows are dropped and counted. */
export const MAX_PENDING_ROWS = 10_000;

/** Operation names per method, route label and form (`GET` + `/orders/:id` + `header`): all three are few. */
const operations = new Map<string, Map<string, Map<CallForm, string>>>();

/**
 * The ledger's operation: the method and the template of the path the request used, `GET /v1/orders/{id}`; on a
 * bare path, which names no version, also how the request chose its version (`GET /orders/{id} header`), so
 * the reports can say what the consumer sends and what it sends instead. Made once per method, route and form,
 * so a request builds no string and its ledger row's lookup hashes none.
 */
export function operationOf(method: string, routeLabel: string, form: CallForm): string {
  let byRoute = operations.get(method);
  if (byRoute === undefined) operations.set(method, (byRoute = new Map<string, Map<CallForm, string>>()));
  let byForm = byRoute.get(routeLabel);
  if (byForm === undefined) byRoute.set(routeLabel, (byForm = new Map<CallForm, string>()));
  let operation = byForm.get(form);
  if (operation === undefined) {
    const template = routeLabel.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    operation = form === 'path' ? `${method} ${template}` : `${method} ${template} ${form}`;
    byForm.set(form, operation);
  }
  return operation;
}

const FORMS: ReadonlySet<string> = new Set<string>(CALL_FORMS);

/**
 * A ledger operation's parts. A path form's path has its version (`/v1/orders/{id}`); a bare path's row
 * written before forms were recorded has none (form null).
 */
export function operationParts(operation: string): { method: string; path: string; form: CallForm | null } {
  const [method = '', path = '', form] = operation.split(' ');
  if (form !== undefined && FORMS.has(form)) return { method, path, form: form as CallForm };
  return { method, path, form: /^(?:\/api)?\/v\d+(?:\/|$)/.test(path) ? 'path' : null };
}

export interface Ledger {
  /** Counts one authenticated request on a version (`operation`: method and route template, `GET /v1/orders/{id}`). */
  record(consumerId: string, version: number, operation: string, nowMs: number): void;
  /**
   * Counts one request refused as closed to new consumers, apart from the uses: it makes no first use, so the
   * consumer stays new to the version and no user of it.
   */
  refuse(consumerId: string, version: number, operation: string, nowMs: number): void;
  /** When the consumer first used the version, fleet-wide as far as this replica knows; undefined: never. */
  firstUseOf(consumerId: string, version: number): number | undefined;
  /** First uses the store reports (loaded at start, then polled); the earliest known stays. */
  learn(uses: readonly FirstUse[]): void;
  /** Writes the pending counts and first uses; a failure keeps them pending (within the bound). */
  flush(): Promise<void>;
  /** Stops the periodic flush, waits for first uses being written, and writes what is pending, once. */
  close(): Promise<void>;
}

export interface LedgerOptions {
  store: ConsumerStore;
  logger: Logger;
  /** Counts requests dropped at the bound (consumer_usage_dropped_total). */
  countDropped: (requests: number) => void;
  flushIntervalMs?: number;
}

interface Pending extends UsageDelta {
  key: string;
  /** A refusal (closed to new consumers), written to its own table; else a use. */
  refused: boolean;
}

/**
 * Who called which operation of which version, shared by every replica through the store: requests add up in
 * memory per (consumer, version, operation, UTC day) and are written every few seconds and at shutdown, so a
 * request never waits on the database. A consumer's first use of a version is written at once (without
 * blocking the request): it decides `closed_to_new` on every replica. Requests refused as closed to new
 * consumers add up the same way into rows of their own (never a use, never a first use). While the store
 * cannot be written, pending rows stay, bounded; rows beyond the bound are dropped and counted.
 */
export function createLedger({
  store,
  logger,
  countDropped,
  flushIntervalMs = FLUSH_INTERVAL_MS,
}: LedgerOptions): Ledger {
  const firstUses = new Map<string, Map<number, number>>();
  let pending = new Map<string, Pending>();
  /**
   * The rows of `pending` by consumer, version and operation, for today: a request finds its row by three
   * lookups of strings it already has (the consumer id from the key cache, the operation from operationOf),
   * without building and hashing a key of its own. Emptied whenever `pending` is swapped or the day turns.
   */
  let today = new Map<string, Map<number, Map<string, Pending>>>();
  /** First uses not written yet (their write failed): retried with the next flush. */
  let unwrittenFirstUses: FirstUse[] = [];
  let failing = false;
  let day = { start: 0, end: 0, text: '' };

  const dayText = (nowMs: number): string => {
    if (nowMs < day.start || nowMs >= day.end) {
      const text = dayOf(nowMs);
      const start = Date.parse(text);
      day = { start, end: start + 86_400_000, text };
      today = new Map();
    }
    return day.text;
  };

  const knownFirstUse = (consumerId: string, version: number): number | undefined =>
    firstUses.get(consumerId)?.get(version);
  const learnOne = ({ consumerId, version, firstSeenMs }: FirstUse): void => {
    let versions = firstUses.get(consumerId);
    if (versions === undefined) firstUses.set(consumerId, (versions = new Map<number, number>()));
    const known = versions.get(version);
    if (known === undefined || firstSeenMs < known) versions.set(version, firstSeenMs);
  };

  const reportFailure = (err: unknown): void => {
    if (!failing)
      logger.warn(
        { reason: (err as Error).message, pending: pending.size },
        'consumer usage not written; kept in memory and retried',
      );
    failing = true;
  };

  /** First-use writes under way: close waits for them, so one that fails at a stop is retried, not lost. */
  const writing = new Set<Promise<void>>();
  const writeFirstUse = (use: FirstUse): void => {
    const write = store
      .recordFirstUse(use)
      .catch((err: unknown) => {
        unwrittenFirstUses.push(use);
        reportFailure(err);
      })
      .finally(() => writing.delete(write));
    writing.add(write);
  };

  let flushing: Promise<void> | undefined;
  const flushOnce = async (): Promise<void> => {
    const rows = pending;
    const uses = unwrittenFirstUses;
    if (rows.size === 0 && uses.length === 0) return;
    pending = new Map();
    today = new Map();
    unwrittenFirstUses = [];
    const counted = [...rows.values()];
    let unwritten = counted;
    try {
      for (const use of uses) await store.recordFirstUse(use);
      await store.addUsage(counted.filter((row) => !row.refused));
      unwritten = counted.filter((row) => row.refused);
      await store.addRefusals(unwritten);
      if (failing) logger.info('consumer usage written again');
      failing = false;
    } catch (err) {
      if (unwritten === counted) unwrittenFirstUses = [...uses, ...unwrittenFirstUses];
      // Back into pending (what was written stays written), merged with what arrived meanwhile, within the bound.
      for (const row of unwritten) merge(row);
      reportFailure(err);
    }
  };

  /** Adds a row's counts to pending; a new row past the bound is dropped and counted. */
  const merge = (row: Pending): void => {
    const existing = pending.get(row.key);
    if (existing !== undefined) {
      existing.requests += row.requests;
      existing.firstSeenMs = Math.min(existing.firstSeenMs, row.firstSeenMs);
      existing.lastSeenMs = Math.max(existing.lastSeenMs, row.lastSeenMs);
      return;
    }
    if (pending.size >= MAX_PENDING_ROWS) {
      countDropped(row.requests);
      return;
    }
    pending.set(row.key, row);
  };

  const flush = (): Promise<void> => (flushing ??= flushOnce().finally(() => (flushing = undefined)));
  const timer = setInterval(() => void flush(), flushIntervalMs);
  timer.unref();

  return {
    record(consumerId, version, operation, nowMs) {
      if (knownFirstUse(consumerId, version) === undefined) {
        const use = { consumerId, version, firstSeenMs: nowMs };
        learnOne(use);
        writeFirstUse(use);
      }
      const dayKey = dayText(nowMs);
      const known = today.get(consumerId)?.get(version)?.get(operation);
      if (known !== undefined) {
        known.requests += 1;
        known.lastSeenMs = Math.max(known.lastSeenMs, nowMs);
        return;
      }
      const key = `${consumerId}\n${version}\n${operation}\n${dayKey}`;
      const counted = { key, consumerId, version, operation, day: dayKey, requests: 1, refused: false };
      merge({ ...counted, firstSeenMs: nowMs, lastSeenMs: nowMs });
      const row = pending.get(key);
      if (row === undefined) return;
      let versions = today.get(consumerId);
      if (versions === undefined) today.set(consumerId, (versions = new Map<number, Map<string, Pending>>()));
      let operations = versions.get(version);
      if (operations === undefined) versions.set(version, (operations = new Map<string, Pending>()));
      operations.set(operation, row);
    },
    refuse(consumerId, version, operation, nowMs) {
      // Refusals are few (a newcomer's retries): a key built per request is cheap enough.
      const day = dayText(nowMs);
      const key = `refused\n${consumerId}\n${version}\n${operation}\n${day}`;
      merge({
        key,
        consumerId,
        version,
        operation,
        day,
        requests: 1,
        firstSeenMs: nowMs,
        lastSeenMs: nowMs,
        refused: true,
      });
    },
    firstUseOf: knownFirstUse,
    learn(uses) {
      for (const use of uses) learnOne(use);
    },
    flush,
    async close() {
      clearInterval(timer);
      await Promise.all(writing);
      await flushing;
      await flush();
    },
  };
}
