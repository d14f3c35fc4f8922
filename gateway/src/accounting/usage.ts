import type { IncomingHttpHeaders } from 'node:http';
import type { Clock } from '@version-router/platform/clock';
import { consumerKey, createConsumerTable, type ConsumerTable } from './top-consumers.js';
import type { VersionAnswer } from '../versions/policy.js';
import { createTrafficRing, type TrafficRing } from './traffic.js';

/** What the admin port's `/` and `/consumers` read: kept in the process, since its start. */
export interface VersionUsage {
  /** One answered request on a versioned resource; called once per response, on the request path. */
  record(answer: VersionAnswer, headers: IncomingHttpHeaders): void;
  readonly consumers: ConsumerTable;
  readonly traffic: TrafficRing;
  /** The clock the counts were taken with. */
  readonly clock: Clock;
}

export function createVersionUsage(clock: Clock): VersionUsage {
  const consumers = createConsumerTable();
  const traffic = createTrafficRing();
  return {
    consumers,
    traffic,
    clock,
    record(answer, headers) {
      const nowMs = clock();
      traffic.count(answer.version, nowMs);
      // Deprecated and removed versions (brownout and sunset 410s included): the consumers still to move.
      if (answer.version !== null && answer.labels.deprecated === 'true') consumers.count(answer.version, consumerKey(headers), nowMs);
    },
  };
}
