import type { GuideChange } from '../../changes/guide.js';
import { declaredSentence } from '../../changes/sentence.js';
import { BASE_STYLE, escapeText, inlineStyleCsp } from '../../html/self-contained.js';
import { dayCount, daysLeft } from '../../versions/days-left.js';
import { readableInstant } from '../../versions/readable-instant.js';
import type { VersionReport } from './model.js';

const STYLE =
  `${BASE_STYLE}h2 { font-size: 1.2rem; margin: 2.2rem 0 .4rem; }
p.summary { font-size: 1.05rem; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .92em; }
th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: .8rem; text-transform: uppercase; letter-spacing: .03em; color: var(--muted); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.operation { white-space: nowrap; }
td.none { color: var(--muted); }
ul.breaking { margin: 0; padding-left: 1.1rem; }
ul.breaking li + li { margin-top: .2rem; }
.phase { display: inline-block; padding: .05rem .5rem; border-radius: 1rem; font-size: .85rem; font-weight: 600; ` +
  `vertical-align: middle; }
.phase-deprecated { background: #fff1d6; color: #7a4b00; }
.phase-removed { background: #fde2e1; color: #8f1d18; }
tr.must-change td:first-child { box-shadow: inset 3px 0 #c4322b; }
`;

/** The page's only style is this inline block, allowed by its hash. */
export const DEPRECATIONS_PAGE_CSP = inlineStyleCsp(STYLE);

const plural = (count: number, one: string, many: string): string => `${count} ${count === 1 ? one : many}`;

/** `removed field user_id in response 200 (application/json)`, or a declaration's sentence; the names as code. */
function changeItem(change: GuideChange): string {
  if (change.declared === true) return `<li>${declaredSentence(change)}</li>`;
  const name = change.name === '' ? '' : ` <code>${escapeText(change.name)}</code>`;
  const where = change.where === '' ? '' : ` in ${escapeText(change.where)}`;
  return `<li>${change.change} ${change.kind}${name}${where}</li>`;
}

/** What the version's phase means for the consumer: the sunset, the days left, where to go. */
function lifecycleLine(report: VersionReport, nowMs: number): string {
  const sunsetMs = Date.parse(report.sunset);
  const successor = report.successor === null ? '' : ` Move to v${report.successor}:`;
  const guide = ` <a href="${report.changes}">the migration guide</a> lists every change.`;
  if (report.phase === 'removed')
    return `Removed on ${readableInstant(sunsetMs)}: its requests are answered 410 Gone.${successor}${guide}`;
  return `Removed on ${readableInstant(sunsetMs)} (in ${dayCount(daysLeft(sunsetMs, nowMs))}).${successor}${guide}`;
}

function versionSection(report: VersionReport, nowMs: number): string {
  const rows = report.operations
    .map(({ call, instead, requests, last_seen, breaking_changes }) => {
      const changes =
        breaking_changes.length === 0
          ? '<td class="none">none</td>'
          : `<td><ul class="breaking">${breaking_changes.map(changeItem).join('')}</ul></td>`;
      return (
        `<tr${breaking_changes.length === 0 ? '' : ' class="must-change"'}><td class="operation"><code>` +
        `${escapeText(call)}</code></td><td class="operation">` +
        `${instead === null ? '' : `<code>${escapeText(instead)}</code>`}</td>` +
        `<td class="num">${requests}</td><td><time datetime="${last_seen}">` +
        `${readableInstant(Date.parse(last_seen))}</time></td>${changes}</tr>`
      );
    })
    .join('\n');
  return (
    `<section id="v${report.version}">
<h2>v${report.version} <span class="phase phase-${report.phase}">${report.phase}</span></h2>
<p>${lifecycleLine(report, nowMs)}</p>
<table class="operations" data-version="${report.version}">
<thead><tr><th>operation you called</th><th>send instead</th><th class="num">requests</th><th>last call</th>` +
    `<th>breaking changes that ` +
    `touch it</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
</section>`
  );
}

/**
 * `GET /deprecations` as a page the consumer's people read: per deprecated or removed version they called, when
 * it goes, and per operation they called, what of the move to the successor breaks it.
 */
export function renderDeprecationsPage(consumer: string, versions: readonly VersionReport[], nowMs: number): string {
  const operations = versions.flatMap((report) => report.operations);
  const touched = operations.filter((operation) => operation.breaking_changes.length > 0).length;
  const summary =
    versions.length === 0
      ? 'None of the versions you called is deprecated or removed: there is nothing to change.'
      : `You called ${plural(versions.length, 'version that is', 'versions that are')} deprecated or removed, in ` +
        `${plural(operations.length, 'operation', 'operations')}; ` +
        `breaking changes touch ${touched} of them.`;
  return (
    `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Deprecations for ${escapeText(consumer)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>Deprecations for <code>${escapeText(consumer)}</code></h1>
<p class="meta">As of ${new Date(nowMs).toISOString().slice(0, 16).replace('T', ' ')} UTC, from the requests this ` +
    `API key's consumer made (counted by every gateway replica; the last few seconds may be missing).</p>
<p class="summary">${summary}</p>
${versions.map((report) => versionSection(report, nowMs)).join('\n')}
<p class="note">The same report as JSON: <code>GET /deprecations</code> with your <code>API-Key</code> and ` +
    `<code>Accept: application/json</code>. A change that touches no operation you called is in each version's ` +
    `migration guide.</p>
</body>
</html>
`
  );
}
