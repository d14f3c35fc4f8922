import { BASE_STYLE, escapeText, inlineStyleCsp } from '../html/self-contained.js';
import type { VersionEntry } from '../versions/policy-file.js';
import type { CallOfForm } from '../versions/call-forms.js';
import type { GuideChange, MigrationGuide } from './guide.js';
import { declaredSentence } from './sentence.js';

const STYLE =
  `${BASE_STYLE}h2 { font-size: 1.1rem; margin: 2rem 0 .5rem; font-weight: 600; }
p.summary { font-size: 1.05rem; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .92em; }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: .8rem; text-transform: uppercase; letter-spacing: .03em; color: var(--muted); }
td.description { color: var(--muted); font-size: .88rem; }
td.where { white-space: nowrap; }
.tag { display: inline-block; padding: .05rem .5rem; border-radius: 1rem; font-size: .85rem; font-weight: 600; ` +
  `white-space: nowrap; }
.breaking { background: #fde2e1; color: #8f1d18; }
.compatible { background: #e3f4e8; color: #17622f; }
tr.is-breaking td:first-child { box-shadow: inset 3px 0 #c4322b; }
ul.declared { padding-left: 1.1rem; }
ul.declared li + li { margin-top: .3rem; }
ul.declared .description { color: var(--muted); font-size: .88rem; }
table.forms td { white-space: nowrap; }
`;

/** The page's only style is this inline block, allowed by its hash. */
export const GUIDE_PAGE_CSP = inlineStyleCsp(STYLE);

const DAY_MS = 86_400_000;

function instant(epochMs: number): string {
  const iso = new Date(epochMs).toISOString();
  return epochMs % DAY_MS === 0 ? iso.slice(0, 10) : `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

const plural = (count: number, one: string, many: string): string => `${count} ${count === 1 ? one : many}`;

function changeRow(change: GuideChange): string {
  const tag = tagOf(change);
  return (
    `<tr class="${change.breaking ? 'is-breaking' : 'is-compatible'}">` +
    `<td>${change.change}</td><td>${change.kind}</td><td><code>${escapeText(change.name)}</code></td>` +
    `<td class="where">${escapeText(change.where)}</td><td>${tag}</td><td class="description">` +
    `${escapeText(change.description)}</td></tr>`
  );
}

const tagOf = (change: GuideChange): string =>
  change.breaking ? '<span class="tag breaking">breaking</span>' : '<span class="tag compatible">compatible</span>';

/** The policy's declarations on one operation, one sentence each. */
function declaredList(changes: readonly GuideChange[]): string {
  const items = changes.map(
    (change) =>
      `<li class="${change.breaking ? 'is-breaking' : 'is-compatible'}">${declaredSentence(change)} ` +
      `${tagOf(change)} <span class="description">${escapeText(change.description)}</span></li>`,
  );
  return `<ul class="declared">\n${items.join('\n')}\n</ul>`;
}

/** Each form a client calls the operation in, and what it sends instead for the successor. */
function formsTable(forms: readonly CallOfForm[]): string {
  const rows = forms.map(
    ({ call, instead }) =>
      `<tr><td><code>${escapeText(call)}</code></td><td><code>${escapeText(instead ?? '')}</code></td></tr>`,
  );
  return `<table class="forms">
<thead><tr><th>you call</th><th>send instead</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>`;
}

function changeTable(changes: readonly GuideChange[], caption: string): string {
  return (
    `<table class="changes">
<caption>${caption}</caption>
<thead><tr><th>change</th><th>what</th><th>name</th><th>where</th><th>for a client</th><th>in the documents' ` +
    `words</th></tr></thead>
<tbody>
${changes.map(changeRow).join('\n')}
</tbody>
</table>`
  );
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
    const caption = `${plural(
      found.filter((change) => change.breaking).length,
      'breaking change',
      'breaking ' + 'changes',
    )} of ${found.length}${declared.length === 0 ? '' : ' besides the declared ones'}.`;
    return (
      `<h2><code>${operation.method} ${escapeText(operation.path)}</code> → <code>${operation.method} ` +
      `${escapeText(operation.successor_path)}</code></h2>\n` +
      [
        operation.forms.length === 0 ? '' : formsTable(operation.forms),
        declared.length === 0 ? '' : declaredList(declared),
        found.length === 0 ? '' : changeTable(found, caption),
      ]
        .filter((part) => part !== '')
        .join('\n')
    );
  });
  if (guide.other_changes.length > 0)
    sections.push(
      `<h2>Outside the operations</h2>\n${changeTable(guide.other_changes, 'Shared parts of the documents.')}`,
    );

  return (
    `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${title}</h1>
<p class="meta">${lifecycle === '' ? '' : `${lifecycle}. `}What a client of v${version} changes to use v` +
    `${successor}, from the two versions' OpenAPI documents.</p>
<p class="summary">${summary}</p>
${sections.join('\n')}
<p class="note">Derived from <code>/v${version}/openapi.json</code> and <code>/v${successor}/openapi.json</code>, ` +
    `compared by the classifier of the API's contract tests; descriptions and examples are left out. The changes ` +
    `listed first on an operation are the ones the version policy declares (what the gateway translates); the table ` +
    `lists what else the documents differ in. Without a declaration, a renamed field shows as one field removed ` +
    `and one added: the documents do not say that it was renamed. The same guide as JSON: <code>GET /versions/` +
    `${version}/changes</code> with <code>Accept: application/json</code>.</p>
</body>
</html>
`
  );
}
