import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { routeLabelOf } from '@version-router/platform/http-foundation';
import type { Clock } from '@version-router/platform/clock';
import { isObject } from '../translation/body-plan.js';
import { unmarkedString } from '../translation/json-text.js';
import type { VersionAnswer } from '../versions/policy.js';
import { operationOf } from './ledger.js';
import { MAX_FIELDS_PER_OPERATION, type ConsumerStore, type FieldDelta } from './store.js';

/**
 * The field paths each authenticated consumer sends in the JSON bodies of each operation
 * (docs/consumers.md#upgrade-preview): `customer.id`, `lines[].sku`, as the declarations name fields, each with its
 * requests and first and last seen. What an upgrade preview reads to tell whether a change of a request field
 * touches the consumer.
 *
 * Recorded only on a version with a successor (`recordsFieldsOf`): a preview moves a consumer from such a version,
 * never from the latest, so the latest's requests pay for nothing.
 *
 * A body is walked once against a tree of the fields already known for its consumer, version and operation, so a
 * request builds no string for a field seen before and counts each field once. Bounded: 64 fields per consumer,
 * version and operation (the store keeps the same bound), fields 8 levels deep at most, the first 16 items of an
 * array and 1,000 values of a body visited at most, 10,000 consumer × operation trees per replica. Counts add up in
 * memory and are written every few seconds and at shutdown, as the ledger's; while the store cannot be written at
 * most 10,000 rows wait, and what does not fit is dropped and counted.
 */

export interface RequestFields {
  /** An authenticated request's body already read as JSON (a translated request's, before it goes forward). */
  sent(request: FastifyRequest, body: unknown): void;
  /** A body the gateway holds whole and does not translate, whose Content-Type says JSON: read, if it is. */
  sentBytes(request: FastifyRequest, bytes: Buffer): void;
  /** Writes the pending counts; a failure keeps them pending (within the bound). */
  flush(): Promise<void>;
  /** Stops the periodic flush and writes what is pending, once. */
  close(): Promise<void>;
}

export interface RequestFieldsOptions {
  store: ConsumerStore;
  logger: Logger;
  clock: Clock;
  /** Counts the field paths of requests left unrecorded at a bound. */
  countDropped: (fields: number) => void;
  flushIntervalMs?: number;
}

/** As the ledger's: counts wait at most this long in memory. */
const FLUSH_INTERVAL_MS = 5_000;
const MAX_PENDING_ROWS = 10_000;
const MAX_TREES = 10_000;
const MAX_DEPTH = 8;
const MAX_VISITS = 1_000;
/**
 * A field path names every item of an array alike (`lines[].sku`), and a client's items are built by one piece of
 * code: the first few show the fields; walking a list of hundreds would cost far more and add none.
 */
const MAX_ITEMS = 16;

/**
 * Whether a request's body fields are recorded: only when its version has a successor, something an upgrade preview
 * can move it to (docs/consumers.md#upgrade-preview). The first check on every path that records, and the cheapest.
 */
export const recordsFieldsOf = (answer: VersionAnswer | null): answer is VersionAnswer =>
  answer !== null && answer.successor !== null;

interface FieldNode {
  readonly path: string;
  /** The keys of the object under it, by the key as the body has it. */
  readonly children: Map<string, FieldNode>;
  /** The keys of the objects in the array under it (`lines[].sku`). */
  readonly itemChildren: Map<string, FieldNode>;
  /** The last body that counted it: each field once per request. */
  stamp: number;
  /** Its row among the pending counts, while `generation` is the pending map's. */
  row: FieldDelta | undefined;
  generation: number;
}

/** The fields known of one consumer's operation on one version. */
interface FieldTree {
  readonly consumerId: string;
  readonly version: number;
  readonly operation: string;
  readonly root: FieldNode;
  size: number;
}

const newNode = (path: string): FieldNode => ({
  path,
  children: new Map(),
  itemChildren: new Map(),
  stamp: 0,
  row: undefined,
  generation: -1,
});

export function createRequestFields({
  store,
  logger,
  clock,
  countDropped,
  flushIntervalMs = FLUSH_INTERVAL_MS,
}: RequestFieldsOptions): RequestFields {
  const trees = new Map<string, Map<number, Map<string, FieldTree>>>();
  let treeCount = 0;
  let pending = new Map<string, FieldDelta>();
  let generation = 0;
  let stamp = 0;
  let failing = false;

  const treeOf = (consumerId: string, version: number, operation: string): FieldTree | undefined => {
    let versions = trees.get(consumerId);
    let operations = versions?.get(version);
    const known = operations?.get(operation);
    if (known !== undefined) return known;
    if (treeCount >= MAX_TREES) return undefined;
    if (versions === undefined) trees.set(consumerId, (versions = new Map<number, Map<string, FieldTree>>()));
    if (operations === undefined) versions.set(version, (operations = new Map<string, FieldTree>()));
    const tree = { consumerId, version, operation, root: newNode(''), size: 0 };
    operations.set(operation, tree);
    treeCount += 1;
    return tree;
  };

  /** Adds a row's counts to pending; a new row past the bound is dropped and counted. */
  const merge = (row: FieldDelta, key: string): FieldDelta | undefined => {
    const existing = pending.get(key);
    if (existing !== undefined) {
      existing.requests += row.requests;
      existing.firstSeenMs = Math.min(existing.firstSeenMs, row.firstSeenMs);
      existing.lastSeenMs = Math.max(existing.lastSeenMs, row.lastSeenMs);
      return existing;
    }
    if (pending.size >= MAX_PENDING_ROWS) {
      countDropped(1);
      return undefined;
    }
    pending.set(key, row);
    return row;
  };

  const count = (tree: FieldTree, node: FieldNode, nowMs: number): void => {
    if (node.stamp === stamp) return;
    node.stamp = stamp;
    if (node.generation === generation && node.row !== undefined) {
      node.row.requests += 1;
      if (nowMs > node.row.lastSeenMs) node.row.lastSeenMs = nowMs;
      return;
    }
    const { consumerId, version, operation } = tree;
    const row = {
      consumerId,
      version,
      operation,
      field: node.path,
      requests: 1,
      firstSeenMs: nowMs,
      lastSeenMs: nowMs,
    };
    node.row = merge(row, `${consumerId}\n${version}\n${operation}\n${node.path}`);
    node.generation = generation;
  };

  const record = (request: FastifyRequest, body: unknown): void => {
    const answer = request.apiVersion;
    if (!recordsFieldsOf(answer)) return;
    const consumerId = request.consumer;
    if (consumerId === null || answer.version === null || !isObject(body)) return;
    const tree = treeOf(
      consumerId,
      answer.version,
      operationOf(request.method, routeLabelOf(request), answer.selectedBy),
    );
    if (tree === undefined) {
      countDropped(1);
      return;
    }
    stamp += 1;
    const nowMs = clock();
    let visits = 0;
    let truncated = false;
    const visit = (level: Map<string, FieldNode>, parent: string, object: Record<string, unknown>, depth: number) => {
      for (const key in object) {
        if (++visits > MAX_VISITS) return;
        let node = level.get(key);
        if (node === undefined) {
          if (tree.size >= MAX_FIELDS_PER_OPERATION) {
            truncated = true;
            continue;
          }
          node = newNode(parent === '' ? unmarkedString(key) : `${parent}.${unmarkedString(key)}`);
          level.set(key, node);
          tree.size += 1;
        }
        count(tree, node, nowMs);
        if (depth < MAX_DEPTH) descend(node, object[key], depth + 1);
      }
    };
    const descend = (node: FieldNode, value: unknown, depth: number): void => {
      if (isObject(value)) visit(node.children, node.path, value, depth);
      else if (Array.isArray(value)) {
        const items = Math.min(value.length, MAX_ITEMS);
        for (let i = 0; i < items; i++) {
          if (visits > MAX_VISITS) return;
          const item: unknown = value[i];
          if (isObject(item)) visit(node.itemChildren, `${node.path}[]`, item, depth);
        }
      }
    };
    visit(tree.root.children, '', body, 1);
    if (truncated) countDropped(1);
  };

  const reportFailure = (err: unknown): void => {
    if (!failing)
      logger.warn(
        { reason: (err as Error).message, pending: pending.size },
        'request field paths not written; kept in memory and retried',
      );
    failing = true;
  };

  let flushing: Promise<void> | undefined;
  const flushOnce = async (): Promise<void> => {
    const rows = pending;
    if (rows.size === 0) return;
    pending = new Map();
    // Nodes holding rows of the map being written start new ones.
    generation += 1;
    try {
      await store.addRequestFields([...rows.values()]);
      if (failing) logger.info('request field paths written again');
      failing = false;
    } catch (err) {
      for (const [key, row] of rows) merge(row, key);
      reportFailure(err);
    }
  };
  const flush = (): Promise<void> => (flushing ??= flushOnce().finally(() => (flushing = undefined)));
  const timer = setInterval(() => void flush(), flushIntervalMs);
  timer.unref();

  return {
    sent: record,
    sentBytes(request, bytes) {
      if (!recordsFieldsOf(request.apiVersion) || request.consumer === null || bytes.length === 0) return;
      let body: unknown;
      try {
        body = JSON.parse(bytes.toString('utf8'));
      } catch {
        // Not JSON after all: the backend answers it; there are no fields to record.
        return;
      }
      record(request, body);
    },
    flush,
    async close() {
      clearInterval(timer);
      await flushing;
      await flush();
    },
  };
}
