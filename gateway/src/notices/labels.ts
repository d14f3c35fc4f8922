/** How a consumer is told: an e-mail to its contact address, a signed POST to its webhook. */
export const CHANNELS = ['email', 'webhook'] as const;
export type Channel = (typeof CHANNELS)[number];

/** How a notice ended on a replica, as `consumer_notices_total` labels it. */
export const NOTICE_RESULTS = ['sent', 'resent', 'retried', 'failed', 'skipped'] as const;
export type NoticeResult = (typeof NOTICE_RESULTS)[number];
