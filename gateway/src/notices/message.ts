import type { GuideChange } from '../changes/guide.js';
import type { VersionReport } from '../consumers/reports/model.js';
import { CHANGELOG_PATH } from '../versions/discovery.js';
import { keysRequiredFrom, type VersionEntry } from '../versions/policy-file.js';
import { dayCount, daysLeft } from '../versions/days-left.js';
import { readableInstant } from '../versions/readable-instant.js';
import type { ClaimedNotice } from './store.js';

/** Where a consumer reads, with its key, everything it still calls on deprecated versions. */
const DEPRECATIONS_PATH = '/deprecations';

/** What a notice says, the same on both channels: the webhook's `data`, the e-mail's text. */
export interface NoticeData {
  consumer: { id: string; name: string };
  milestone: ClaimedNotice['milestone'];
  version: number;
  phase: VersionReport['phase'];
  /** RFC 3339. */
  sunset: string;
  /** Whole days until the sunset, rounded up; 0 once it has passed. */
  days_left: number;
  successor: number | null;
  /** While the version does not require an API key yet: when it will (RFC 3339), else null. */
  api_key_required_from: string | null;
  /** The window a `brownout_in_48_hours` notice announces, RFC 3339; null for the other milestones. */
  brownout: { start: string; end: string } | null;
  /** The consumer's own operations on the version: requests in the last 30 days, last call, what breaks for it. */
  operations: {
    operation: string;
    /** The call as the consumer made it, and what it sends for the successor in that form (as GET /deprecations). */
    call: string;
    instead: string | null;
    requests_30_days: number;
    last_seen: string;
    breaking_changes: GuideChange[];
  }[];
  links: { migration_guide: string; deprecations: string; changelog: string };
}

export interface NoticeMessage {
  /** The notice's stable id: `webhook-id`, and the e-mail's Message-ID. */
  id: string;
  /** `version.<milestone>`. */
  type: string;
  data: NoticeData;
}

export interface MessageInput {
  notice: ClaimedNotice;
  entry: VersionEntry & { sunset: number };
  /** The consumer's report of the version over all time (every operation it ever called on it). */
  report: VersionReport | undefined;
  /** Its requests per operation in the last 30 days. */
  recentRequests: ReadonlyMap<string, number>;
  nowMs: number;
  /** PUBLIC_BASE_URL, or '' for links that are paths on the API. */
  baseUrl: string;
}

/** One notice's message, from the consumer's report of the version (what it calls, what breaks for it). */
export function noticeMessage({ notice, entry, report, recentRequests, nowMs, baseUrl }: MessageInput): NoticeMessage {
  const keysFrom = keysRequiredFrom(entry);
  const window =
    notice.milestone === 'brownout_in_48_hours'
      ? entry.brownouts?.find(({ start }) => new Date(start).toISOString() === notice.occasion)
      : undefined;
  return {
    id: notice.messageId,
    type: `version.${notice.milestone}`,
    data: {
      consumer: { id: notice.consumerId, name: notice.consumer.name },
      milestone: notice.milestone,
      version: entry.version,
      phase: nowMs >= entry.sunset ? 'removed' : 'deprecated',
      sunset: new Date(entry.sunset).toISOString(),
      days_left: daysLeft(entry.sunset, nowMs),
      successor: entry.successor ?? null,
      api_key_required_from: keysFrom !== undefined && keysFrom > nowMs ? new Date(keysFrom).toISOString() : null,
      brownout:
        window === undefined
          ? null
          : { start: new Date(window.start).toISOString(), end: new Date(window.end).toISOString() },
      operations: (report?.operations ?? []).map(({ operation, call, instead, last_seen, breaking_changes }) => ({
        operation,
        call,
        instead,
        requests_30_days: recentRequests.get(call) ?? 0,
        last_seen,
        breaking_changes,
      })),
      links: {
        migration_guide: `${baseUrl}${report?.changes ?? `/versions/${entry.version}/changes`}`,
        deprecations: `${baseUrl}${DEPRECATIONS_PATH}`,
        changelog: `${baseUrl}${CHANGELOG_PATH}`,
      },
    },
  };
}

/** The e-mail's subject: the version, the milestone in words, the date. */
export function subjectOf({ milestone, version, sunset, days_left: days, brownout }: NoticeData): string {
  const on = readableInstant(Date.parse(sunset));
  switch (milestone) {
    case 'announced':
      return `API v${version} is deprecated: it will be removed on ${on}`;
    case 'brownout_in_48_hours':
      return `API v${version} brownout on ${
        brownout === null ? 'its next ' + 'window' : readableInstant(Date.parse(brownout.start))
      }: removal on ${on}`;
    case 'removed':
      return `API v${version} was removed on ${on}`;
    default:
      return `API v${version} will be removed in ${dayCount(days)}, on ${on}`;
  }
}

/** The e-mail's plain text: everything the webhook's data says, for a person. */
export function textOf(data: NoticeData): string {
  const on = readableInstant(Date.parse(data.sunset));
  const lines = [`Hello ${data.consumer.name},`, ''];
  if (data.phase === 'removed')
    lines.push(`Version ${data.version} of the API was removed on ${on}: its requests are answered 410 Gone.`);
  else
    lines.push(
      `Version ${data.version} of the API is deprecated. It will be removed on ${on}, in ${dayCount(data.days_left)}.`,
    );
  if (data.successor !== null) lines.push(`Its successor is version ${data.successor}.`);
  if (data.api_key_required_from !== null) {
    lines.push(
      `From ${readableInstant(Date.parse(data.api_key_required_from))}, v${data.version} answers only requests that ` +
        `carry an API key: send yours on every request.`,
    );
  }
  if (data.brownout !== null) {
    lines.push(
      '',
      `Brownout: from ${readableInstant(Date.parse(data.brownout.start))} to ` +
        `${readableInstant(Date.parse(data.brownout.end))}, v${data.version} answers every request with 410, as it ` +
        `will after its removal.`,
    );
  }
  lines.push('', `What you call on v${data.version}, with your requests in the last 30 days:`);
  if (data.operations.length === 0) lines.push('  (no calls recorded)');
  for (const operation of data.operations) {
    const requests = `${operation.requests_30_days} ${operation.requests_30_days === 1 ? 'request' : 'requests'}`;
    lines.push(`- ${operation.call}: ${requests}, last on ${readableInstant(Date.parse(operation.last_seen))}`);
    if (operation.instead !== null) lines.push(`    send instead: ${operation.instead}`);
    if (operation.breaking_changes.length === 0) lines.push('    nothing in it breaks in the successor');
    else for (const change of operation.breaking_changes) lines.push(`    breaking: ${change.description}`);
  }
  lines.push(
    '',
    `The migration guide: ${data.links.migration_guide}`,
    `Everything you still call on deprecated versions (with your API key): ${data.links.deprecations}`,
    `The changelog: ${data.links.changelog}`,
    '',
  );
  return lines.join('\n');
}
