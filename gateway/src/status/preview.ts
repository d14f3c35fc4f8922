import type { VersionConsumers } from '../accounting/top-consumers.js';
import { html, join, type Html } from '../html/template.js';
import { milestonesOf } from '../notices/milestones.js';
import { keysRequiredFrom, type VersionEntry } from '../versions/policy-file.js';
import type { VersionPolicy } from '../versions/policy.js';
import { readableInstant } from '../versions/readable-instant.js';
import type { RegisteredConsumers } from './registered.js';

/** What the version does at the instant to a caller, by whether the caller sends a valid key. */
function outcomeAt(policy: VersionPolicy, entry: VersionEntry, atMs: number, withKey: boolean): string {
  const phase = policy.phaseOf(entry, atMs);
  if (phase === 'removed') return `refused: v${entry.version} removed (410 version_removed)`;
  const window = phase === 'deprecated' ? policy.brownoutAt(entry, atMs) : undefined;
  if (window !== undefined) return `refused: browned out until ${readableInstant(window.end)} (410 version_brownout)`;
  const keysFrom = keysRequiredFrom(entry);
  if (!withKey && keysFrom !== undefined && keysFrom <= atMs) return 'refused: API key required (401)';
  return phase === 'deprecated' ? 'served, with the deprecation headers' : 'served';
}

/**
 * The notices the version's milestones bring between now and the instant (a brownout's only while its window has
 * not ended by then): each goes to the registered consumers that called the version in the 30 days before it.
 */
function noticesDue(entry: VersionEntry, nowMs: number, atMs: number): string {
  const due = milestonesOf(entry).filter(
    (milestone) => milestone.at > nowMs && milestone.at <= atMs && (milestone.window?.end ?? Infinity) > nowMs,
  );
  if (due.length === 0) return 'none';
  return due.map((milestone) => `${milestone.name} (${readableInstant(milestone.at)})`).join(', ');
}

/**
 * The status page's `?at=` part: for each version deprecated or removed at the instant, what the policy in force does
 * then to the consumers calling it today (the registered ones every replica counted, then this replica's anonymous
 * ones), whether consumers new to it are turned away, and the notices due by then. Read-only: nothing is moved.
 */
export function previewSection({
  policy,
  nowMs,
  atMs,
  registered,
  anonymous,
}: {
  policy: VersionPolicy;
  nowMs: number;
  atMs: number;
  registered: RegisteredConsumers;
  anonymous: readonly VersionConsumers[];
}): Html {
  const versions = policy.versions.filter((entry) => policy.phaseOf(entry, atMs) !== 'current');
  const parts = versions.map((entry) => {
    const { version } = entry;
    const rows: Html[] = [];
    const known = registered === 'store unavailable' ? undefined : registered.get(version);
    for (const consumer of known?.consumers ?? [])
      rows.push(
        html`<tr><td class="consumer">${consumer.id}</td><td>API key</td><td class="wrap">${outcomeAt(policy, entry, atMs, true)}</td></tr>`,
      );
    for (const consumer of anonymous.find((list) => list.version === version)?.consumers ?? [])
      rows.push(
        html`<tr><td class="consumer">${consumer.consumer}</td><td>no key</td><td class="wrap">${outcomeAt(policy, entry, atMs, false)}</td></tr>`,
      );
    const closed = entry.closed_to_new;
    const closedNote =
      closed !== undefined && closed <= atMs && policy.phaseOf(entry, atMs) === 'deprecated'
        ? html`
<p class="note">Closed to new consumers since ${readableInstant(closed)}: a registered consumer that had not called v${version} before then is refused (403 closed to new consumers); those listed have.</p>`
        : '';
    const unknown =
      registered === 'store unavailable'
        ? html`
<p class="note unavailable">The consumer store could not be read: the registered consumers are missing from this list.</p>`
        : '';
    const table =
      rows.length === 0
        ? html`<p class="note">No consumer called v${version} today, with a key or without.</p>`
        : html`<table class="preview" data-version="${version}">
<thead><tr><th>consumer</th><th>calls with</th><th>at that instant</th></tr></thead>
<tbody>
${join(rows)}
</tbody>
</table>`;
    return html`<h3>v${version} (${policy.phaseOf(entry, atMs)} then)</h3>
${table}${closedNote}${unknown}
<p class="note notices-due" data-version="${version}">Notices due from now until then: ${noticesDue(entry, nowMs, atMs)}.</p>`;
  });
  const none = versions.length === 0 ? html`<p class="note">Every version is current then.</p>` : '';
  return html`<h2 id="preview">At ${readableInstant(atMs)}: what the policy does to today's consumers</h2>
<p class="note">A preview (<code>?at=</code>): the table above shows each version's phase, days left and brownouts as of that instant; the requests and the consumers are today's. Nothing is moved or sent. <a href="/">Back to now</a>.</p>
${join(parts)}${none}`;
}
