import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Clock } from '@version-router/platform/clock';
import type { MigrationGuides } from '../changes/guides.js';
import type { NoticesConfig } from '../config.js';
import type { ConsumerUsageReader, RequestFieldsReader } from '../consumers/store.js';
import type { VersionPolicy } from '../versions/policy.js';
import type { NoticeChannel } from './channel.js';
import { createEmailChannel } from './email.js';
import type { Channel, NoticeResult } from './labels.js';
import type { NoticeKind } from './milestones.js';
import { createNoticeScheduler, type NoticeScheduler } from './scheduler.js';
import { createNoticeSender } from './sender.js';
import type { NoticeStore } from './store.js';
import { createWebhookChannel } from './webhook.js';

export interface NoticesOptions {
  store: NoticeStore;
  config: NoticesConfig;
  consumers: ConsumerUsageReader & RequestFieldsReader;
  guides: MigrationGuides;
  policy: () => VersionPolicy;
  clock: Clock;
  /** BACKEND_TIMEOUT_MS: composing a notice reads the migration guide's documents from the backend. */
  backendTimeoutMs: number;
  logger: Logger;
  count: (milestone: NoticeKind, channel: Channel, result: NoticeResult) => void;
}

/**
 * The deprecation notices of this replica: e-mail (with SMTP_URL) and webhooks, scheduled and delivered once
 * across the fleet (docs/runbook.md#deprecation-notices).
 */
export function createNotices({
  store,
  config,
  consumers,
  guides,
  policy,
  clock,
  backendTimeoutMs,
  logger,
  count,
}: NoticesOptions): NoticeScheduler {
  const channels: Partial<Record<Channel, NoticeChannel>> = {
    // The signature's timestamp is the wall clock's: receivers refuse one far from theirs.
    webhook: createWebhookChannel({ timeoutMs: config.sendTimeoutMs, clock: Date.now }),
    ...(config.email === undefined
      ? {}
      : { email: createEmailChannel({ ...config.email, timeoutMs: config.sendTimeoutMs }) }),
  };
  // Without it a consumer known only by e-mail hears nothing, and the page only shows fewer notified.
  if (config.email === undefined)
    logger.info(
      'e-mail notices are off: SMTP_URL is not set; webhooks still go out (docs/runbook.md#deprecation-notices)',
    );
  const sender = createNoticeSender({
    // Unique per process: a restarted replica (same host name, maybe the same pid) is another sender.
    sender: `${hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`,
    store,
    consumers,
    guides,
    policy,
    channels,
    clock,
    intervalMs: config.intervalMs,
    // A claim outlasts one notice's guide (read from the backend) and its delivery, with a delivery to spare.
    leaseMs: backendTimeoutMs + 2 * config.sendTimeoutMs,
    baseUrl: config.publicBaseUrl ?? '',
    logger,
    count,
  });
  return createNoticeScheduler({
    store,
    consumers,
    sender,
    policy,
    channels: Object.keys(channels) as Channel[],
    clock,
    intervalMs: config.intervalMs,
    logger,
    count,
  });
}
