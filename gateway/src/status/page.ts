import type { ConsumerTable, VersionConsumers } from '../accounting/top-consumers.js';
import { BASE_STYLE, escapeText, inlineStyleCsp } from '../html/self-contained.js';
import { changesPath, type Phase, type VersionPolicy } from '../versions/policy.js';
import { keysRequiredFrom, type VersionEntry } from '../versions/policy-file.js';
import { ATOM_MEDIA_TYPE, CHANGELOG_PATH } from '../versions/discovery.js';
import { daysLeft } from '../versions/days-left.js';
import { readableInstant } from '../versions/readable-instant.js';
import { WINDOW_SECONDS } from '../accounting/traffic.js';
import type { VersionUsage } from '../accounting/usage.js';
import type { RegisteredConsumers } from './registered.js';
import type { RefusedConsumer } from '../consumers/reports/version-consumers.js';

/** The page reloads itself this often (a meta refresh: no script). */
const REFRESH_SECONDS = 10;
/** Consumers listed per deprecated version on the page (`GET /consumers` has them all). */
const PAGE_CONSUMERS = 10;

const STYLE =
  `${BASE_STYLE}h2 { font-size: 1.15rem; margin: 2rem 0 .5rem; }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; ` +
  `white-space: nowrap; }
th { white-space: normal; font-size: .8rem; text-transform: uppercase; letter-spacing: .03em; color: var(--muted); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.wrap { white-space: normal; }
td.consumer { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; word-break: break-all; ` +
  `white-space: normal; width: 100%; }
table.registered td.consumer { width: auto; }
.wide { overflow-x: auto; }
td.name { white-space: normal; width: 100%; }
p.unavailable, p.default-warning { color: #8f1d18; }
.phase { display: inline-block; padding: .05rem .5rem; border-radius: 1rem; font-size: .85rem; font-weight: 600; }
.phase-current { background: #e3f4e8; color: #17622f; }
.phase-deprecated { background: #fff1d6; color: #7a4b00; }
.phase-removed { background: #fde2e1; color: #8f1d18; }
.brownout-now { color: #8f1d18; font-weight: 600; }
meter { width: 6rem; vertical-align: middle; margin-left: .4rem; }
`;

/** The page's only style is this inline block, allowed by its hash. */
export const STATUS_PAGE_CSP = inlineStyleCsp(STYLE);

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

function nextBrownout(windows: readonly { start: number; end: number }[] | undefined, nowMs: number): string {
  const next = windows?.find(({ end }) => end > nowMs);
  if (next === undefined) return '—';
  if (next.start <= nowMs) return `<span class="brownout-now">now, until ${readableInstant(next.end)}</span>`;
  return `${readableInstant(next.start)} for ${span(next.end - next.start)} (in ${span(next.start - nowMs)})`;
}

/**
 * Who may call the version, when it is restricted: keys required (or from when), closed to new consumers (from when).
 */
function accessNote(entry: VersionEntry, phase: Phase, nowMs: number): string {
  if (phase === 'removed') return '';
  const notes: string[] = [];
  const keysFrom = keysRequiredFrom(entry);
  if (keysFrom !== undefined)
    notes.push(keysFrom <= nowMs ? 'API key required' : `API key required from ${readableInstant(keysFrom)}`);
  const closed = entry.closed_to_new;
  if (closed !== undefined)
    notes.push(closed <= nowMs ? 'closed to new consumers' : `closed to new consumers from ${readableInstant(closed)}`);
  return notes.map((note) => `<br><small>${note}</small>`).join('');
}

/** The versions whose consumers are listed: those deprecated or removed now, and any with counts. */
export function consumerVersions(policy: VersionPolicy, consumers: ConsumerTable, nowMs: number): number[] {
  const listed = policy.versions
    .filter((entry) => policy.phaseOf(entry, nowMs) !== 'current')
    .map(({ version }) => version);
  return [...new Set([...listed, ...consumers.versions()])].sort((a, b) => a - b);
}

const phaseNote = (phase: Phase | undefined): string => (phase === undefined ? '' : ` (${phase})`);

/** The version's registered consumers, read from the store every replica shares: who they are, not what they claim. */
function registeredSection(
  version: number,
  phase: Phase | undefined,
  registered: RegisteredConsumers,
  nowMs: number,
): string {
  const heading = `<h2 id="registered-v${version}">Registered consumers of v${version}${phaseNote(phase)}</h2>`;
  const contacts =
    `Their contacts: <a href="/versions/${version}/consumers">/versions/${version}/consumers</a> ` + `(JSON).`;
  if (registered === 'store unavailable') {
    return (
      `${heading}\n<p class="note unavailable">The consumer store could not be read, so the registered ` +
      `consumers cannot be shown now; the anonymous list below is this replica's own and still shown.</p>`
    );
  }
  const list = registered.get(version);
  const turnedAway = list === undefined ? '' : refusedNote(list.refused, nowMs);
  if (list === undefined || list.consumers.length === 0)
    return `${heading}\n<p class="note">No consumer has called v${version} with an API key.</p>${turnedAway}`;
  const since = list.requests_since.slice(0, 10);
  const rows = list.consumers
    .map(
      (row) =>
        `<tr><td class="consumer">${escapeText(row.id)}</td><td class="name">${escapeText(row.name)}</td><td ` +
        `class="num">${row.requests}</td>` +
        `<td><time datetime="${row.last_seen}">${span(nowMs - Date.parse(row.last_seen))} ago</time></td></tr>`,
    )
    .join('\n');
  return (
    `${heading}
<table class="registered" data-version="${version}">
<thead><tr><th>consumer (API-Key)</th><th>name</th><th class="num">requests since ${since}</th><th>last ` +
    `seen</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
<p class="note">${list.consumers.length} authenticated by their API keys, counted by every replica, by requests. ` +
    `${contacts}</p>${turnedAway}`
  );
}

/** The registered consumers the version turned away as closed to new consumers (none of them is one of its users). */
function refusedNote(refused: readonly RefusedConsumer[], nowMs: number): string {
  if (refused.length === 0) return '';
  const who = refused.map(
    ({ id, refused: { count, last_at } }) =>
      `${escapeText(id)} (${count} ${count === 1 ? 'request' : 'requests'}, ` +
      `last ${span(nowMs - Date.parse(last_at))} ago)`,
  );
  return `\n<p class="note refused">Turned away as closed to new consumers: ${who.join(', ')}.</p>`;
}

/** How many consumers are pinned to a deprecated or removed version: their requests naming none get it. */
function pinnedNote(version: number, pinned: ReadonlyMap<number, number>): string {
  const count = pinned.get(version) ?? 0;
  const who = count === 1 ? '1 consumer with a key is' : `${count} consumers with a key are`;
  const how = 'docs/runbook.md, "Moving a consumer to another version"';
  const text = `${who} pinned to v${version}: their requests that name no version get it (${how}).`;
  return `<p class="note pinned" data-version="${version}">${text}</p>`;
}

function consumersSection(
  { version, consumers }: VersionConsumers,
  phase: Phase | undefined,
  table: ConsumerTable,
  nowMs: number,
): string {
  const heading = `<h2 id="consumers-v${version}">Anonymous top consumers of v${version}${phaseNote(phase)}</h2>`;
  if (consumers.length === 0) return `${heading}\n<p class="note">No requests since the gateway started.</p>`;
  const rows = consumers
    .slice(0, PAGE_CONSUMERS)
    .map(
      (row, i) =>
        `<tr><td class="num">${i + 1}</td><td class="consumer">${escapeText(row.consumer)}</td><td class="num">` +
        `${row.requests}</td>` +
        `<td><time datetime="${row.last_seen}">${span(nowMs - Date.parse(row.last_seen))} ago</time></td></tr>`,
    )
    .join('\n');
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
  return (
    `${heading}
<table class="consumers" data-version="${version}">
<thead><tr><th class="num">#</th><th>consumer (X-Client-Id, else User-Agent)</th><th ` +
    `class="num">requests</th><th>last seen</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
<p class="note">${notes.join(' ')}</p>`
  );
}

/**
 * A warning while the default version is deprecated or removed: the requests that name no version get it, and
 * change representation (or keep getting 410) until default_version moves (docs/runbook.md#move-the-default).
 */
function defaultWarning(policy: VersionPolicy, phase: Phase | undefined, unversioned: number): string {
  const version = policy.defaultVersion;
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
  return (
    `<p class="note default-warning" id="default-version">${what} Move <code>default_version</code> to v` +
    `${entry.successor ?? '?'} before the sunset: see the runbook's "Move the default".</p>`
  );
}

export interface StatusPageInput {
  policy: VersionPolicy;
  usage: VersionUsage;
  /** The host name: whose figures these are (with several replicas each page counts its own). */
  replica: string;
  /** The registered consumers of the versions `consumerVersions` lists at `nowMs`, fleet-wide. */
  registered: RegisteredConsumers;
  nowMs: number;
  /** The fleet's deprecation notices (status/notices.ts), already rendered; '' for none. */
  noticeSections?: string;
  /** Consumers holding a valid key per pinned version, fleet-wide (the key cache's last poll). */
  pinned?: ReadonlyMap<number, number>;
}

/**
 * The admin port's `GET /`: everything about the versions a person needs at a glance, as one HTML document.
 * Per deprecated or removed version, its registered consumers (every replica's) come first, then the
 * anonymous ones this replica counted.
 */
export function renderStatusPage(input: StatusPageInput): string {
  const { policy, usage, replica, registered, nowMs, noticeSections = '', pinned = new Map<number, number>() } = input;
  const recent = usage.traffic.recent(nowMs);
  const unversioned = usage.unversioned.recent(nowMs).byVersion;
  const versioned = policy.versions.reduce((sum, { version }) => sum + (recent.byVersion.get(version) ?? 0), 0);
  const phases = new Map(policy.versions.map((entry) => [entry.version, policy.phaseOf(entry, nowMs)]));

  const versionRows = policy.versions
    .map((entry) => {
      const phase = phases.get(entry.version) as Phase;
      const requests = recent.byVersion.get(entry.version) ?? 0;
      const share = versioned === 0 ? 0 : requests / versioned;
      const brownoutNow = phase === 'deprecated' && policy.brownoutAt(entry, nowMs) !== undefined;
      return (
        `<tr data-version="${entry.version}">` +
        `<td>v${entry.version}${entry.version === policy.defaultVersion ? ' <small>(default)</small>' : ''}</td>` +
        `<td><span class="phase phase-${phase}">${phase}${brownoutNow ? ' · browned out' : ''}</span>` +
        `${accessNote(entry, phase, nowMs)}</td>` +
        `<td>${entry.announced === undefined ? '—' : readableInstant(entry.announced)}</td>` +
        `<td>${entry.sunset === undefined ? '—' : readableInstant(entry.sunset)}</td>` +
        `<td class="num">${daysLeftCell(phase, entry.sunset, nowMs)}</td>` +
        `<td>${
          entry.successor === undefined
            ? '—'
            : `v${entry.successor}${
                phase === 'current' ? '' : ` · <a href="` + `${changesPath(entry.version)}">what changes</a>`
              }`
        }</td>` +
        `<td class="wrap">${nextBrownout(entry.brownouts, nowMs)}</td>` +
        `<td class="num">${requests}</td>` +
        `<td class="num">${unversioned.get(entry.version) ?? 0}</td>` +
        `<td class="num">${(share * 100).toFixed(1)} %<meter min="0" max="1" value="${share.toFixed(4)}"></meter><` +
        `/td>` +
        `</tr>`
      );
    })
    .join('\n');

  const consumerSections = usage.consumers
    .report(consumerVersions(policy, usage.consumers, nowMs))
    .map((list) => {
      const phase = phases.get(list.version);
      const registeredPart = registeredSection(list.version, phase, registered, nowMs);
      const anonymousPart = consumersSection(list, phase, usage.consumers, nowMs);
      return `${registeredPart}\n${pinnedNote(list.version, pinned)}\n${anonymousPart}`;
    })
    .join('\n');

  return (
    `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="refresh" content="${REFRESH_SECONDS}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API versions</title>
<style>${STYLE}</style>
</head>
<body>
<h1>API versions</h1>
<p class="meta">As of ${new Date(nowMs).toISOString().slice(0, 19).replace('T', ' ')} UTC · refreshes every ` +
    `${REFRESH_SECONDS} s · consumers as <a href="/consumers">JSON</a> · <a href="/metrics">metrics</a> · ` +
    `<a href="${CHANGELOG_PATH}" type="${ATOM_MEDIA_TYPE}">changelog</a> (Atom)</p>
<p class="note" id="replica">Replica <strong>${escapeText(replica)}</strong>: every figure on this page but the ` +
    `registered consumers (read from the store every replica shares) is this gateway replica's own, since it ` +
    `started. ` +
    `With several replicas, Prometheus and the Grafana dashboard "API versions" sum them all.</p>
${defaultWarning(policy, phases.get(policy.defaultVersion), unversioned.get(policy.defaultVersion) ?? 0)}
<div class="wide">
<table id="versions">
<caption>Requests and share over the last ${WINDOW_SECONDS / 60} minutes, among requests a version answered ` +
    `(named in the request, or chosen by a pin or the default).</caption>
<thead><tr><th>version</th><th>phase</th><th>announced</th><th>sunset</th><th class="num">days ` +
    `left</th><th>successor</th><th>next brownout</th><th class="num">requests</th><th class="num">of them ` +
    `unversioned</th><th class="num">share</th></tr></thead>
<tbody>
${versionRows}
</tbody>
</table>
</div>
<p class="note">${versioned} versioned requests in the last ${WINDOW_SECONDS / 60} minutes` +
    `${recent.unversioned === 0 ? '' : `, and ${recent.unversioned} that named no valid version (406, 400)`}. "Of ` +
    `them unversioned": requests that named no version and got the default, v${policy.defaultVersion}: they change ` +
    `version when <code>default_version</code> moves.</p>
${consumerSections}
${noticeSections}
</body>
</html>
`
  );
}
