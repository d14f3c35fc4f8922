import type { Logger } from 'pino';
import type { Clock } from '@version-router/platform/clock';
import type { ConsumerRecord, ConsumerUsageReader, PinRecord } from '../consumers/store.js';
import type { VersionPolicy } from '../versions/policy.js';
import { ACTIVE_WINDOW_MS } from '../consumers/reports/version-consumers.js';
import { lastCountedCall, unversionedVersion } from '../consumers/reports/activity.js';
import { dueNotices, versionsWithNotices, type Recipient } from './due.js';
import type { Channel, NoticeResult } from './labels.js';
import type { NoticeSender } from './sender.js';
import type { NoticeKind } from './milestones.js';
import type { NoticeStore } from './store.js';

export interface NoticeSchedulerOptions {
  store: NoticeStore;
  consumers: ConsumerUsageReader;
  sender: NoticeSender;
  policy: () => VersionPolicy;
  /** The channels this replica can send on (e-mail only with SMTP_URL): no notice is recorded for the others. */
  channels: readonly Channel[];
  clock: Clock;
  /** NOTICES_INTERVAL_MS. */
  intervalMs: number;
  logger: Logger;
  count: (milestone: NoticeKind, channel: Channel, result: NoticeResult) => void;
}

export interface NoticeScheduler {
  /** Checks at once and then every interval. */
  start(): void;
  /** A check now (the policy changed); one already running is followed by another. Resolves when checks are done. */
  check(): Promise<void>;
  /** No more checks; resolves when the one running has stopped (after the notice it is delivering). */
  stop(): Promise<void>;
  /**
   * Records the notice of a pin the platform team moved (`moved`, the pin after the move), on each channel the
   * consumer has, once across the fleet (the move's instant is its occasion), and starts a check to send it.
   */
  pinMoved(consumer: ConsumerRecord, moved: PinRecord): Promise<void>;
}

/**
 * When due notices are looked for: at start, on every policy change and every NOTICES_INTERVAL_MS, never on a
 * request's path. A check records the notices that came due (every replica may; the store keeps one of each),
 * then delivers what this replica can claim. One check runs at a time; a store that cannot be reached is logged
 * once per outage and tried again at the next check.
 */
export function createNoticeScheduler(options: NoticeSchedulerOptions): NoticeScheduler {
  const { store, consumers, clock, logger } = options;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  let failing = false;
  let timer: NodeJS.Timeout | undefined;

  const channelsOf = (consumer: ConsumerRecord): Channel[] =>
    options.channels.filter((channel) =>
      channel === 'email' ? consumer.contact_email !== null : consumer.webhook_url !== null,
    );

  const recordDue = async (): Promise<void> => {
    const policy = options.policy();
    const nowMs = clock();
    const versions = versionsWithNotices(policy, nowMs);
    if (versions.length === 0) return;
    const recipients = new Map<number, Recipient[]>();
    const defaultVersion = policy.defaultAt(nowMs);
    for (const version of versions) {
      const rows = await consumers.consumersOf(version, nowMs - ACTIVE_WINDOW_MS);
      recipients.set(
        version,
        rows.map(({ consumer, pinned_at, operations }) => ({
          consumerId: consumer.id,
          lastSeenMs: lastCountedCall(
            operations,
            version,
            unversionedVersion(consumer.pinned_version, defaultVersion),
            pinned_at,
          ),
          channels: channelsOf(consumer),
        })),
      );
    }
    const { send, skip } = dueNotices(policy, nowMs, recipients, await store.recorded(versions));
    const skipped = await store.record(send, skip, nowMs);
    for (const notice of skipped) options.count(notice.milestone, notice.channel, 'skipped');
  };

  const checkOnce = async (): Promise<void> => {
    try {
      await recordDue();
      await options.sender.sendDue(() => stopped);
      if (failing) logger.info('notices: the consumer store is reachable again');
      failing = false;
    } catch (err) {
      if (!failing)
        logger.warn(
          { reason: err instanceof Error ? err.message : String(err) },
          'notices: check failed; trying again at the next one',
        );
      failing = true;
    }
  };

  const check = (): Promise<void> => {
    if (stopped) return running ?? Promise.resolve();
    if (running !== undefined) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await checkOnce();
      } while (again && !stopped);
    })().finally(() => (running = undefined));
    return running;
  };

  return {
    start() {
      void check();
      timer = setInterval(() => void check(), options.intervalMs);
      timer.unref();
    },
    check,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
    async pinMoved(consumer, moved) {
      const { pinned_version: version, pinned_at: occasion } = moved;
      if (version === null || occasion === null) return;
      const nowMs = clock();
      const notices = channelsOf(consumer).map((channel) => ({
        consumerId: consumer.id,
        version,
        milestone: 'pin_moved' as const,
        occasion,
        channel,
        dueAt: nowMs,
      }));
      await store.record(notices, [], nowMs);
      void check();
    },
  };
}
