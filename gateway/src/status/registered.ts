import type { FastifyBaseLogger } from 'fastify';
import { versionConsumers, type ConsumersOfVersion } from '../consumers/reports/version-consumers.js';
import type { ConsumerUsageReader } from '../consumers/store.js';

/** What the page shows in place of what it could not read from the store. */
export type StoreUnavailable = 'store unavailable';

/** The registered consumers of each version the page lists, or word that the store could not be read. */
export type RegisteredConsumers = ReadonlyMap<number, ConsumersOfVersion> | StoreUnavailable;

/**
 * How long the page waits for the store. It reloads every 10 s and must show the rest of what it knows even
 * when the store is away, so it does not wait the store's own deadlines (up to 8.5 s per statement).
 */
const STORE_WAIT_MS = 2_000;

/**
 * `read`, or 'store unavailable' when it fails or does not answer within 2 s: the page's every read of the
 * store goes through this, all started together, so the page waits 2 s at most whatever the store does. The
 * reason is logged (`missing` says what the page leaves out); the page says only that the store could not be
 * read, as the reason may name hosts.
 */
export async function withinStoreWait<T>(
  read: Promise<T>,
  log: FastifyBaseLogger,
  missing: string,
): Promise<T | StoreUnavailable> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${STORE_WAIT_MS / 1000} s`)), STORE_WAIT_MS);
  });
  try {
    return await Promise.race([read, late]);
  } catch (err) {
    log.warn(
      { reason: (err as Error).message },
      `status page: the consumer store could not be read; ${missing} not shown`,
    );
    return 'store unavailable';
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The registered consumers of `versions` from the store every replica shares, each version's as the operators' list has
 * them.
 */
export async function readRegisteredConsumers(
  reader: ConsumerUsageReader,
  versions: readonly number[],
  defaultVersion: number,
  nowMs: number,
  log: FastifyBaseLogger,
): Promise<RegisteredConsumers> {
  const lists = await withinStoreWait(
    Promise.all(versions.map((version) => versionConsumers(reader, version, defaultVersion, nowMs))),
    log,
    'registered consumers are',
  );
  if (lists === 'store unavailable') return lists;
  return new Map(versions.map((version, i) => [version, lists[i] as ConsumersOfVersion]));
}
