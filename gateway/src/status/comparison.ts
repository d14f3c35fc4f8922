import type { Comparisons } from '../comparison/comparisons.js';
import { html, join, type Html } from '../html/template.js';
import type { VersionPolicy } from '../versions/policy.js';
import { readableInstant } from '../versions/readable-instant.js';

const counted = (count: number): string => count.toLocaleString('en-US');

/**
 * The status page's line per version with `compare`: how many of its answers this replica compared with the
 * successor's translated back, how many differed (and where), since when; the details at `GET
 * /versions/{n}/comparison` (docs/architecture.md "Adding a version 3" cites these figures before a presenter goes).
 */
export function comparisonSection(policy: VersionPolicy, comparisons: Comparisons): Html | string {
  const lines: Html[] = [];
  for (const entry of policy.versions) {
    const figures = comparisons.figures(policy, entry.version);
    if (figures === undefined) continue;
    const others = [
      figures.error > 0 ? `${counted(figures.error)} failed` : '',
      figures.skipped > 0 ? `${counted(figures.skipped)} skipped` : '',
    ].filter((part) => part !== '');
    const paths = figures.resources.flatMap((resource) =>
      resource.differences.map((difference) => `${resource.resource} ${difference.path}`),
    );
    const where = paths.length === 0 ? '' : html` (at ${paths.slice(0, 5).join(', ')}${paths.length > 5 ? ', …' : ''})`;
    lines.push(
      html`<p class="comparison${figures.differ > 0 ? ' differ' : ''}" data-version="${entry.version}"><strong>v${entry.version} declarations: ${counted(figures.compared)} compared, ${counted(figures.differ)} differ</strong>${where}${others.length === 0 ? '' : `; ${others.join(', ')}`}. Since ${readableInstant(Date.parse(figures.since))}, on this replica: <a href="/versions/${entry.version}/comparison">the differences</a>.</p>`,
    );
  }
  if (lines.length === 0) return '';
  return html`<h2 id="comparisons">Declarations compared with the code they replace</h2>
${join(lines)}`;
}
