/**
 * The Prometheus rules as a production operator reads them (docs/alerts.md): every aggregation and match
 * keeps `namespace` and `cluster`, every alert links its runbook, no annotation assumes docker compose.
 * Each check is run on ops/prometheus/rules.yml and seen failing on a broken rule.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  absentJobViolations,
  composeInstructionViolations,
  deploymentLabelViolations,
  droppedDeploymentLabels,
  jobSelectorViolations,
  runbookViolations,
  type Rule,
  type Runbooks,
} from './alert-rules.js';
import { readRepoFile } from '../support/repo-file.js';
import { scrapeJobs } from '../ops/scrape-jobs.js';

/** Where the rules say the repository is read; docs/alerts.md says how to change it. */
const RUNBOOK_BASE = 'https://git.example.com/team/version-router/blob/main/';
const RUNBOOK_PAGE = 'docs/alerts.md';

function rules(): Rule[] {
  const file = parse(readRepoFile('ops/prometheus/rules.yml')) as { groups: { rules: Rule[] }[] };
  return file.groups.flatMap((group) => group.rules);
}

const runbooks = (): Runbooks => ({ pageUrl: `${RUNBOOK_BASE}${RUNBOOK_PAGE}`, page: readRepoFile(RUNBOOK_PAGE) });

describe('deployment labels (namespace, cluster)', () => {
  it('are kept by every aggregation and vector match of ops/prometheus/rules.yml', () => {
    expect(rules().length).toBeGreaterThan(0);
    expect(deploymentLabelViolations(rules())).toEqual([]);
  });

  it.each([
    ['sum by (version) (rate(x[5m]))', ['sum by (version) drops namespace, cluster']],
    ['sum by (namespace, version) (rate(x[5m]))', ['sum by (namespace, version) drops cluster']],
    ['count(x)', ['count(…) drops namespace, cluster']],
    ['max without (namespace) (x)', ['max without (namespace) drops namespace']],
    ['a / on (version) group_left () b', ['on (version) group_left () matches without namespace, cluster']],
    ['a and ignoring (cluster) b', ['ignoring (cluster) matches without cluster']],
    ['sum by (namespace, cluster) (a) or vector(0)', ['vector(0) has no namespace, cluster']],
    [
      'count by (namespace, cluster, job) (count by (job, sha256) (x)) > 1',
      ['count by (job, sha256) drops namespace, cluster'],
    ],
  ])('are reported dropped by %s', (expr, problems) => {
    expect(droppedDeploymentLabels(expr)).toEqual(problems);
  });

  it.each([
    'sum by (namespace, cluster, version) (rate(x[5m]))',
    'max without (instance) (x)',
    'topk(5, x)',
    'a / on (cluster, namespace) group_left () b',
    'a and ignoring (instance) b',
    'a > 0.1',
  ])('are kept by %s', (expr) => {
    expect(droppedDeploymentLabels(expr)).toEqual([]);
  });

  it('name the rule that drops them', () => {
    expect(deploymentLabelViolations([{ alert: 'Drift', expr: 'count by (job) (x) > 1' }])).toEqual([
      'Drift: count by (job) drops namespace, cluster',
    ]);
  });
});

describe('runbooks', () => {
  it(`link every alert of ops/prometheus/rules.yml to its section of ${RUNBOOK_PAGE}`, () => {
    expect(rules().filter((rule) => rule.alert !== undefined).length).toBeGreaterThan(0);
    expect(runbookViolations(rules(), runbooks())).toEqual([]);
  });

  it('report an alert without a runbook_url, one pointing elsewhere, and one without a section', () => {
    const pageUrl = `${RUNBOOK_BASE}${RUNBOOK_PAGE}`;
    const broken: Rule[] = [
      { alert: 'VersionPolicyDrift', expr: 'x', annotations: {} },
      { alert: 'GatewayUpstreamErrors', expr: 'x', annotations: { runbook_url: `${pageUrl}#versionpolicydrift` } },
      { alert: 'NoSuchAlert', expr: 'x', annotations: { runbook_url: `${pageUrl}#nosuchalert` } },
      { record: 'a:b:rate5m', expr: 'x' },
    ];
    expect(runbookViolations(broken, runbooks())).toEqual([
      'VersionPolicyDrift: no runbook_url',
      `GatewayUpstreamErrors: runbook_url is ${pageUrl}#versionpolicydrift, not ${pageUrl}#gatewayupstreamerrors`,
      'NoSuchAlert: the runbooks have no section "## NoSuchAlert"',
    ]);
  });
});

describe('annotations', () => {
  it('of ops/prometheus/rules.yml send no one to docker compose', () => {
    expect(composeInstructionViolations(rules())).toEqual([]);
  });

  it('report one that does', () => {
    const rule: Rule = {
      alert: 'VersionPolicyReloadFailed',
      expr: 'x',
      annotations: { description: 'reload again (docker compose kill -s HUP gateway)' },
    };
    expect(composeInstructionViolations([rule])).toEqual([
      'VersionPolicyReloadFailed: its description tells the reader to use docker compose',
    ]);
  });
});

describe('scrape jobs', () => {
  const jobs = (): string[] =>
    (
      parse(readRepoFile('ops/prometheus/prometheus.yml')) as { scrape_configs: { job_name: string }[] }
    ).scrape_configs.map((job) => job.job_name);

  const ours = Object.values(scrapeJobs);

  it('are named by every selector of a raw metric in ops/prometheus/rules.yml, as ours', () => {
    expect(jobSelectorViolations(rules(), ours)).toEqual([]);
  });

  it("report a selector without its job, one of any application's `backend`, and leave recorded series alone", () => {
    const broken: Rule[] = [
      { alert: 'GatewayBackendUnreachable', expr: 'max by (namespace, cluster, pod) (backend_up) == 0' },
      { alert: 'BackendDatabaseUnreachable', expr: 'db_up{job=~"backend"} == 0 and api:version_requests:rate5m > 0' },
      { alert: 'MetricsAbsent', expr: 'absent(up{job="backend"} == 1)' },
    ];
    expect(jobSelectorViolations(broken, ours)).toEqual([
      'GatewayBackendUnreachable: backend_up selects no job',
      'BackendDatabaseUnreachable: db_up{job=~"backend"} selects no job',
      'MetricsAbsent: up{job="backend"} selects the job backend, not one of ours (version-router-gateway, ' +
        'version-router-backend)',
    ]);
  });

  it("of the compose stack's Prometheus are ours, and each has an alert on its absence", () => {
    expect(jobs()).toEqual(ours);
    expect(absentJobViolations(rules(), jobs())).toEqual([]);
  });

  it('report a job whose absence nothing alerts on', () => {
    const partial: Rule[] = [
      { alert: 'MetricsAbsent', expr: 'absent(up{job="gateway"} == 1)' },
      { alert: 'BackendDown', expr: 'up{job="backend"} == 0' },
      { record: 'x', expr: 'absent(up{job="backend"})' },
    ];
    expect(absentJobViolations(partial, ['gateway', 'backend'])).toEqual(['no alert on absent(up{job="backend"})']);
  });
});

describe('service level objectives', () => {
  const alerts = (): Map<string, string> =>
    new Map(rules().flatMap((rule) => (rule.alert === undefined ? [] : [[rule.alert, rule.expr]])));

  it("alert on the gateway's 5xx ratio and p99 latency, and on failed notices", () => {
    expect(alerts().get('GatewayErrorRatioHigh')).toMatch(/status_code=~"5\.\."/);
    expect(alerts().get('GatewayLatencyHigh')).toMatch(/^histogram_quantile\(0\.99,/);
    expect(alerts().get('NoticesFailing')).toContain(
      `consumer_notices_total{job="${scrapeJobs.gateway}", result="failed"}`,
    );
  });
});
