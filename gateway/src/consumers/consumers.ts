import type { IncomingHttpHeaders } from 'node:http';
import { createTopK, type TopK } from './top-k.js';

/** Consumers kept per version: memory stays bounded whatever keys clients send. */
const CONSUMERS_PER_VERSION = 100;
/** Longer keys are cut to this many characters before they are counted. */
export const CONSUMER_KEY_LENGTH = 128;
/** The key of a request that names itself neither by X-Client-Id nor by User-Agent. */
const UNKNOWN_CONSUMER = 'unknown';

/**
 * Who sent a request: `X-Client-Id`, else `User-Agent`, else "unknown" (an empty header counts as
 * absent), cut to 128 characters. Both headers are whatever the client wrote: never trust the text.
 */
export function consumerKey(headers: IncomingHttpHeaders): string {
  const clientId = headers['x-client-id'];
  const userAgent = headers['user-agent'];
  const key = typeof clientId === 'string' && clientId !== '' ? clientId : userAgent !== undefined && userAgent !== '' ? userAgent : UNKNOWN_CONSUMER;
  return key.length > CONSUMER_KEY_LENGTH ? key.slice(0, CONSUMER_KEY_LENGTH) : key;
}

/** One consumer as `GET /consumers` shows it. */
interface ConsumerRow {
  consumer: string;
  requests: number;
  /** RFC 3339 UTC with milliseconds. */
  last_seen: string;
}

export interface VersionConsumers {
  version: number;
  consumers: ConsumerRow[];
}

export interface ConsumerTable {
  /** Versions with at least one counted request. */
  versions(): number[];
  /** Consumers of `version` tracked now (at most 100). */
  tracked(version: number): number;
  /** True once some consumer of `version` had to make room for another: counts are then upper bounds. */
  approximate(version: number): boolean;
  /** Counts one request of `consumer` on `version`. */
  count(version: number, consumer: string, nowMs: number): void;
  /** The consumers of each of `versions`, ascending, each list by requests descending. */
  report(versions: Iterable<number>): VersionConsumers[];
}

/** The top consumers since start, one Space-Saving table (top-k.ts) per version. */
export function createConsumerTable(capacity = CONSUMERS_PER_VERSION): ConsumerTable {
  const tables = new Map<number, TopK>();
  return {
    versions: () => [...tables.keys()],
    tracked: (version) => tables.get(version)?.size ?? 0,
    approximate: (version) => (tables.get(version)?.displaced ?? 0) > 0,
    count(version, consumer, nowMs) {
      let table = tables.get(version);
      if (table === undefined) {
        table = createTopK(capacity);
        tables.set(version, table);
      }
      table.offer(consumer, nowMs);
    },
    report(versions) {
      return [...new Set(versions)]
        .sort((a, b) => a - b)
        .map((version) => ({
          version,
          consumers: (tables.get(version)?.entries() ?? []).map(({ key, count, lastSeenMs }) => ({
            consumer: key,
            requests: count,
            last_seen: new Date(lastSeenMs).toISOString(),
          })),
        }));
    },
  };
}
