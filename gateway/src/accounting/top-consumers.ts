import type { IncomingHttpHeaders } from 'node:http';
import { createTopK, type TopK } from './top-k.js';

/** Consumers kept per version: memory stays bounded whatever keys clients send. */
const CONSUMERS_PER_VERSION = 100;
/** Consumers per version with a metric series of their own; the rest share `OTHER_CONSUMERS`. */
const NAMED_SERIES_PER_VERSION = 20;
/** The series of every consumer of a version beyond the named ones (and of one that calls itself "other"). */
const OTHER_CONSUMERS = 'other';
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
  const key =
    typeof clientId === 'string' && clientId !== ''
      ? clientId
      : userAgent !== undefined && userAgent !== ''
        ? userAgent
        : UNKNOWN_CONSUMER;
  return key.length > CONSUMER_KEY_LENGTH ? key.slice(0, CONSUMER_KEY_LENGTH) : key;
}

/** One consumer as `GET /consumers` shows it. */
interface ConsumerRow {
  consumer: string;
  requests: number;
  /** RFC 3339 UTC with milliseconds. */
  last_seen: string;
}

/** One series of `api_version_consumer_requests_total`. */
interface ConsumerSeries {
  version: number;
  consumer: string;
  requests: number;
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
  /**
   * Every version's metric series, read at each scrape: at most 20 named consumers and `other`
   * (docs/replicas.md#consumer-series).
   */
  series(): ConsumerSeries[];
}

/**
 * The counts behind `api_version_consumer_requests_total`, which Prometheus sums across replicas, so a
 * series must never go down while it exists. They cannot be read off the top-k table, where a newcomer
 * takes over the least-counted key's counter (a count would come back lower). Instead up to 20 consumers
 * of a version hold a name and a count of their requests since they got it, and every other request
 * counts in `other`: bounded whatever clients send, and the series of a version add up to its counted
 * requests. The first 20 consumers get the names; at each scrape a consumer that the top-k table shows
 * with at least twice the requests of the weakest named one (and at least 2) takes that name's place:
 * the weakest one's series ends and its count moves into `other`, and the newcomer's series starts at 0.
 * So the names follow the heavy consumers, and change seldom (docs/replicas.md#consumer-series).
 */
interface NamedCounts {
  named: Map<string, number>;
  other: number;
}

/** How many times the weakest named consumer's requests a consumer needs (guaranteed) to take its name. */
const PROMOTION_FACTOR = 2;

function countNamed(counts: NamedCounts, consumer: string): void {
  const requests = counts.named.get(consumer);
  if (requests !== undefined) counts.named.set(consumer, requests + 1);
  else if (counts.named.size < NAMED_SERIES_PER_VERSION && consumer !== OTHER_CONSUMERS) counts.named.set(consumer, 1);
  else counts.other += 1;
}

/**
 * Gives the heaviest consumers without a name the names of the weakest named ones, by the rule above. A
 * candidate counts only its guaranteed requests (the table's count less what it may have inherited), a
 * named consumer its table count (0 once the table dropped it), so no name moves on an estimate.
 */
function promoteHeavyConsumers(counts: NamedCounts, table: TopK): void {
  const entries = table.entries();
  const tableCount = new Map(entries.map(({ key, count }) => [key, count]));
  for (const { key, count, overestimate } of entries) {
    if (key === OTHER_CONSUMERS || counts.named.has(key)) continue;
    let weakest: string | undefined;
    let weakestCount = Infinity;
    for (const name of counts.named.keys()) {
      const named = tableCount.get(name) ?? 0;
      if (named < weakestCount) [weakest, weakestCount] = [name, named];
    }
    if (weakest === undefined || count - overestimate < PROMOTION_FACTOR * Math.max(weakestCount, 1)) continue;
    counts.other += counts.named.get(weakest) ?? 0;
    counts.named.delete(weakest);
    counts.named.set(key, 0);
  }
}

/** The top consumers since start, one Space-Saving table (top-k.ts) per version. */
export function createConsumerTable(capacity = CONSUMERS_PER_VERSION): ConsumerTable {
  const tables = new Map<number, TopK>();
  const namedCounts = new Map<number, NamedCounts>();
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
      let counts = namedCounts.get(version);
      if (counts === undefined) {
        counts = { named: new Map(), other: 0 };
        namedCounts.set(version, counts);
      }
      countNamed(counts, consumer);
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
    series() {
      const rows: ConsumerSeries[] = [];
      for (const [version, counts] of namedCounts) {
        const table = tables.get(version);
        if (table !== undefined) promoteHeavyConsumers(counts, table);
        const { named, other } = counts;
        for (const [consumer, requests] of named) rows.push({ version, consumer, requests });
        if (other > 0) rows.push({ version, consumer: OTHER_CONSUMERS, requests: other });
      }
      return rows;
    },
  };
}
