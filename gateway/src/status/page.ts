import type { ConsumerTable, VersionConsumers } from '../accounting/top-consumers.js';
import { pageStyle } from '../html/self-contained.js';
import { html, join, type Html } from '../html/template.js';
import { changesPath, type Phase, type VersionPolicy } from '../versions/policy.js';
import { keysRequiredFrom, type VersionEntry } from '../versions/policy-file.js';
import { ATOM_MEDIA_TYPE, CHANGELOG_PATH } from '../versions/discovery.js';
import { daysLeft } from '../versions/days-left.js';
import { readableInstant } from '../versions/readable-instant.js';
import { WINDOW_SECONDS } from '../accounting/traffic.js';
import type { VersionUsage } from '../accounting/usage.js';
import type { RegisteredConsumers } from './registered.js';
import type { RefusedConsumer } from '../consumers/reports/version-consumers.js';
import { previewSection } from './preview.js';
import type { VersionVerdicts } from './verdicts.js';

/** The page reloads itself this often (a meta refresh: no script). */
const REFRESH_SECONDS = 10;
/** Consumers listed per deprecated version on the page (`GET /consumers` has them all). */
const PAGE_CONSUMERS = 10;

const STYLE = pageStyle(new URL('./page.css', import.meta.url));

/** The page's only style is its inline block, allowed by its hash. */
export const STATUS_PAGE_CSP = STYLE.csp;

function span(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3_600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3_600)} h`;
  return `${Math.floor(seconds / 86_400)} d`;
}

function daysLeftCell(phase: Phase, sunset: number | undefined, nowMs: number): string {
  if (sunset === undefined) return '—';
  if (phase === 'removed') return 'removed';
  return String(daysLeft(sunset, nowMs));
}

function nextBrownout(windows: readonly { start: number; end: number }[] | undefined, nowMs: number): Html | string {
  const next = windows?.find(({ end }) => end > nowMs);
  if (next === undefined) return '—';
  if (next.start <= nowMs) return html`<span class="brownout-now">now, until ${readableInstant(next.end)}</span>`;
  return `${readableInstant(next.start)} for ${span(next.end - next.start)} (in ${span(next.start - nowMs)})`;
}

/**
 * Who may call the version, when it is restricted: keys required (or from when), closed to new consumers (from when).
 */
function accessNote(entry: VersionEntry, phase: Phase, nowMs: number): Html[] {
  if (phase === 'removed') return [];
  const notes: string[] = [];
  const keysFrom = keysRequiredFrom(entry);
  if (keysFrom !== undefined)
    notes.push(keysFrom <= nowMs ? 'API key required' : `API key required from ${readableInstant(keysFrom)}`);
  const closed = entry.closed_to_new;
  if (closed !== undefined)
    notes.push(closed <= nowMs ? 'closed to new consumers' : `closed to new consumers from ${readableInstant(closed)}`);
  return notes.map((note) => html`<br><small>${note}</small>`);
}

/** The versions whose consumers are listed: those deprecated or removed now, and any with counts. */
export function consumerVersions(policy: VersionPolicy, consumers: ConsumerTable, nowMs: number): number[] {
  const listed = policy.versions
    .filter((entry) => policy.phaseOf(entry, nowMs) !== 'current')
    .map(({ version }) => version);
  return [...new Set([...listed, ...consumers.versions()])].sort((a, b) => a - b);
}

const phaseNote = (phase: Phase | undefined): string => (phase === undefined ? '' : ` (${phase})`);

/** A cell saying how long ago `lastSeen` (RFC 3339) was, the instant itself in its `datetime`. */
const lastSeenCell = (lastSeen: string, nowMs: number): Html =>
  html`<td><time datetime="${lastSeen}">${span(nowMs - Date.parse(lastSeen))} ago</time></td>`;

/** The cell of a consumer's verdict for moving to the successor, linking its whole preview. */
function verdictCell(id: string, verdicts: VersionVerdicts | undefined, version: number): Html | string {
  if (verdicts === undefined) return '';
  const known = verdicts === 'store unavailable' ? undefined : verdicts.get(version);
  if (known === undefined) return '';
  if (!known.ok) return html`<td class="verdict">unknown</td>`;
  const verdict = known.byConsumer.get(id) ?? 'safe';
  const preview = `/consumers/${encodeURIComponent(id)}/upgrade-preview?to=${known.successor}`;
  return html`<td class="verdict verdict-${verdict}"><a href="${preview}">${verdict}</a></td>`;
}

/** The verdict column's heading, when the page has verdicts of the version. */
function verdictHeading(verdicts: VersionVerdicts | undefined, version: number): Html | string {
  const known = verdicts === undefined || verdicts === 'store unavailable' ? undefined : verdicts.get(version);
  if (known === undefined) return '';
  return known.ok ? html`<th>moving to v${known.successor}</th>` : html`<th>moving on</th>`;
}

/** The version's registered consumers, read from the store every replica shares: who they are, not what they claim. */
function registeredSection(
  version: number,
  phase: Phase | undefined,
  registered: RegisteredConsumers,
  nowMs: number,
  verdicts?: VersionVerdicts,
): Html {
  const heading = html`<h2 id="registered-v${version}">Registered consumers of v${version}${phaseNote(phase)}</h2>`;
  if (registered === 'store unavailable')
    return html`${heading}
<p class="note unavailable">The consumer store could not be read, so the registered consumers cannot be shown now; the anonymous list below is this replica's own and still shown.</p>`;
  const list = registered.get(version);
  const turnedAway = list === undefined ? '' : refusedNote(list.refused, nowMs);
  if (list === undefined || list.consumers.length === 0)
    return html`${heading}
<p class="note">No consumer has called v${version} with an API key.</p>${turnedAway}`;
  const since = list.requests_since.slice(0, 10);
  const rows = list.consumers.map(
    (row) =>
      html`<tr${row.done ? html` class="done"` : ''}><td class="consumer">${row.id}</td><td class="name">${row.name}</td><td>${row.pinned_version === null ? 'default' : `v${row.pinned_version}`}</td><td class="num">${row.requests}</td>${lastSeenCell(row.last_seen, nowMs)}<td>${row.done ? 'done' : row.active ? 'still calling' : 'no recent call'}</td>${verdictCell(row.id, verdicts, version)}</tr>`,
  );
  const contacts = html`Their contacts: <a href="/versions/${version}/consumers">/versions/${version}/consumers</a> (JSON).`;
  return html`${heading}
<table class="registered" data-version="${version}">
<thead><tr><th>consumer (API-Key)</th><th>name</th><th>pin</th><th class="num">requests since ${since}</th><th>last seen</th><th>state</th>${verdictHeading(verdicts, version)}</tr></thead>
<tbody>
${join(rows)}
</tbody>
</table>
<p class="note">${list.consumers.length} authenticated by their API keys, counted by every replica, by requests. "Done": its pin is on another version and it made no call of v${version} since it moved; "still calling": a call in the last 30 days, after its last pin move, that would still get v${version}.${verdictNote(verdicts, version)} ${contacts}</p>${turnedAway}`;
}

/** What the verdicts say, when the page has them. */
function verdictNote(verdicts: VersionVerdicts | undefined, version: number): Html | string {
  if (verdicts === undefined) return '';
  if (verdicts === 'store unavailable') return ' The verdicts of a move could not be read now.';
  const known = verdicts.get(version);
  if (known === undefined) return '';
  if (!known.ok) return " The verdicts of a move are unknown now: the backend's documents could not be read.";
  return html` "Moving to v${known.successor}": what that move would do to the calls each made in the last 30 days (safe; review: a breaking change touches them; blocked: it calls an operation v${known.successor} does not have).`;
}

/** The registered consumers the version turned away as closed to new consumers (none of them is one of its users). */
function refusedNote(refused: readonly RefusedConsumer[], nowMs: number): Html | string {
  if (refused.length === 0) return '';
  const who = refused.map(
    ({ id, refused: { count, last_at } }) =>
      `${id} (${count} ${count === 1 ? 'request' : 'requests'}, last ${span(nowMs - Date.parse(last_at))} ago)`,
  );
  return html`
<p class="note refused">Turned away as closed to new consumers: ${who.join(', ')}.</p>`;
}

/** How many consumers are pinned to a deprecated or removed version: their requests naming none get it. */
function pinnedNote(version: number, pinned: ReadonlyMap<number, number>): Html {
  const count = pinned.get(version) ?? 0;
  const who = count === 1 ? '1 consumer with a key is' : `${count} consumers with a key are`;
  return html`<p class="note pinned" data-version="${version}">${who} pinned to v${version}: their requests that name no version get it (docs/runbook.md, "Moving a consumer to another version").</p>`;
}

function consumersSection(
  { version, consumers }: VersionConsumers,
  phase: Phase | undefined,
  table: ConsumerTable,
  nowMs: number,
): Html {
  const heading = html`<h2 id="consumers-v${version}">Anonymous top consumers of v${version}${phaseNote(phase)}</h2>`;
  if (consumers.length === 0)
    return html`${heading}
<p class="note">No requests since the gateway started.</p>`;
  const rows = consumers
    .slice(0, PAGE_CONSUMERS)
    .map(
      (row, i) =>
        html`<tr><td class="num">${i + 1}</td><td class="consumer">${row.consumer}</td><td class="num">${row.requests}</td>${lastSeenCell(row.last_seen, nowMs)}</tr>`,
    );
  const notes = [
    `${Math.min(consumers.length, PAGE_CONSUMERS)} of ${consumers.length} tracked since the gateway started, by ` +
      `requests, on this replica.`,
    'Requests without a valid API key only (the registered consumers are above), named by what each says of itself.',
  ];
  if (table.approximate(version)) {
    notes.push(
      `More than ${table.tracked(version)} consumers were seen: the table keeps the heaviest, and a count may ` +
        `include requests of consumers it displaced.`,
    );
  }
  return html`${heading}
<table class="consumers" data-version="${version}">
<thead><tr><th class="num">#</th><th>consumer (X-Client-Id, else User-Agent)</th><th class="num">requests</th><th>last seen</th></tr></thead>
<tbody>
${join(rows)}
</tbody>
</table>
<p class="note">${notes.join(' ')}</p>`;
}

/**
 * A warning while the default version is deprecated or removed: the requests that name no version get it, and
 * change representation (or keep getting 410) until default_version moves (docs/runbook.md#move-the-default).
 */
function defaultWarning(
  policy: VersionPolicy,
  version: number,
  phase: Phase | undefined,
  unversioned: number,
): Html | string {
  const entry = policy.versions.find((candidate) => candidate.version === version);
  if (entry === undefined || phase === undefined || phase === 'current') return '';
  const recent =
    `${unversioned} ${unversioned === 1 ? 'request' : 'requests'} in the last ${WINDOW_SECONDS / 60} ` +
    `minutes named no version`;
  const sunset = entry.sunset === undefined ? '' : readableInstant(entry.sunset);
  const what =
    phase === 'removed'
      ? `The default version v${version} was removed on ${sunset}: every request that names no version is answered ` +
        `410. ${recent}.`
      : `The default version v${version} is deprecated and will be removed on ${sunset}; ${recent} and got v` +
        `${version}.`;
  const when = phase === 'removed' ? 'now' : 'before the sunset';
  return html`<p class="note default-warning" id="default-version">${what} Move <code>default_version</code> to v${entry.successor ?? '?'} ${when}: see the runbook's "Move the default".</p>`;
}

/**
 * The move of the default announced and not yet due: when, to which version, and how many recent requests it moves
 * (docs/policy-file.md#default-version-changes).
 */
function defaultChangeNote(policy: VersionPolicy, nowMs: number, unversioned: number): Html | string {
  const change = policy.upcomingDefaultChange(nowMs);
  if (change === undefined) return '';
  const recent =
    `${unversioned} ${unversioned === 1 ? 'request' : 'requests'} in the last ${WINDOW_SECONDS / 60} minutes named ` +
    `no version and got v${change.from}`;
  return html`<p class="note default-change" id="default-version-change">The default version moves from v${change.from} to v${change.to} on ${readableInstant(change.at)} (in ${span(change.at - nowMs)}; announced ${readableInstant(change.announced)}): from then on a request that names no version gets v${change.to}. ${recent}; their answers carry <code>API-Default-Version-Change</code> until then. Consumers pinned with a key keep their pin.</p>`;
}

export interface StatusPageInput {
  policy: VersionPolicy;
  usage: VersionUsage;
  /** The host name: whose figures these are (with several replicas each page counts its own). */
  replica: string;
  /** The registered consumers of the versions `consumerVersions` lists at `nowMs`, fleet-wide. */
  registered: RegisteredConsumers;
  nowMs: number;
  /** The fleet's deprecation notices (status/notices.ts), already rendered; none when absent. */
  noticeSections?: Html;
  /** Consumers holding a valid key per pinned version, fleet-wide (the key cache's last poll). */
  pinned?: ReadonlyMap<number, number>;
  /**
   * The instant a preview (`?at=`) asks for: the lifecycle (phases, days left, brownouts, key rules) as of then, and
   * what it does to today's consumers; the traffic and the consumers stay those of `nowMs`.
   */
  atMs?: number;
  /** Each registered consumer's verdict for moving to its version's successor (status/verdicts.ts); none absent. */
  verdicts?: VersionVerdicts;
  /** The comparisons of versions with `compare` (status/comparison.ts), rendered; none absent. */
  comparisonPart?: Html | string;
}

interface VersionCounts {
  /** The version's requests over the window. */
  requests: number;
  /** Of them, those that named no version. */
  unversioned: number;
  /** The requests every version answered over the window: the version's share is of these. */
  versioned: number;
}

/** One version's row of the versions table: its lifecycle, then its requests over the window. */
function versionRow(
  entry: VersionEntry,
  phase: Phase,
  policy: VersionPolicy,
  counts: VersionCounts,
  nowMs: number,
): Html {
  const defaultVersion = policy.defaultAt(nowMs);
  const share = counts.versioned === 0 ? 0 : counts.requests / counts.versioned;
  const brownoutNow = phase === 'deprecated' && policy.brownoutAt(entry, nowMs) !== undefined;
  const isDefault = entry.version === defaultVersion ? html` <small>(default)</small>` : '';
  const whatChanges = phase === 'current' ? '' : html` · <a href="${changesPath(entry.version)}">what changes</a>`;
  const successor = entry.successor === undefined ? '—' : html`v${entry.successor}${whatChanges}`;
  const cells = [
    html`<td>v${entry.version}${isDefault}</td>`,
    html`<td><span class="phase phase-${phase}">${phase}${brownoutNow ? ' · browned out' : ''}</span>${accessNote(entry, phase, nowMs)}</td>`,
    html`<td>${entry.announced === undefined ? '—' : readableInstant(entry.announced)}</td>`,
    html`<td>${entry.sunset === undefined ? '—' : readableInstant(entry.sunset)}</td>`,
    html`<td class="num">${daysLeftCell(phase, entry.sunset, nowMs)}</td>`,
    html`<td>${successor}</td>`,
    html`<td class="wrap">${nextBrownout(entry.brownouts, nowMs)}</td>`,
    html`<td class="num">${counts.requests}</td>`,
    html`<td class="num">${counts.unversioned}</td>`,
    html`<td class="num">${(share * 100).toFixed(1)} %<meter min="0" max="1" value="${share.toFixed(4)}"></meter></td>`,
  ];
  return html`<tr data-version="${entry.version}">${cells}</tr>`;
}

/**
 * The admin port's `GET /`: everything about the versions a person needs at a glance, as one HTML document.
 * Per deprecated or removed version, its registered consumers (every replica's) come first, then the
 * anonymous ones this replica counted.
 */
export function renderStatusPage(input: StatusPageInput): string {
  const { policy, usage, replica, registered, nowMs, noticeSections = '', pinned = new Map<number, number>() } = input;
  const { atMs, verdicts, comparisonPart = '' } = input;
  // The lifecycle's instant: a preview's, else now.
  const lifecycleMs = atMs ?? nowMs;
  const recent = usage.traffic.recent(nowMs);
  const unversioned = usage.unversioned.recent(nowMs).byVersion;
  const versioned = policy.versions.reduce((sum, { version }) => sum + (recent.byVersion.get(version) ?? 0), 0);
  const phases = new Map(policy.versions.map((entry) => [entry.version, policy.phaseOf(entry, lifecycleMs)]));
  // The default of the lifecycle shown (a preview's), and how many of the last minutes' requests it served.
  const defaultVersion = policy.defaultAt(lifecycleMs);
  const defaultUnversioned = unversioned.get(defaultVersion) ?? 0;

  const versionRows = policy.versions.map((entry) => {
    const requests = recent.byVersion.get(entry.version) ?? 0;
    const counts = { requests, unversioned: unversioned.get(entry.version) ?? 0, versioned };
    return versionRow(entry, phases.get(entry.version) as Phase, policy, counts, lifecycleMs);
  });

  const reports = usage.consumers.report(consumerVersions(policy, usage.consumers, lifecycleMs));
  const preview = atMs === undefined ? '' : previewSection({ policy, nowMs, atMs, registered, anonymous: reports });
  const consumerSections = reports.map((list) => {
    const phase = phases.get(list.version);
    const registeredPart = registeredSection(list.version, phase, registered, nowMs, verdicts);
    const anonymousPart = consumersSection(list, phase, usage.consumers, nowMs);
    return join([registeredPart, pinnedNote(list.version, pinned), anonymousPart]);
  });

  const asOf = new Date(nowMs).toISOString().slice(0, 19).replace('T', ' ');
  const previewing =
    atMs === undefined
      ? html` · preview a date: <code>?at=2030-01-01</code>`
      : html` · <strong>lifecycle previewed at ${readableInstant(atMs)}</strong> (<a href="#preview">what it does</a>)`;
  const windowMinutes = WINDOW_SECONDS / 60;
  const invalid = recent.unversioned === 0 ? '' : `, and ${recent.unversioned} that named no valid version (406, 400)`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="refresh" content="${REFRESH_SECONDS}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API versions</title>
${STYLE.element}
</head>
<body>
<h1>API versions</h1>
<p class="meta">As of ${asOf} UTC · refreshes every ${REFRESH_SECONDS} s · consumers as <a href="/consumers">JSON</a> · <a href="/metrics">metrics</a> · <a href="${CHANGELOG_PATH}" type="${ATOM_MEDIA_TYPE}">changelog</a> (Atom)${previewing}</p>
<p class="note" id="replica">Replica <strong>${replica}</strong>: every figure on this page but the registered consumers (read from the store every replica shares) is this gateway replica's own, since it started. With several replicas, Prometheus and the Grafana dashboard "API versions" sum them all.</p>
${defaultWarning(policy, defaultVersion, phases.get(defaultVersion), defaultUnversioned)}
${defaultChangeNote(policy, lifecycleMs, defaultUnversioned)}
<div class="wide">
<table id="versions">
<caption>Requests and share over the last ${windowMinutes} minutes, among requests a version answered (named in the request, or chosen by a pin or the default).</caption>
<thead><tr><th>version</th><th>phase</th><th>announced</th><th>sunset</th><th class="num">days left</th><th>successor</th><th>next brownout</th><th class="num">requests</th><th class="num">of them unversioned</th><th class="num">share</th></tr></thead>
<tbody>
${join(versionRows)}
</tbody>
</table>
</div>
<p class="note">${versioned} versioned requests in the last ${windowMinutes} minutes${invalid}. "Of them unversioned": requests that named no version and got the default, v${policy.defaultAt(nowMs)}: they change version when <code>default_version</code> moves.</p>
${comparisonPart}
${preview}
${join(consumerSections)}
${noticeSections}
</body>
</html>
`.toString();
}
