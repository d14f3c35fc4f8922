import { dayOf, type ConsumerUsageReader } from '../store/consumer-store.js';

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
  /** Its requests to the version since `requests_since`. */
  requests: number;
  /** Its last request to the version, ever. */
  last_seen: string;
}

export interface ConsumersOfVersion {
  /** Midnight UTC starting the window the requests are counted in (the ledger keeps days). */
  requests_since: string;
  /** Most requests first, then by id. */
  consumers: VersionConsumer[];
}

/**
 * Every authenticated consumer of `version` across the fleet (read from the shared ledger, not this replica's
 * memory), with its requests in the last 30 days and its last call. One row per consumer is built here, for
 * `GET /versions/{n}/consumers` and the status page alike, so what a notice adds to a consumer's row (the
 * notices sent to it) is added once.
 */
export async function versionConsumers(reader: ConsumerUsageReader, version: number, nowMs: number): Promise<ConsumersOfVersion> {
  const sinceMs = Date.parse(dayOf(nowMs - ACTIVE_WINDOW_MS));
  const rows = await reader.consumersOf(version, sinceMs);
  return {
    requests_since: new Date(sinceMs).toISOString(),
    consumers: rows.map(({ consumer, requests, last_seen }) => ({
      id: consumer.id,
      name: consumer.name,
      contact_email: consumer.contact_email,
      webhook_url: consumer.webhook_url,
      requests,
      last_seen,
    })),
  };
}
