/**
 * The dashboard shows one deployment at a time (test/ops/dashboard-filters.ts): its variables, and every target's
 * every selector filtered by them. Each check is seen failing on a broken copy.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/paths.mjs';
import { dashboardFilterViolations, targetCount, unfilteredSelectors, type Dashboard } from './dashboard-filters.js';

const dashboard = (): Dashboard & { panels: NonNullable<Dashboard['panels']> } =>
  JSON.parse(readFileSync(join(repoRoot, 'ops/grafana/dashboards/api-versions.json'), 'utf8')) as Dashboard & {
    panels: NonNullable<Dashboard['panels']>;
  };

describe('the API versions dashboard', () => {
  it('offers datasource, cluster and namespace, and filters every query of its 24 by them', () => {
    expect(targetCount(dashboard())).toBe(24);
    expect(dashboardFilterViolations(dashboard())).toEqual([]);
  });

  it('reports a query that sums every namespace, and one on a fixed datasource', () => {
    const broken = dashboard();
    const panel = broken.panels.find((candidate) => (candidate.targets ?? []).length > 0)!;
    const target = panel.targets![0]!;
    target.expr = 'sum by (version) (rate(api_version_requests_total{cluster=~"$cluster"}[$__rate_interval]))';
    target.datasource = { uid: 'prometheus' };
    expect(dashboardFilterViolations(broken)).toEqual([
      `panel "${panel.title}" ${target.refId}: datasource prometheus, not \${datasource}`,
      `panel "${panel.title}" ${target.refId}: api_version_requests_total{cluster=~"$cluster"} is not filtered by ` +
        `cluster and namespace`,
    ]);
  });

  it('reports an annotation query that sums every namespace', () => {
    const broken = dashboard();
    const annotation = broken.annotations!.list!.find((candidate) => candidate.expr !== undefined)!;
    annotation.expr = 'max by (version) (api_version_brownout_active) == 1';
    expect(dashboardFilterViolations(broken)).toEqual([
      `annotation "${annotation.name}": api_version_brownout_active is not filtered by cluster and namespace`,
    ]);
  });

  it('reports missing variables', () => {
    const broken = dashboard();
    broken.templating = { list: [] };
    expect(dashboardFilterViolations(broken)).toEqual(['variables are [], not ["datasource","cluster","namespace"]']);
  });

  it('finds every selector of an expression, recorded series and both sides of a match included', () => {
    expect(
      unfilteredSelectors(
        'sum(a:b:rate5m{namespace=~"$namespace", cluster=~"$cluster"}) / on () group_left () ' +
          'sum(x{namespace=~"$namespace"})',
      ),
    ).toEqual(['x{namespace=~"$namespace"}']);
  });
});
