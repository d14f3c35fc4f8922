import type { GuideChange } from '../changes/guide.js';
import { changeText, withDescription } from '../changes/sentence.js';
import type { VersionReport } from '../consumers/reports/model.js';
import type { UpgradePreview, Verdict } from '../consumers/preview/model.js';
import { CHANGELOG_PATH } from '../versions/discovery.js';
import { keysRequiredFrom, type VersionEntry } from '../versions/policy-file.js';
import { dayCount, daysLeft } from '../versions/days-left.js';
import { readableInstant } from '../versions/readable-instant.js';
import type { ClaimedNotice } from './store.js';
import type { MilestoneName } from './milestones.js';

/** Where a consumer reads, with its key, everything it still calls on deprecated versions. */
const DEPRECATIONS_PATH = '/deprecations';
/** Where it reads, with its key, what a move would change for its calls. */
const UPGRADE_PREVIEW_PATH = '/consumer/upgrade-preview';

/** A breaking change as a notice says it: the guide's entry, and in plain text what it does to the fields. */
export type NoticeChange = GuideChange & {
  /** `user_id is now customer_id`, `total is now total_cents (x100)`: the fields by name (the description apart). */
  summary: string;
};

/** What a deprecation notice says, the same on both channels: the webhook's `data`, the e-mail's text. */
export interface NoticeData {
  consumer: { id: string; name: string };
  milestone: MilestoneName;
  version: number;
  phase: VersionReport['phase'];
  /** RFC 3339. */
  sunset: string;
  /** Whole days until the sunset, rounded up; 0 once it has passed. */
  days_left: number;
  successor: number | null;
  /** The consumer's pin: what its requests that name no version get (null: none, default_version). */
  pinned_version: number | null;
  /** While the version does not require an API key yet: when it will (RFC 3339), else null. */
  api_key_required_from: string | null;
  /** The window a `brownout_in_48_hours` notice announces, RFC 3339; null for the other milestones. */
  brownout: { start: string; end: string } | null;
  /** Every brownout window of the version that has not ended, in order (RFC 3339): each notice lists them all. */
  brownouts: { start: string; end: string }[];
  /** From when the operations' requests are counted (RFC 3339): 30 days back, or its last pin move when later. */
  requests_since: string | null;
  /**
   * The consumer's own operations on the version that it still calls: requests since `requests_since`, last call,
   * what breaks for it.
   */
  operations: {
    operation: string;
    /** The call as the consumer made it, and what it sends for the successor in that form (as GET /deprecations). */
    call: string;
    instead: string | null;
    /** Its requests since `requests_since` (the name is the window's default). */
    requests_30_days: number;
    last_seen: string;
    breaking_changes: NoticeChange[];
  }[];
  /**
   * What moving to the successor would do to the calls the consumer made (its upgrade preview,
   * docs/consumers.md#upgrade-preview); null without a successor, or when it could not be judged.
   */
  move: {
    to: number;
    verdict: Verdict;
    /** The breaking changes that touch its calls, as `GET /v1/orders/{id}: user_id is now customer_id`. */
    changes: string[];
    /** Its calls of operations the successor does not have. */
    blocking: string[];
    /** Where it reads the whole preview with its key. */
    preview: string;
  } | null;
  links: { migration_guide: string; deprecations: string; changelog: string };
}

/** What a notice of a pin the platform team moved says (docs/consumers.md#pins): from where, to where, until when back. */
export interface PinMovedData {
  consumer: { id: string; name: string };
  milestone: 'pin_moved';
  pinned_version: number;
  previous_version: number | null;
  /** When it moved (RFC 3339), and until when the consumer can roll it back itself (null: nothing to roll back). */
  pinned_at: string;
  rollback_until: string | null;
  links: { consumer: string; migration_guide: string | null; changelog: string };
}

export interface NoticeMessage {
  /** The notice's stable id: `webhook-id`, and the e-mail's Message-ID. */
  id: string;
  /** `version.<milestone>`, or `pin.moved`. */
  type: string;
  data: NoticeData | PinMovedData;
}

export interface MessageInput {
  notice: ClaimedNotice;
  entry: VersionEntry & { sunset: number };
  /** The consumer's report of the version: what it still calls on it (consumers/reports/model.ts). */
  report: VersionReport | undefined;
  /** Its pin, and from when the report counted its calls (epoch ms; -Infinity: all of them). */
  pinnedVersion: number | null;
  /** Its upgrade preview to the successor; undefined when there is none. */
  preview?: UpgradePreview;
  countedFromMs: number;
  nowMs: number;
  /** PUBLIC_BASE_URL, or '' for links that are paths on the API. */
  baseUrl: string;
}

const iso = (epochMs: number): string => new Date(epochMs).toISOString();

/** One deprecation notice's message, from the consumer's report of the version (what it calls, what breaks for it). */
export function noticeMessage({
  notice,
  entry,
  report,
  pinnedVersion,
  preview,
  countedFromMs,
  nowMs,
  baseUrl,
}: MessageInput): NoticeMessage & { data: NoticeData } {
  const keysFrom = keysRequiredFrom(entry);
  const window =
    notice.milestone === 'brownout_in_48_hours'
      ? entry.brownouts?.find(({ start }) => iso(start) === notice.occasion)
      : undefined;
  const data: NoticeData = {
    consumer: { id: notice.consumerId, name: notice.consumer.name },
    milestone: notice.milestone as MilestoneName,
    version: entry.version,
    phase: nowMs >= entry.sunset ? 'removed' : 'deprecated',
    sunset: iso(entry.sunset),
    days_left: daysLeft(entry.sunset, nowMs),
    successor: entry.successor ?? null,
    pinned_version: pinnedVersion,
    api_key_required_from: keysFrom !== undefined && keysFrom > nowMs ? iso(keysFrom) : null,
    brownout: window === undefined ? null : { start: iso(window.start), end: iso(window.end) },
    brownouts: (entry.brownouts ?? [])
      .filter(({ end }) => end > nowMs)
      .map(({ start, end }) => ({ start: iso(start), end: iso(end) })),
    requests_since: Number.isFinite(countedFromMs) ? iso(countedFromMs) : null,
    operations: (report?.operations ?? []).map(
      ({ operation, call, instead, requests, last_seen, breaking_changes }) => ({
        operation,
        call,
        instead,
        requests_30_days: requests,
        last_seen,
        breaking_changes: breaking_changes.map((change) => ({ ...change, summary: changeText(change) })),
      }),
    ),
    move:
      preview === undefined
        ? null
        : {
            to: preview.to,
            verdict: preview.verdict,
            changes: preview.changes
              .filter((change) => change.affects && change.breaking)
              .map((change) => `${change.operation}: ${withDescription(change)}`),
            blocking: preview.blocking,
            preview: `${baseUrl}${UPGRADE_PREVIEW_PATH}?to=${preview.to}`,
          },
    links: {
      migration_guide: `${baseUrl}${report?.changes ?? `/versions/${entry.version}/changes`}`,
      deprecations: `${baseUrl}${DEPRECATIONS_PATH}`,
      changelog: `${baseUrl}${CHANGELOG_PATH}`,
    },
  };
  return { id: notice.messageId, type: `version.${notice.milestone}`, data };
}

/** The e-mail's subject: the version, the milestone in words, the date; or the pin that moved. */
export function subjectOf(data: NoticeData | PinMovedData): string {
  if (data.milestone === 'pin_moved')
    return data.previous_version === null
      ? `Your API pin was set to v${data.pinned_version}`
      : `Your API pin was moved from v${data.previous_version} to v${data.pinned_version}`;
  const { milestone, version, sunset, days_left: days, brownout } = data;
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

const when = (text: string): string => readableInstant(Date.parse(text));

/**
 * The parts of a deprecation e-mail, in order, each a few lines (or none): a part is added here, its data in
 * NoticeData, and both channels carry it.
 */
const DEPRECATION_PARTS: readonly ((data: NoticeData) => string[])[] = [
  function lifecycle(data) {
    const on = when(data.sunset);
    const lines =
      data.phase === 'removed'
        ? [`Version ${data.version} of the API was removed on ${on}: its requests are answered 410 Gone.`]
        : [
            `Version ${data.version} of the API is deprecated. It will be removed on ${on}, in ${dayCount(data.days_left)}.`,
          ];
    if (data.successor !== null) lines.push(`Its successor is version ${data.successor}.`);
    return lines;
  },
  function keys(data) {
    if (data.api_key_required_from === null) return [];
    return [
      `From ${when(data.api_key_required_from)}, v${data.version} answers only requests that carry an API key: ` +
        `send yours on every request.`,
    ];
  },
  function pin(data) {
    if (data.pinned_version === null) return [];
    if (data.pinned_version !== data.version)
      return [`Your pin is v${data.pinned_version}: your requests that name no version get it, not v${data.version}.`];
    const move =
      data.successor === null
        ? ''
        : ` Move it once your code reads v${data.successor}: PUT /consumer/version {"version": ${data.successor}} ` +
          `with your API key (you can roll it back within 72 hours).`;
    return [`Your pin is v${data.version}: your requests that name no version get it.${move}`];
  },
  function thisBrownout(data) {
    if (data.brownout === null) return [];
    return [
      '',
      `Brownout: from ${when(data.brownout.start)} to ${when(data.brownout.end)}, v${data.version} answers every ` +
        `request with 410, as it will after its removal.`,
    ];
  },
  function brownoutsAhead(data) {
    if (data.brownouts.length === 0 || data.phase === 'removed') return [];
    return [
      '',
      `Scheduled brownouts of v${data.version} (every request answered 410 during each, as after its removal):`,
      ...data.brownouts.map(({ start, end }) => `- ${when(start)} to ${when(end)}`),
    ];
  },
  function operations(data) {
    const since = data.requests_since === null ? '' : ` since ${when(data.requests_since)}`;
    const lines = ['', `What you call on v${data.version}, with your requests${since}:`];
    if (data.operations.length === 0) lines.push('  (no calls recorded)');
    for (const operation of data.operations) {
      const requests = `${operation.requests_30_days} ${operation.requests_30_days === 1 ? 'request' : 'requests'}`;
      lines.push(`- ${operation.call}: ${requests}, last on ${when(operation.last_seen)}`);
      if (operation.instead !== null) lines.push(`    send instead: ${operation.instead}`);
      if (operation.breaking_changes.length === 0) lines.push('    nothing in it breaks in the successor');
      else for (const change of operation.breaking_changes) lines.push(`    breaking: ${withDescription(change)}`);
    }
    return lines;
  },
  function move(data) {
    const move = data.move;
    if (move === null || data.phase === 'removed') return [];
    const lines = [''];
    switch (move.verdict) {
      case 'safe':
        lines.push(
          `Moving to v${move.to}: safe. No change that breaks touches the calls you made on v${data.version} in the ` +
            `last 30 days.`,
        );
        break;
      case 'review':
        lines.push(`Moving to v${move.to}: review. These breaking changes touch the calls you made:`);
        lines.push(...move.changes.map((change) => `- ${change}`));
        break;
      case 'blocked':
        lines.push(`Moving to v${move.to}: blocked. You call operations v${move.to} does not have:`);
        lines.push(...move.blocking.map((call) => `- ${call}`));
        break;
    }
    lines.push(`Your whole upgrade preview (with your API key): ${move.preview}`);
    return lines;
  },
  function links(data) {
    return [
      '',
      `The migration guide: ${data.links.migration_guide}`,
      `Everything you still call on deprecated versions (with your API key): ${data.links.deprecations}`,
      `The changelog: ${data.links.changelog}`,
    ];
  },
];

/** The parts of a pin-moved e-mail, in order. */
const PIN_MOVED_PARTS: readonly ((data: PinMovedData) => string[])[] = [
  function moved(data) {
    const from = data.previous_version === null ? '' : ` from v${data.previous_version}`;
    return [
      `The API platform team moved your pin${from} to v${data.pinned_version} on ${when(data.pinned_at)}. From ` +
        `then on your requests that name no version (a bare path without API-Version) get v${data.pinned_version}; ` +
        `requests that name a version are not affected.`,
    ];
  },
  function rollback(data) {
    if (data.rollback_until === null || data.previous_version === null) return [];
    return [
      '',
      `If something breaks, move back to v${data.previous_version} yourself until ${when(data.rollback_until)}: ` +
        `POST /consumer/version/rollback with your API key. After that, PUT /consumer/version ` +
        `{"version": ${data.previous_version}} moves it while v${data.previous_version} is served.`,
    ];
  },
  function links(data) {
    return [
      '',
      `Where your pin stands (with your API key): ${data.links.consumer}`,
      ...(data.links.migration_guide === null
        ? []
        : [`What changes from v${data.previous_version} to v${data.pinned_version}: ${data.links.migration_guide}`]),
      `The changelog: ${data.links.changelog}`,
    ];
  },
];

/** The e-mail's plain text: everything the webhook's data says, for a person. */
export function textOf(data: NoticeData | PinMovedData): string {
  const parts =
    data.milestone === 'pin_moved'
      ? PIN_MOVED_PARTS.flatMap((part) => part(data))
      : DEPRECATION_PARTS.flatMap((part) => part(data));
  return [`Hello ${data.consumer.name},`, '', ...parts, ''].join('\n');
}
