import type { FastifyBaseLogger } from 'fastify';
import { versionConsumers, type ConsumersOfVersion } from '../consumers/reports/version-consumers.js';
import type { ConsumerUsageReader } from '../consumers/store/consumer-store.js';

/** The registered consumers of each version the page lists, or word that the store could not be read. */
export type RegisteredConsumers = ReadonlyMap<number, ConsumersOfVersion> | 'store unavailable';

/**
 * How long the page waits for the store. It reloads every 10 s and must show the rest of what it knows even
 * when the store is away, so it does not wait the store's own deadlines (up to 8.5 s per statement).
 */
const STORE_WAIT_MS = 2_000;

/**
 * The registered consumers of `versions` from the store every replica shares, each version's as the
 * operators' list has them. A store that fails or does not answer within 2 s is logged with the reason (the
 * page says only that it could not be read: the reason may name hosts), and the page still renders.
 */
export async function readRegisteredConsumers(reader: ConsumerUsageReader, versions: readonly number[], nowMs: number, log: FastifyBaseLogger): Promise<RegisteredConsumers> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${STORE_WAIT_MS / 1000} s`)), STORE_WAIT_MS);
  });
  try {
    const lists = await Promise.race([Promise.all(versions.map((version) => versionConsumers(reader, version, nowMs))), late]);
    return new Map(versions.map((version, i) => [version, lists[i] as ConsumersOfVersion]));
  } catch (err) {
    log.warn({ reason: (err as Error).message }, 'status page: the consumer store could not be read; registered consumers are not shown');
    return 'store unavailable';
  } finally {
    clearTimeout(timer);
  }
}
