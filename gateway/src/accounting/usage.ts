import type { IncomingHttpHeaders } from 'node:http';
import type { Clock } from '@version-router/platform/clock';
import { consumerKey, createConsumerTable, type ConsumerTable } from './top-consumers.js';
import type { VersionAnswer } from '../versions/policy.js';
import { createTrafficRing, type TrafficRing } from './traffic.js';

/** What the admin port's `/` and `/consumers` read: kept in the process, since its start. */
export interface VersionUsage {
  /**
   * One answered request on a versioned resource; called once per response, on the request path. `keyed`: it
   * carried a valid API-Key, so its consumer is a registered one and not counted again among the anonymous.
   */
  record(answer: VersionAnswer, headers: IncomingHttpHeaders, keyed: boolean): void;
  readonly consumers: ConsumerTable;
  readonly traffic: TrafficRing;
  /** The requests that named no version (served by default_version): who changes when the default moves. */
  readonly unversioned: TrafficRing;
  /** The clock the counts were taken with. */
  readonly clock: Clock;
}

export function createVersionUsage(clock: Clock): VersionUsage {
  const consumers = createConsumerTable();
  const traffic = createTrafficRing();
  const unversioned = createTrafficRing();
  return {
    consumers,
    traffic,
    unversioned,
    clock,
    record(answer, headers, keyed) {
      const nowMs = clock();
      traffic.count(answer.version, nowMs);
      if (answer.selectedBy === 'default') unversioned.count(answer.version, nowMs);
      // Deprecated and removed versions (brownout and sunset 410s included): the anonymous consumers still to move.
      if (!keyed && answer.version !== null && answer.labels.deprecated === 'true')
        consumers.count(answer.version, consumerKey(headers), nowMs);
    },
  };
}
