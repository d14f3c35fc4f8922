/**
 * Every PromQL expression of the Grafana dashboards and of ops/prometheus/rules.yml parses and
 * names only metrics the gateway or the backend really exports (read from their live /metrics)
 * or that a recording rule of rules.yml produces. A renamed metric breaks this test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProcessStack } from '../e2e/process-stack.js';
import { startService, type ServiceProcess } from '../../platform/test/support/service-process.js';
import { startTestPostgres, type TestPostgres } from '../../platform/test/support/postgres.js';
import type { RunningStack } from '../e2e/stack.js';
import {
  dashboardExpressions,
  exportedSeriesNames,
  loadDashboards,
  loadRules,
  metricNamesIn,
  ruleFileContents,
  unknownMetrics,
} from './promql.js';

describe('metricNamesIn (lezer-promql)', () => {
  it('finds the selectors of aggregations, functions, binary operations and histograms', () => {
    expect(
      metricNamesIn(
        'histogram_quantile(0.99, sum by (le) ' +
          '(rate(http_request_duration_seconds_bucket{job="gateway"}[$__rate_interval])))' +
          ' / on () group_left () sum(api:version_requests:rate5m) or vector(0)',
      ).sort(),
    ).toEqual(['api:version_requests:rate5m', 'http_request_duration_seconds_bucket']);
  });

  it('reads names given as __name__ matchers and in the quoted UTF-8 form', () => {
    expect(
      metricNamesIn('{__name__="process_cpu_seconds_total", job="backend"} + {"nodejs_heap_size_total_bytes"}').sort(),
    ).toEqual(['nodejs_heap_size_total_bytes', 'process_cpu_seconds_total']);
  });

  it('does not take label names, label values or function names for metrics', () => {
    expect(metricNamesIn('label_replace(up{version="http_requests_total"}, "x", "$1", "job", "(.*)")')).toEqual(['up']);
  });

  it('rejects a syntax error and a __name__ regex it cannot check', () => {
    expect(() => metricNamesIn('sum(rate(http_requests_total[5m])')).toThrow(/syntax error/);
    expect(() => metricNamesIn('{__name__=~"http_.*"}')).toThrow(/non-equality __name__/);
    expect(() => metricNamesIn('rate(x[$my_custom_variable])')).toThrow(/unsupported Grafana variable/);
  });
});

describe('exportedSeriesNames', () => {
  const exposition = [
    '# HELP http_request_duration_seconds Time.',
    '# TYPE http_request_duration_seconds histogram',
    'http_request_duration_seconds_bucket{le="0.005",method="GET",route="/v1/orders/:id",status_code="200"} 1',
    'http_request_duration_seconds_sum{method="GET",route="/v1/orders/:id",status_code="200"} 0.002',
    'http_request_duration_seconds_count{method="GET",route="/v1/orders/:id",status_code="200"} 1',
    '# HELP api_version_requests_total Requests.',
    '# TYPE api_version_requests_total counter',
    '# TYPE process_cpu_seconds_total counter',
    'process_cpu_seconds_total 0.5',
    '',
  ].join('\n');

  it('offers histograms as _bucket/_sum/_count and counts declared metrics without samples', () => {
    const names = exportedSeriesNames(exposition);
    expect([...names].sort()).toEqual([
      'api_version_requests_total',
      'http_request_duration_seconds_bucket',
      'http_request_duration_seconds_count',
      'http_request_duration_seconds_sum',
      'process_cpu_seconds_total',
    ]);
  });

  it('reports a metric that is neither exported nor recorded, and where it is used', () => {
    const { expressions, recorded } = ruleFileContents(
      [
        'groups:',
        '  - name: g',
        '    rules:',
        '      - record: job:x:rate5m',
        '        expr: sum(rate(api_version_requests_total[5m]))',
        '      - alert: A',
        '        expr: job:x:rate5m > 0 and http_requests_total > 0',
      ].join('\n'),
      'inline.yml',
    );
    expect(unknownMetrics(expressions, exportedSeriesNames(exposition), recorded)).toEqual([
      { source: 'inline.yml › g › A', metric: 'http_requests_total' },
    ]);
  });
});

describe('ops/ PromQL', () => {
  const rules = loadRules();
  const dashboards = loadDashboards();
  const dashboardExprs = dashboards.flatMap(({ file, dashboard }) => dashboardExpressions(dashboard, file));

  it('has the "API versions" dashboard with its panels, and rules with expressions', () => {
    expect(dashboards.map(({ dashboard }) => dashboard.title)).toContain('API versions');
    expect(dashboardExprs.length).toBeGreaterThanOrEqual(13);
    // Every selector of the dashboard is filtered by its cluster and namespace variables
    // (test/ops/dashboard-filters.ts).
    const deployment = 'cluster=~"$cluster", namespace=~"$namespace"';
    expect(dashboardExprs.map(({ expr }) => expr)).toEqual(
      expect.arrayContaining([
        `max by (version) (api_version_brownout_active{${deployment}}) == 1`,
        `min(api_version_policy_last_reload_success{${deployment}})`,
      ]),
    );
    expect(dashboardExprs.map(({ expr }) => expr)).toEqual(
      expect.arrayContaining([
        `count by (job, sha256) (api_version_policy_info{${deployment}})`,
        `api:version_consumer_requests:rate5m{${deployment}}`,
      ]),
    );
    expect(dashboardExprs.map(({ expr }) => expr)).toEqual(
      expect.arrayContaining([
        `min by (instance) (db_up{job="version-router-backend", ${deployment}})`,
        `min by (instance) (backend_up{job="version-router-gateway", ${deployment}})`,
      ]),
    );
    expect(rules.expressions.length).toBe(19);
    expect([...rules.recorded].sort()).toEqual([
      'api:deprecated_version_share:ratio_rate5m',
      'api:version_consumer_requests:rate5m',
      'api:version_requests:rate5m',
    ]);
  });

  it('parses every expression and names a metric in each', () => {
    for (const { source, expr } of [...dashboardExprs, ...rules.expressions]) {
      expect(metricNamesIn(expr), source).not.toHaveLength(0);
    }
  });

  it('uses only recording rules that rules.yml defines', () => {
    const recordedLooking = [...dashboardExprs, ...rules.expressions].flatMap(({ source, expr }) =>
      metricNamesIn(expr)
        .filter((metric) => metric.includes(':'))
        .map((metric) => ({ source, metric })),
    );
    expect(recordedLooking.filter(({ metric }) => !rules.recorded.has(metric))).toEqual([]);
  });
});

describe('ops/ PromQL against the live /metrics of the built gateway and backend', () => {
  let stack: RunningStack | undefined;
  // A second backend keeps its users in PostgreSQL: only such a backend exports the db_* metrics.
  let postgres: TestPostgres | undefined;
  let postgresBackend: ServiceProcess | undefined;
  const exported = { gateway: new Set<string>(), backend: new Set<string>(), postgresBackend: new Set<string>() };

  beforeAll(async () => {
    stack = await startProcessStack();
    const { gatewayUrl } = stack;
    // Labelled series exist only once used: one request of each kind the dashboard looks at.
    const requests: [string, RequestInit?][] = [
      ['/v1/orders/ord-1001'],
      ['/v2/orders/ord-1002'],
      ['/api/v1/orders/ord-1003'],
      ['/orders/ord-1004', { headers: { 'api-version': '2' } }],
      ['/orders/ord-1005'],
      ['/orders/ord-1006', { headers: { 'api-version': 'x' } }],
      ['/v2/orders/ord-9999'],
      ['/api/users'],
      ['/api/users', { method: 'POST', body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }) }],
      ['/no/such/route'],
    ];
    for (const [path, init] of requests) await (await fetch(`${gatewayUrl}${path}`, init)).arrayBuffer();
    const read = async (adminUrl: string) => {
      const response = await fetch(`${adminUrl}/metrics`);
      expect(response.status).toBe(200);
      return exportedSeriesNames(await response.text());
    };
    exported.gateway = await read(stack.gatewayAdminUrl);
    exported.backend = await read(stack.backendAdminUrl);
    postgres = await startTestPostgres();
    postgresBackend = await startService('backend', {
      BACKEND_HOST: '127.0.0.1',
      BACKEND_PORT: '0',
      BACKEND_ADMIN_PORT: '0',
      DATABASE_URL: await postgres.createDatabase(),
    });
    await (
      await fetch(`${postgresBackend.apiUrl}/api/users`, {
        method: 'POST',
        body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
      })
    ).arrayBuffer();
    exported.postgresBackend = await read(postgresBackend.adminUrl);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([stack?.stop(), postgresBackend?.stop()]);
    await postgres?.close();
  }, 20_000);

  it('exports the documented metric names from the right process', () => {
    for (const name of ['http_requests_total', 'http_request_duration_seconds_bucket', 'process_cpu_seconds_total']) {
      expect(exported.gateway, name).toContain(name);
      expect(exported.backend, name).toContain(name);
    }
    for (const name of [
      'api_version_requests_total',
      'api_version_sunset_timestamp_seconds',
      'api_version_brownout_active',
      'api_version_policy_reloads_total',
      'api_version_policy_last_reload_success',
      'api_version_policy_info',
      'api_version_consumer_requests_total',
      'backend_up',
    ]) {
      expect(exported.gateway, name).toContain(name);
      expect(exported.backend, name).not.toContain(name);
    }
    for (const name of ['db_pool_connections', 'db_query_duration_seconds_bucket', 'db_up']) {
      expect(exported.postgresBackend, name).toContain(name);
      expect(exported.backend, name).not.toContain(name);
      expect(exported.gateway, name).not.toContain(name);
    }
  });

  it('names in every dashboard and rule expression only metrics a service exports or a rule records', () => {
    const rules = loadRules();
    const expressions = [
      ...loadDashboards().flatMap(({ file, dashboard }) => dashboardExpressions(dashboard, file)),
      ...rules.expressions,
    ];
    const either = new Set([...exported.gateway, ...exported.backend, ...exported.postgresBackend]);
    expect(unknownMetrics(expressions, either, rules.recorded)).toEqual([]);
  });

  it('would report a renamed metric', () => {
    const renamed = [{ source: 'probe', expr: 'sum by (version) (rate(api_version_request_total[5m]))' }];
    const either = new Set([...exported.gateway, ...exported.backend]);
    expect(unknownMetrics(renamed, either, loadRules().recorded)).toEqual([
      { source: 'probe', metric: 'api_version_request_total' },
    ]);
  });
});
