import type { Logger } from 'pino';
import type { Clock } from '@version-router/platform/clock';
import type { MigrationGuides } from '../changes/guides.js';
import { consumerReports } from '../consumers/reports/model.js';
import { upgradePreview } from '../consumers/preview/model.js';
import { ROLLBACK_WINDOW_MS } from '../consumers/pins.js';
import type { ConsumerUsageReader, PinRecord, RequestFieldsReader } from '../consumers/store.js';
import { CHANGELOG_PATH } from '../versions/discovery.js';
import { changesPath } from '../versions/policy.js';
import type { VersionEntry } from '../versions/policy-file.js';
import type { VersionPolicy } from '../versions/policy.js';
import type { NoticeChannel } from './channel.js';
import { ACTIVE_WINDOW_MS } from '../consumers/reports/version-consumers.js';
import { currentMilestone } from './due.js';
import type { Channel, NoticeResult } from './labels.js';
import { noticeMessage, type NoticeMessage, type PinMovedData } from './message.js';
import { milestonesOf, type NoticeKind } from './milestones.js';
import { nextAttemptAt } from './retry.js';
import type { ClaimedNotice, NoticeOutcome, NoticeStore } from './store.js';

/** Notices claimed by one statement: nothing more is held in memory. */
const BATCH_SIZE = 10;
/** Batches one check works through at most; the rest waits for the next check. */
const MAX_BATCHES_PER_CHECK = 100;

export interface NoticeSenderOptions {
  /** This replica's name in the claims (unique per process). */
  sender: string;
  store: NoticeStore;
  consumers: ConsumerUsageReader & RequestFieldsReader;
  guides: MigrationGuides;
  policy: () => VersionPolicy;
  channels: Partial<Record<Channel, NoticeChannel>>;
  clock: Clock;
  /** NOTICES_INTERVAL_MS: the first wait before a retry (none can come sooner than the next check). */
  intervalMs: number;
  /** How long a claim lasts: more than one notice's composing and delivery can take. */
  leaseMs: number;
  /** PUBLIC_BASE_URL, or '' for links that are paths on the API. */
  baseUrl: string;
  logger: Logger;
  count: (milestone: NoticeKind, channel: Channel, result: NoticeResult) => void;
}

export interface NoticeSender {
  /** Claims and delivers due notices a batch at a time until none is left (or `stopping()` says so). */
  sendDue(stopping: () => boolean): Promise<void>;
}

const reasonOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * Delivers the notices this replica claims, one after the other: each is started in the store (its claim renewed)
 * before it is sent and its outcome recorded after, so a replica that stops mid-batch leaves the rest to be
 * claimed again when its lease lapses, and a delivery that may have happened is known. A notice whose milestone
 * is no longer the one due (a later one came, its brownout window ended) is skipped, never sent late.
 */
export function createNoticeSender(options: NoticeSenderOptions): NoticeSender {
  const { sender, store, channels, clock, logger, count } = options;
  const available = (Object.keys(channels) as Channel[]).filter((channel) => channels[channel] !== undefined);

  /** A notice no longer worth sending, recorded as skipped with why. */
  const skip = async (notice: ClaimedNotice, error: string, nowMs: number): Promise<void> => {
    if (await store.finish(notice, sender, { status: 'skipped', error }, nowMs))
      count(notice.milestone, notice.channel, 'skipped');
  };

  /**
   * A deprecation milestone's message from the consumer's report of the version: what it still calls on it (30 days
   * back, or since its last pin move; at the announcement, since ever), or undefined when it is done with the
   * version (it moved after the notice was recorded).
   */
  const composeMilestone = async (
    notice: ClaimedNotice,
    entry: VersionEntry & { sunset: number },
    policy: VersionPolicy,
    nowMs: number,
  ): Promise<NoticeMessage | undefined> => {
    const reports = await consumerReports({
      consumerId: notice.consumerId,
      reader: options.consumers,
      guides: options.guides,
      policy,
      nowMs,
      sinceMs: notice.milestone === 'announced' ? undefined : nowMs - ACTIVE_WINDOW_MS,
      requestId: `notice-${notice.messageId}`,
    });
    if (!reports.ok) throw new Error(`the migration guide could not be read: ${reports.reason}`);
    const report = reports.versions.find((version) => version.version === entry.version);
    if (report === undefined || report.done) return undefined;
    // What moving on would do to its calls: told when it can be judged, never a reason to hold the notice back.
    const previewed =
      entry.successor === undefined || nowMs >= entry.sunset
        ? undefined
        : await upgradePreview({
            consumerId: notice.consumerId,
            reader: options.consumers,
            guides: options.guides,
            policy,
            from: entry.version,
            to: entry.successor,
            nowMs,
            requestId: `notice-${notice.messageId}`,
          });
    return noticeMessage({
      notice,
      entry,
      report,
      pinnedVersion: reports.pinnedVersion,
      ...(previewed?.ok === true ? { preview: previewed.preview } : {}),
      countedFromMs: reports.countedFromMs,
      nowMs,
      baseUrl: options.baseUrl,
    });
  };

  /** A pin-moved notice's message from the pin as it is now (`pin`: its move is the notice's occasion). */
  const composePinMoved = (notice: ClaimedNotice, pin: PinRecord & { pinned_at: string }): NoticeMessage => {
    const policy = options.policy();
    const left = policy.versions.find(({ version }) => version === pin.previous_version);
    const guide = left?.successor === notice.version ? `${options.baseUrl}${changesPath(left.version)}` : null;
    const data: PinMovedData = {
      consumer: { id: notice.consumerId, name: notice.consumer.name },
      milestone: 'pin_moved',
      pinned_version: notice.version,
      previous_version: pin.previous_version,
      pinned_at: pin.pinned_at,
      rollback_until:
        pin.previous_version === null ? null : new Date(Date.parse(pin.pinned_at) + ROLLBACK_WINDOW_MS).toISOString(),
      links: {
        consumer: `${options.baseUrl}/consumer`,
        migration_guide: guide,
        changelog: `${options.baseUrl}${CHANGELOG_PATH}`,
      },
    };
    return { id: notice.messageId, type: 'pin.moved', data };
  };

  /**
   * What to send for a claimed notice, or why it is skipped: a milestone no longer the one due (a later one came,
   * its brownout window ended) or of a consumer done with the version; a pin move superseded by a later change.
   */
  const prepare = async (
    notice: ClaimedNotice,
    nowMs: number,
  ): Promise<{ skip: string } | { compose: () => Promise<NoticeMessage | undefined> }> => {
    if (notice.milestone === 'pin_moved') {
      const pin = await options.consumers.pinOf(notice.consumerId);
      if (pin?.pinned_at !== notice.occasion || pin.pinned_at === null)
        return { skip: 'superseded by a later change of the pin' };
      const moved = { ...pin, pinned_at: pin.pinned_at };
      return { compose: async () => composePinMoved(notice, moved) };
    }
    const policy = options.policy();
    const entry = policy.versions.find(({ version }) => version === notice.version);
    const current = entry === undefined ? undefined : currentMilestone(milestonesOf(entry), nowMs);
    if (entry?.sunset === undefined || current?.name !== notice.milestone || current.occasion !== notice.occasion)
      return {
        skip: current === undefined ? 'no milestone of the version is due any more' : `superseded by ${current.name}`,
      };
    const dated = { ...entry, sunset: entry.sunset };
    return { compose: () => composeMilestone(notice, dated, policy, nowMs) };
  };

  const deliverOne = async (notice: ClaimedNotice): Promise<void> => {
    const nowMs = clock();
    const prepared = await prepare(notice, nowMs);
    if ('skip' in prepared) return skip(notice, prepared.skip, nowMs);
    if (!(await store.begin(notice, sender, nowMs, options.leaseMs))) return;
    let outcome: NoticeOutcome;
    try {
      const message = await prepared.compose();
      if (message === undefined) {
        outcome = { status: 'skipped', error: 'the consumer is done with the version (it moved off it)' };
      } else {
        await (channels[notice.channel] as NoticeChannel).deliver(message, notice);
        outcome = { status: 'sent' };
      }
    } catch (err) {
      const error = reasonOf(err);
      const next = nextAttemptAt(notice.attempts + 1, notice.firstAttemptMs ?? nowMs, clock(), options.intervalMs);
      outcome = next === undefined ? { status: 'failed', error } : { status: 'pending', nextAttemptMs: next, error };
    }
    const recorded = await store.finish(notice, sender, outcome, clock());
    const result: NoticeResult =
      outcome.status === 'sent'
        ? notice.unconfirmed > 0
          ? 'resent'
          : 'sent'
        : outcome.status === 'pending'
          ? 'retried'
          : outcome.status;
    count(notice.milestone, notice.channel, result);
    const about = {
      consumer: notice.consumerId,
      version: notice.version,
      milestone: notice.milestone,
      channel: notice.channel,
      id: notice.messageId,
    };
    if (!recorded) logger.warn(about, 'notice claim lapsed during its delivery; another replica may deliver it again');
    if (outcome.status === 'sent') logger.info({ ...about, possiblyTwice: notice.unconfirmed > 0 }, 'notice sent');
    else if (outcome.status === 'skipped') logger.info({ ...about, reason: outcome.error }, 'notice skipped');
    else if (outcome.status === 'pending')
      logger.warn(
        { ...about, reason: outcome.error, retryAt: new Date(outcome.nextAttemptMs).toISOString() },
        'notice not delivered; retrying later',
      );
    else logger.error({ ...about, reason: outcome.error }, 'notice not delivered for 24 h; given up');
  };

  return {
    async sendDue(stopping) {
      if (available.length === 0) return;
      for (let batch = 0; batch < MAX_BATCHES_PER_CHECK; batch++) {
        const claimed = await store.claim(sender, available, BATCH_SIZE, clock(), options.leaseMs);
        if (claimed.length === 0) return;
        for (const notice of claimed) {
          if (stopping()) return;
          await deliverOne(notice);
        }
      }
    },
  };
}
