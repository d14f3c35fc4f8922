import { dayOf, type ConsumerUsageReader, type Refused } from '../store.js';
import { countedFrom, countedOperations, doneWith, unversionedVersion } from './activity.js';

/**
 * "Active" is a use in the last 30 days: the operators' list counts requests from midnight UTC that many days
 * back (the ledger keeps days); the status page and the notices take the consumers last seen within it.
 */
export const ACTIVE_WINDOW_MS = 30 * 86_400_000;

/** One authenticated consumer of a version, as the operators see it. */
export interface VersionConsumer {
  id: string;
  name: string;
  /** How to reach it: the e-mail address and the webhook the notices use, when registered. */
  contact_email: string | null;
  webhook_url: string | null;
  /** The version its requests that name none are served with (null: none, default_version). */
  pinned_version: number | null;
  /** Its requests to the version since `requests_since`. */
  requests: number;
  /** Its last request to the version, ever. */
  last_seen: string;
  /**
   * It still calls the version: a call in the last 30 days, after its last move, that would still get the version
   * (activity.ts). The notices go to these.
   */
  active: boolean;
  /** Nothing of it is on the version any more: not active, and its requests naming no version get another one. */
  done: boolean;
}

/** A deprecation notice about the version that reached the consumer: which one, how, and when. */
export interface NoticeSent {
  milestone: string;
  /** The start of the brownout window a `brownout_in_48_hours` notice announced; null for the other milestones. */
  brownout_start: string | null;
  channel: string;
  sent_at: string;
}

/**
 * A notice delivered about a version, as the notice store reads it. Declared here, not imported: the notices
 * depend on the consumers, not the other way round.
 */
export interface DeliveredNotice {
  consumerId: string;
  milestone: string;
  /** The brownout window's start of a `brownout_in_48_hours` notice; '' for the other milestones. */
  occasion: string;
  channel: string;
  sentMs: number;
}

/** The operators' row of a consumer: who it is, how it called the version, and what it was told of it. */
export interface ReachedConsumer extends VersionConsumer {
  /** The notices about the version delivered to it, in the order they went out; none while only failed or pending. */
  notices_sent: NoticeSent[];
}

/** A registered consumer turned away from the version as closed to new consumers: no user of it. */
export interface RefusedConsumer {
  id: string;
  name: string;
  contact_email: string | null;
  webhook_url: string | null;
  pinned_version: number | null;
  /** Its refused requests to the version (all time) and the last one. */
  refused: Refused;
}

export interface ConsumersOfVersion {
  /** Midnight UTC starting the window the requests are counted in (the ledger keeps days). */
  requests_since: string;
  /** Most requests first, then by id. */
  consumers: VersionConsumer[];
  /** Consumers refused the version as closed to new ones, most refusals first, then by id; apart from its users. */
  refused: RefusedConsumer[];
}

/**
 * Every authenticated consumer of `version` across the fleet (read from the shared ledger, not this replica's
 * memory), with its requests in the last 30 days and its last call, and apart from them the consumers it refused
 * as closed to new consumers. One row per consumer is built here, for
 * `GET /versions/{n}/consumers` and the status page alike; the list adds the notices sent to each
 * (`withNoticesSent`).
 */
export async function versionConsumers(
  reader: ConsumerUsageReader,
  version: number,
  defaultVersion: number,
  nowMs: number,
): Promise<ConsumersOfVersion> {
  const sinceMs = Date.parse(dayOf(nowMs - ACTIVE_WINDOW_MS));
  const [rows, refused] = await Promise.all([reader.consumersOf(version, sinceMs), reader.refusedOf(version)]);
  return {
    requests_since: new Date(sinceMs).toISOString(),
    consumers: rows.map(({ consumer, pinned_at, requests, last_seen, operations }) => {
      const unversioned = unversionedVersion(consumer.pinned_version, defaultVersion);
      const from = countedFrom(nowMs - ACTIVE_WINDOW_MS, pinned_at);
      const counted = countedOperations(operations, version, unversioned, from).length;
      return {
        id: consumer.id,
        name: consumer.name,
        contact_email: consumer.contact_email,
        webhook_url: consumer.webhook_url,
        pinned_version: consumer.pinned_version,
        requests,
        last_seen,
        active: counted > 0,
        done: doneWith(version, unversioned, counted),
      };
    }),
    refused: refused.map(({ consumer, refused: counted }) => ({
      id: consumer.id,
      name: consumer.name,
      contact_email: consumer.contact_email,
      webhook_url: consumer.webhook_url,
      pinned_version: consumer.pinned_version,
      refused: counted,
    })),
  };
}

/**
 * Each consumer's row with the notices of `delivered` addressed to it (`delivered`: one version's, in the order they
 * went out).
 */
export function withNoticesSent(
  consumers: readonly VersionConsumer[],
  delivered: readonly DeliveredNotice[],
): ReachedConsumer[] {
  const byConsumer = new Map<string, NoticeSent[]>();
  for (const { consumerId, milestone, occasion, channel, sentMs } of delivered) {
    let sent = byConsumer.get(consumerId);
    if (sent === undefined) byConsumer.set(consumerId, (sent = []));
    sent.push({
      milestone,
      brownout_start: milestone === 'brownout_in_48_hours' ? occasion : null,
      channel,
      sent_at: new Date(sentMs).toISOString(),
    });
  }
  return consumers.map((consumer) => ({ ...consumer, notices_sent: byConsumer.get(consumer.id) ?? [] }));
}
