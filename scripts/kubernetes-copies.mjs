// The files kustomize needs inside deploy/kubernetes but whose one source lives elsewhere: kustomize
// reads no file outside a kustomization's directory. `npm run k8s:sync` writes them; test/kubernetes
// fails while one differs from what this module makes of its source.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Document, parseDocument } from 'yaml';
import { repoRoot } from './paths.mjs';

/** The command that refreshes every copy. */
export const syncCommand = 'npm run k8s:sync';

const policySource = 'ops/versions.json';
const rulesSource = 'ops/prometheus/rules.yml';
const dashboardSource = 'ops/grafana/dashboards/api-versions.json';

/** The PrometheusRule whose groups are the rule file's, comments included. */
function prometheusRule(rulesText) {
  const rules = parseDocument(rulesText);
  if (rules.errors.length > 0) throw new Error(`${rulesSource}: ${rules.errors[0].message}`);
  const rule = new Document({
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name: 'version-router' },
    spec: { groups: null },
  });
  rule.setIn(['spec', 'groups'], rules.get('groups', true));
  rule.commentBefore = ` Written by \`${syncCommand}\` from ${rulesSource}: edit that file, then run the command.`;
  return rule.toString({ lineWidth: 0 });
}

/**
 * Each copy: its path and its source's (relative to the repository root) and the content it must have.
 * @returns {{ target: string, source: string, content: string }[]}
 */
export function kubernetesCopies() {
  const read = (path) => readFileSync(join(repoRoot, path), 'utf8');
  return [
    { target: 'deploy/kubernetes/base/policy/versions.json', source: policySource, content: read(policySource) },
    {
      target: 'deploy/kubernetes/monitoring/prometheus-rule.yaml',
      source: rulesSource,
      content: prometheusRule(read(rulesSource)),
    },
    {
      target: 'deploy/kubernetes/monitoring/dashboards/api-versions.json',
      source: dashboardSource,
      content: read(dashboardSource),
    },
  ];
}
