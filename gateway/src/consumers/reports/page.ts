import type { GuideChange } from '../../changes/guide.js';
import { declaredSentence } from '../../changes/sentence.js';
import { pageStyle } from '../../html/self-contained.js';
import { html, join, type Html } from '../../html/template.js';
import { dayCount, daysLeft } from '../../versions/days-left.js';
import { readableInstant } from '../../versions/readable-instant.js';
import type { DeprecationsReport, VersionReport } from './model.js';

const STYLE = pageStyle(new URL('./page.css', import.meta.url));

/** The page's only style is its inline block, allowed by its hash. */
export const DEPRECATIONS_PAGE_CSP = STYLE.csp;

const plural = (count: number, one: string, many: string): string => `${count} ${count === 1 ? one : many}`;

/** `removed field user_id in response 200 (application/json)`, or a declaration's sentence; the names as code. */
function changeItem(change: GuideChange): Html {
  if (change.declared === true) return html`<li>${declaredSentence(change)}</li>`;
  const name = change.name === '' ? '' : html` <code>${change.name}</code>`;
  const where = change.where === '' ? '' : html` in ${change.where}`;
  return html`<li>${change.change} ${change.kind}${name}${where}</li>`;
}

/** What the version's phase means for the consumer: the sunset, the days left, where to go. */
function lifecycleLine(report: VersionReport, nowMs: number): Html {
  if (report.done) return html`Nothing of yours is on v${report.version} any more: nothing to change.`;
  const sunsetMs = Date.parse(report.sunset);
  const sunset = readableInstant(sunsetMs);
  const successor = report.successor === null ? '' : ` Move to v${report.successor}:`;
  const guide = html` <a href="${report.changes}">the migration guide</a> lists every change.`;
  if (report.phase === 'removed')
    return html`Removed on ${sunset}: its requests are answered 410 Gone.${successor}${guide}`;
  return html`Removed on ${sunset} (in ${dayCount(daysLeft(sunsetMs, nowMs))}).${successor}${guide}`;
}

function operationRow({
  call,
  instead,
  requests,
  last_seen,
  breaking_changes,
}: VersionReport['operations'][number]): Html {
  const changes =
    breaking_changes.length === 0
      ? html`<td class="none">none</td>`
      : html`<td><ul class="breaking">${breaking_changes.map(changeItem)}</ul></td>`;
  const mustChange = breaking_changes.length === 0 ? '' : html` class="must-change"`;
  const sendInstead = instead === null ? '' : html`<code>${instead}</code>`;
  const lastCall = html`<time datetime="${last_seen}">${readableInstant(Date.parse(last_seen))}</time>`;
  return html`<tr${mustChange}><td class="operation"><code>${call}</code></td><td class="operation">${sendInstead}</td><td class="num">${requests}</td><td>${lastCall}</td>${changes}</tr>`;
}

/** Why the version is listed without a call: the consumer's pin is on it. */
function pinLine(report: VersionReport, pin: number | null): Html | string {
  if (report.operations.length > 0 || pin !== report.version) return '';
  const move =
    report.successor === null
      ? ''
      : html`: move it, <code>PUT /consumer/version {"version": ${report.successor}}</code>`;
  return html`<p class="pin">Your pin is v${report.version}, so your requests that name no version get it${move}.</p>`;
}

function versionSection(report: VersionReport, context: DeprecationsReport, nowMs: number): Html {
  const heading = html`<h2>v${report.version} <span class="phase phase-${report.phase}">${report.phase}</span>${report.done ? html` <span class="done">done</span>` : ''}</h2>`;
  if (report.done || report.operations.length === 0)
    return html`<section id="v${report.version}">
${heading}
<p>${lifecycleLine(report, nowMs)}</p>
${pinLine(report, context.pinned_version)}
</section>`;
  return html`<section id="v${report.version}">
${heading}
<p>${lifecycleLine(report, nowMs)}</p>
<table class="operations" data-version="${report.version}">
<thead><tr><th>operation you called</th><th>send instead</th><th class="num">requests</th><th>last call</th><th>breaking changes that touch it</th></tr></thead>
<tbody>
${join(report.operations.map(operationRow))}
</tbody>
</table>
</section>`;
}

/** What the page says first: whether anything is left to change, and how much. */
function summaryOf(versions: readonly VersionReport[]): string {
  const open = versions.filter((report) => !report.done);
  const done = versions.length - open.length;
  const operations = open.flatMap((report) => report.operations);
  const touched = operations.filter((operation) => operation.breaking_changes.length > 0).length;
  if (open.length === 0)
    return done === 0
      ? 'None of the versions you called is deprecated or removed: there is nothing to change.'
      : `You are done: nothing of yours is on a deprecated or removed version any more (${plural(done, 'version', 'versions')} left).`;
  const doneToo = done === 0 ? '' : ` You are done with ${plural(done, 'other version', 'other versions')}.`;
  return (
    `You are on ${plural(open.length, 'version that is', 'versions that are')} deprecated or removed, in ` +
    `${plural(operations.length, 'operation', 'operations')}; breaking changes touch ${touched} of them.${doneToo}`
  );
}

/**
 * `GET /deprecations` as a page the consumer's people read: per deprecated or removed version they called or are
 * pinned to, when it goes, and per operation they still call, what of the move to the successor breaks it; or that
 * they are done with it.
 */
export function renderDeprecationsPage(report: DeprecationsReport, nowMs: number): string {
  const { consumer, versions } = report;
  const asOf = new Date(nowMs).toISOString().slice(0, 16).replace('T', ' ');
  const since = readableInstant(Date.parse(report.requests_since));
  const pin =
    report.pinned_version === null
      ? 'You have no pin: your requests that name no version get the default version.'
      : `Your pin is v${report.pinned_version}: your requests that name no version get it.`;
  const sections = versions.map((version) => versionSection(version, report, nowMs));
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Deprecations for ${consumer}</title>
${STYLE.element}
</head>
<body>
<h1>Deprecations for <code>${consumer}</code></h1>
<p class="meta">As of ${asOf} UTC, from the requests this API key's consumer made since ${since} (30 days back, or your last pin move when later; <code>?since=</code> counts from another date), counted by every gateway replica; the last few seconds may be missing.</p>
<p class="summary">${summaryOf(versions)}</p>
<p class="pin">${pin}</p>
${join(sections)}
<p class="note">The same report as JSON: <code>GET /deprecations</code> with your <code>API-Key</code> and <code>Accept: application/json</code>. A change that touches no operation you called is in each version's migration guide.</p>
</body>
</html>
`.toString();
}
