import { pageStyle } from '../html/self-contained.js';
import { html, join, type Html } from '../html/template.js';
import type { VersionEntry } from '../versions/policy-file.js';
import type { CallOfForm } from '../versions/call-forms.js';
import type { GuideChange, MigrationGuide } from './guide.js';
import { declaredSentence } from './sentence.js';

const STYLE = pageStyle(new URL('./page.css', import.meta.url));

/** The page's only style is its inline block, allowed by its hash. */
export const GUIDE_PAGE_CSP = STYLE.csp;

const DAY_MS = 86_400_000;

function instant(epochMs: number): string {
  const iso = new Date(epochMs).toISOString();
  return epochMs % DAY_MS === 0 ? iso.slice(0, 10) : `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

const plural = (count: number, one: string, many: string): string => `${count} ${count === 1 ? one : many}`;

const breakingClass = (change: GuideChange): string => (change.breaking ? 'is-breaking' : 'is-compatible');

const tagOf = (change: GuideChange): Html =>
  change.breaking
    ? html`<span class="tag breaking">breaking</span>`
    : html`<span class="tag compatible">compatible</span>`;

function changeRow(change: GuideChange): Html {
  const cells = html`<td>${change.change}</td><td>${change.kind}</td><td><code>${change.name}</code></td>`;
  return html`<tr class="${breakingClass(change)}">${cells}<td class="where">${change.where}</td><td>${tagOf(change)}</td><td class="description">${change.description}</td></tr>`;
}

/** The policy's declarations on one operation, one sentence each. */
function declaredList(changes: readonly GuideChange[]): Html {
  const items = changes.map(
    (change) =>
      html`<li class="${breakingClass(change)}">${declaredSentence(change)} ${tagOf(change)} <span class="description">${change.description}</span></li>`,
  );
  return html`<ul class="declared">\n${join(items)}\n</ul>`;
}

/** Each form a client calls the operation in, and what it sends instead for the successor. */
function formsTable(forms: readonly CallOfForm[]): Html {
  const rows = forms.map(
    ({ call, instead }) => html`<tr><td><code>${call}</code></td><td><code>${instead ?? ''}</code></td></tr>`,
  );
  return html`<table class="forms">
<thead><tr><th>you call</th><th>send instead</th></tr></thead>
<tbody>
${join(rows)}
</tbody>
</table>`;
}

function changeTable(changes: readonly GuideChange[], caption: string): Html {
  return html`<table class="changes">
<caption>${caption}</caption>
<thead><tr><th>change</th><th>what</th><th>name</th><th>where</th><th>for a client</th><th>in the documents' words</th></tr></thead>
<tbody>
${join(changes.map(changeRow))}
</tbody>
</table>`;
}

/** The migration guide as a page a person reads: what changes per operation, breaking changes marked. */
export function renderGuidePage(guide: MigrationGuide, entry: VersionEntry): string {
  const { version, successor } = guide;
  const title = `Moving from v${version} to v${successor}`;
  const lifecycle = [
    entry.announced === undefined ? '' : `Version ${version} is deprecated from ${instant(entry.announced)}`,
    entry.sunset === undefined ? '' : `it is removed on ${instant(entry.sunset)} (answered 410 from then on)`,
  ]
    .filter((part) => part !== '')
    .join('; ');
  const operationCount = guide.operations.length;
  const summary =
    operationCount === 0 && guide.other_changes.length === 0
      ? `The documents of v${version} and v${successor} differ in nothing a client depends on.`
      : `${plural(guide.breaking_changes, 'breaking change', 'breaking changes')} and ` +
        `${plural(guide.compatible_changes, 'compatible change', 'compatible changes')} in ` +
        `${plural(operationCount, 'operation', 'operations')}. ` +
        'A client must adapt to every breaking change; a compatible one needs nothing, and is listed so the new ' +
        'data can be used.';
  const sections = guide.operations.map((operation) => {
    const declared = operation.changes.filter((change) => change.declared === true);
    const found = operation.changes.filter((change) => change.declared !== true);
    const breaking = plural(found.filter((change) => change.breaking).length, 'breaking change', 'breaking changes');
    const caption = `${breaking} of ${found.length}${declared.length === 0 ? '' : ' besides the declared ones'}.`;
    const parts = [
      operation.forms.length === 0 ? [] : [formsTable(operation.forms)],
      declared.length === 0 ? [] : [declaredList(declared)],
      found.length === 0 ? [] : [changeTable(found, caption)],
    ].flat();
    return html`<h2><code>${operation.method} ${operation.path}</code> → <code>${operation.method} ${operation.successor_path}</code></h2>\n${join(parts)}`;
  });
  if (guide.other_changes.length > 0)
    sections.push(
      html`<h2>Outside the operations</h2>\n${changeTable(guide.other_changes, 'Shared parts of the documents.')}`,
    );
  const meta = html`${lifecycle === '' ? '' : `${lifecycle}. `}What a client of v${version} changes to use v${successor}, from the two versions' OpenAPI documents.`;
  const json = html`<code>GET /versions/${version}/changes</code> with <code>Accept: application/json</code>`;

  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
${STYLE.element}
</head>
<body>
<h1>${title}</h1>
<p class="meta">${meta}</p>
<p class="summary">${summary}</p>
${join(sections)}
<p class="note">Derived from <code>/v${version}/openapi.json</code> and <code>/v${successor}/openapi.json</code>, compared by the classifier of the API's contract tests; descriptions and examples are left out. The changes listed first on an operation are the ones the version policy declares (what the gateway translates); the table lists what else the documents differ in. Without a declaration, a renamed field shows as one field removed and one added: the documents do not say that it was renamed. The same guide as JSON: ${json}.</p>
</body>
</html>
`.toString();
}
