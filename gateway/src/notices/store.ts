import { createHash } from 'node:crypto';
import type { Database } from '@version-router/platform/postgres';
import { noticeKeyText, type DueNotice, type NoticeKey } from './due.js';
import type { Channel } from './labels.js';
import type { NoticeKind } from './milestones.js';

/** A notice a sender holds the claim of, with what it needs to deliver it. */
export interface ClaimedNotice extends NoticeKey {
  /** The same on every attempt and every replica: the webhook's `webhook-id`, the e-mail's `Message-ID`. */
  messageId: string;
  /** Attempts made before this claim. */
  attempts: number;
  /** The first attempt (epoch ms); undefined before any. */
  firstAttemptMs: number | undefined;
  /** Deliveries a stopped sender left unrecorded: this notice may reach its consumer more than once. */
  unconfirmed: number;
  consumer: { name: string; contactEmail: string | null; webhookUrl: string | null; webhookSecret: string | null };
}

/** What became of an attempt (or of a claimed notice no longer worth sending). */
export type NoticeOutcome =
  | { status: 'sent' }
  | { status: 'pending'; nextAttemptMs: number; error: string }
  | { status: 'failed'; error: string }
  | { status: 'skipped'; error: string };

/** A notice that was given up, for the status page. */
export interface FailedNotice extends NoticeKey {
  attempts: number;
  lastError: string;
}

/** Who of a version's consumers has been told, and what went wrong. */
export interface VersionNotices {
  /** Consumers with at least one deprecation notice of the version sent (a pin moved to it is no such notice). */
  notified: Set<string>;
  /** Notices given up after 24 h of retries, newest first (at most 20). */
  failed: FailedNotice[];
  /** Sent notices a stopped sender may have sent before: the consumer may have had them twice (same id). */
  possiblyTwice: number;
}

/** A notice delivered to its consumer, for the operators' list of a version's consumers. */
export interface SentNotice {
  consumerId: string;
  milestone: NoticeKind;
  /** The brownout window's start (ISO 8601) of a `brownout_in_48_hours` notice; '' for the other milestones. */
  occasion: string;
  channel: Channel;
  sentMs: number;
}

/** The notices table (schema `gateway`), shared by every replica: what makes each notice go out once. */
export interface NoticeStore {
  /** The keys (noticeKeyText) of every notice recorded for these versions, whatever its status. */
  recorded(versions: readonly number[]): Promise<Set<string>>;
  /**
   * Records `send` as pending and `skip` as skipped; a notice already recorded (by any replica) stays as it is.
   * Answers the skipped ones this call recorded.
   */
  record(send: readonly DueNotice[], skip: readonly DueNotice[], nowMs: number): Promise<NoticeKey[]>;
  /**
   * Claims up to `limit` pending notices on these channels whose next attempt has come and whose claim (if any) has
   * lapsed.
   */
  claim(
    sender: string,
    channels: readonly Channel[],
    limit: number,
    nowMs: number,
    leaseMs: number,
  ): Promise<ClaimedNotice[]>;
  /** Starts an attempt and renews the claim, if `sender` still holds it; false: leave the notice alone. */
  begin(notice: NoticeKey, sender: string, nowMs: number, leaseMs: number): Promise<boolean>;
  /** Records the outcome and lets go of the claim; false: the claim was no longer this sender's, nothing recorded. */
  finish(notice: NoticeKey, sender: string, outcome: NoticeOutcome, nowMs: number): Promise<boolean>;
  /** The status page's figures for a version. */
  ofVersion(version: number): Promise<VersionNotices>;
  /** The notices of a version delivered so far (status `sent`), by consumer, then in the order they went out. */
  sentOf(version: number): Promise<SentNotice[]>;
}

/** The message id of a notice: derived from its key, so every replica and every retry names it alike. */
export function messageIdOf(key: NoticeKey): string {
  return `msg_${createHash('sha256').update(noticeKeyText(key)).digest('base64url').slice(0, 24)}`;
}

const at = (epochMs: number): string => new Date(epochMs).toISOString();
const KEY_MATCH = 'consumer_id = $1 AND version = $2 AND milestone = $3 AND occasion = $4 AND channel = $5';
const keyValues = ({ consumerId, version, milestone, occasion, channel }: NoticeKey): unknown[] => [
  consumerId,
  version,
  milestone,
  occasion,
  channel,
];

interface ClaimedRow {
  consumer_id: string;
  version: number;
  milestone: NoticeKind;
  occasion: string;
  channel: Channel;
  message_id: string;
  attempts: number;
  first_attempt_ms: number | null;
  unconfirmed: number;
  name: string;
  contact_email: string | null;
  webhook_url: string | null;
  webhook_secret: string | null;
}

export function createNoticeStore(database: Database): NoticeStore {
  return {
    async recorded(versions) {
      if (versions.length === 0) return new Set();
      const { rows } = await database.query<Omit<NoticeKey, 'consumerId'> & { consumer_id: string }>(
        'recorded_notices',
        'SELECT consumer_id, version, milestone, occasion, channel FROM gateway.notices WHERE version = ANY($1::int[])',
        [versions],
      );
      return new Set(rows.map(({ consumer_id: consumerId, ...key }) => noticeKeyText({ ...key, consumerId })));
    },

    async record(send, skip, nowMs) {
      const rows = [
        ...send.map((notice) => ({ notice, status: 'pending' })),
        ...skip.map((notice) => ({ notice, status: 'skipped' })),
      ];
      if (rows.length === 0) return [];
      const inserted = await database.query<{
        consumer_id: string;
        version: number;
        milestone: NoticeKind;
        occasion: string;
        channel: Channel;
        status: string;
      }>(
        'record_notices',
        `INSERT INTO gateway.notices (consumer_id, version, milestone, occasion, channel, message_id, status, ` +
          `due_at, recorded_at, next_attempt_at, last_error)
         SELECT r.consumer_id, r.version, r.milestone, r.occasion, r.channel, r.message_id, r.status, r.due_at, ` +
          `$8::timestamptz,
                CASE WHEN r.status = 'pending' THEN $8::timestamptz END, CASE WHEN r.status = 'skipped' THEN 'a ` +
          `later milestone was due' END
         FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], ` +
          `$9::timestamptz[])
              AS r (consumer_id, version, milestone, occasion, channel, message_id, status, due_at)
         ON CONFLICT DO NOTHING
         RETURNING consumer_id, version, milestone, occasion, channel, status`,
        [
          rows.map(({ notice }) => notice.consumerId),
          rows.map(({ notice }) => notice.version),
          rows.map(({ notice }) => notice.milestone),
          rows.map(({ notice }) => notice.occasion),
          rows.map(({ notice }) => notice.channel),
          rows.map(({ notice }) => messageIdOf(notice)),
          rows.map(({ status }) => status),
          at(nowMs),
          rows.map(({ notice }) => at(notice.dueAt)),
        ],
      );
      return inserted.rows
        .filter((row) => row.status === 'skipped')
        .map(({ consumer_id: consumerId, version, milestone, occasion, channel }) => ({
          consumerId,
          version,
          milestone,
          occasion,
          channel,
        }));
    },

    async claim(sender, channels, limit, nowMs, leaseMs) {
      // SKIP LOCKED: replicas claiming at the same moment take different rows instead of waiting for each other.
      const { rows } = await database.query<ClaimedRow>(
        'claim_notices',
        `WITH candidates AS (
           SELECT consumer_id, version, milestone, occasion, channel FROM gateway.notices
           WHERE status = 'pending' AND next_attempt_at <= $1::timestamptz AND channel = ANY($2::text[])
             AND (claimed_until IS NULL OR claimed_until <= $1::timestamptz)
           ORDER BY next_attempt_at, consumer_id, version, milestone, occasion, channel
           LIMIT $3
           FOR UPDATE SKIP LOCKED
         )
         UPDATE gateway.notices n
         SET claimed_by = $4, claimed_until = $5::timestamptz, sending = false, unconfirmed = n.unconfirmed + (CASE ` +
          `WHEN n.sending THEN 1 ELSE 0 END)
         FROM candidates c, gateway.consumers k
         WHERE n.consumer_id = c.consumer_id AND n.version = c.version AND n.milestone = c.milestone AND n.occasion ` +
          `= c.occasion AND n.channel = c.channel
           AND k.id = n.consumer_id
         RETURNING n.consumer_id, n.version, n.milestone, n.occasion, n.channel, n.message_id, n.attempts, ` +
          `n.unconfirmed,
                   (extract(epoch FROM n.first_attempt_at) * 1000)::float8 AS first_attempt_ms,
                   k.name, k.contact_email, k.webhook_url, k.webhook_secret`,
        [at(nowMs), channels, limit, sender, at(nowMs + leaseMs)],
      );
      return rows.map((row) => ({
        consumerId: row.consumer_id,
        version: row.version,
        milestone: row.milestone,
        occasion: row.occasion,
        channel: row.channel,
        messageId: row.message_id,
        attempts: row.attempts,
        firstAttemptMs: row.first_attempt_ms ?? undefined,
        unconfirmed: row.unconfirmed,
        consumer: {
          name: row.name,
          contactEmail: row.contact_email,
          webhookUrl: row.webhook_url,
          webhookSecret: row.webhook_secret,
        },
      }));
    },

    async begin(notice, sender, nowMs, leaseMs) {
      const { rowCount } = await database.query(
        'begin_notice',
        `UPDATE gateway.notices SET sending = true, attempts = attempts + 1, first_attempt_at = ` +
          `coalesce(first_attempt_at, $7::timestamptz), claimed_until = $8::timestamptz
         WHERE ${KEY_MATCH} AND status = 'pending' AND claimed_by = $6 AND claimed_until > $7::timestamptz`,
        [...keyValues(notice), sender, at(nowMs), at(nowMs + leaseMs)],
      );
      return rowCount === 1;
    },

    async finish(notice, sender, outcome, nowMs) {
      const { rowCount } = await database.query(
        'finish_notice',
        `UPDATE gateway.notices SET status = $7, sending = false, claimed_by = NULL, claimed_until = NULL,
           sent_at = CASE WHEN $7 = 'sent' THEN $8::timestamptz END, next_attempt_at = $9::timestamptz, last_error = $10
         WHERE ${KEY_MATCH} AND claimed_by = $6`,
        [
          ...keyValues(notice),
          sender,
          outcome.status,
          at(nowMs),
          outcome.status === 'pending' ? at(outcome.nextAttemptMs) : null,
          outcome.status === 'sent' ? null : outcome.error,
        ],
      );
      return rowCount === 1;
    },

    async ofVersion(version) {
      const notified = await database.query<{ consumer_id: string }>(
        'notified_consumers',
        "SELECT DISTINCT consumer_id FROM gateway.notices WHERE version = $1 AND status = 'sent' AND milestone <> " +
          "'pin_moved'",
        [version],
      );
      const failed = await database.query<{
        consumer_id: string;
        milestone: NoticeKind;
        occasion: string;
        channel: Channel;
        attempts: number;
        last_error: string | null;
      }>(
        'failed_notices',
        `SELECT consumer_id, milestone, occasion, channel, attempts, last_error FROM gateway.notices
         WHERE version = $1 AND status = 'failed' ORDER BY first_attempt_at DESC, consumer_id LIMIT 20`,
        [version],
      );
      const twice = await database.query<{ count: string }>(
        'possibly_twice',
        "SELECT count(*) AS count FROM gateway.notices WHERE version = $1 AND status = 'sent' AND unconfirmed > 0",
        [version],
      );
      return {
        notified: new Set(notified.rows.map((row) => row.consumer_id)),
        failed: failed.rows.map((row) => ({
          consumerId: row.consumer_id,
          version,
          milestone: row.milestone,
          occasion: row.occasion,
          channel: row.channel,
          attempts: row.attempts,
          lastError: row.last_error ?? '',
        })),
        possiblyTwice: Number(twice.rows[0]?.count ?? 0),
      };
    },

    async sentOf(version) {
      const { rows } = await database.query<{
        consumer_id: string;
        milestone: NoticeKind;
        occasion: string;
        channel: Channel;
        sent_ms: number;
      }>(
        'sent_notices',
        `SELECT consumer_id, milestone, occasion, channel, (extract(epoch FROM sent_at) * 1000)::float8 AS sent_ms ` +
          `FROM gateway.notices
         WHERE version = $1 AND status = 'sent' ORDER BY consumer_id, sent_at, milestone, occasion, channel`,
        [version],
      );
      return rows.map((row) => ({
        consumerId: row.consumer_id,
        milestone: row.milestone,
        occasion: row.occasion,
        channel: row.channel,
        sentMs: row.sent_ms,
      }));
    },
  };
}
