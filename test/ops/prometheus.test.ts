/**
 * The Monitor step of a deprecation with a real Prometheus: Debian's `prometheus` binary scrapes the real
 * gateway every second, evaluates ops/prometheus/rules.yml every second, and
 * api:deprecated_version_share:ratio_rate5m must equal the share of versioned requests this test
 * sent on the deprecated version (within 5 percentage points).
 *
 * Why a 5-minute rate is exact enough over a few seconds: rate() divides the increase between the
 * first and last sample in the window by their distance and extrapolates both ends by the same
 * amount for every series of one target, since they are scraped at the same instants. The ratio of
 * two such rates is therefore the ratio of the increases, provided that
 *  - every series exists and has been scraped before the measured traffic starts (prom-client
 *    creates a labelled series at its first increment, and rate() cannot see the increment that
 *    created a series): hence the warm-up, and waiting for a scrape of it;
 *  - the extrapolation towards the window start is the same for every series. Prometheus first
 *    limits it to the time the counter would have needed to grow from zero (sampled interval ×
 *    first value / increase) and, when that is below 1.1 average scrape intervals, extrapolates by
 *    that instead of half an interval: per series, and different for v1 and v2 when their first
 *    values are small against their increases (a first try with a baseline of 20 recorded 0.28
 *    for 0.30 sent). A baseline of WARM_UP ≥ 1.1 × the largest increase keeps that limit above
 *    1.1 × sampled interval ≥ 1.1 average intervals, so every series gets the same half interval;
 *  - the value is read from a rule evaluation after the scrape that saw all of the traffic.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ORDERS_V1_CHANGES } from '../../gateway/test/support/orders-v1.js';
import { startProcessStack } from '../e2e/process-stack.js';
import type { RunningStack } from '../e2e/stack.js';
import { dashboardExpressions, loadDashboards, loadRules, rulesFile, substituteGrafanaVariables } from './promql.js';
import { eventually } from '../../platform/test/support/eventually.mjs';
import { describeWithTool } from '../../platform/test/support/tools.js';
import { query, ruleStates, startPrometheus, type RunningPrometheus } from './prometheus-process.js';
import { scrapeJobs } from './scrape-jobs.js';

/** ≥ 1.1 × the largest increase of one series in MIX (see above). */
const WARM_UP = 100;
/** The measured mix: the share of versioned traffic on deprecated v1 is 0.3. */
const MIX = { v1: 30, v2: 70, invalid: 50 } as const;
/** One budget for everything the test waits for, so the whole file stays well under 90 s. */
const BUDGET_MS = 40_000;

type Kind = keyof typeof MIX;

interface Sent {
  /** Answered on a version the gateway declared deprecated (Deprecation: true). */
  deprecated: number;
  /** Answered on a version (not 406/400 unresolvable). */
  versioned: number;
}

async function send(gatewayUrl: string, kind: Kind, n: number, sent: Sent): Promise<void> {
  const order = `ord-${1001 + (n % 10)}`;
  const response =
    kind === 'invalid'
      ? await fetch(`${gatewayUrl}/orders/${order}`, { headers: { 'api-version': '7' } })
      : await fetch(`${gatewayUrl}/${kind}/orders/${order}`);
  await response.arrayBuffer();
  if (kind === 'invalid') {
    expect(response.status).toBe(406);
    return;
  }
  expect(response.status, `${kind} ${order}`).toBe(200);
  sent.versioned += 1;
  if (response.headers.get('deprecation') === 'true') sent.deprecated += 1;
}

/** Interleaved, so a scrape in the middle of the burst sees the mix in proportion anyway. */
async function sendMix(gatewayUrl: string, counts: Record<Kind, number>, sent: Sent): Promise<void> {
  const queue: Kind[] = [];
  const total = counts.v1 + counts.v2 + counts.invalid;
  const done: Record<Kind, number> = { v1: 0, v2: 0, invalid: 0 };
  for (let i = 0; i < total; i++) {
    // Largest remaining deficit first: v1, v2 and invalid spread evenly over the burst.
    const next = (['v1', 'v2', 'invalid'] as const)
      .filter((kind) => done[kind] < counts[kind])
      .sort((a, b) => done[a] / counts[a] - done[b] / counts[b])[0];
    if (next === undefined) break;
    done[next] += 1;
    queue.push(next);
  }
  for (const [n, kind] of queue.entries()) await send(gatewayUrl, kind, n, sent);
}

/** Counter values Prometheus holds for api_version_requests_total, by version, with the scrape time. */
async function scrapedCounts(url: string): Promise<{ counts: Map<string, number>; at: number }> {
  const result = await query(url, `sum by (version) (api_version_requests_total{job="${scrapeJobs.gateway}"})`);
  const stamps = await query(url, `max(timestamp(api_version_requests_total{job="${scrapeJobs.gateway}"}))`);
  return {
    counts: new Map(result.map((sample) => [sample.metric.version ?? '', Number(sample.value?.[1])])),
    at: Number(stamps[0]?.value?.[1] ?? 0),
  };
}

/**
 * v1 deprecated (announced, sunset far ahead), v2 current: the test does not depend on today's
 * date relative to the shipped policy's sunset.
 */
const POLICY = {
  default_version: 1,
  versions: [
    {
      version: 1,
      status: 'deprecated',
      announced: '2020-01-01',
      sunset: '2099-01-01T00:00:00Z',
      successor: 2,
      // As ops/versions.json declares it: the backend serves only version 2, the gateway presents version 1.
      changes: ORDERS_V1_CHANGES,
    },
    { version: 2, status: 'current' },
  ],
};

describeWithTool('prometheus', 'real Prometheus scraping the real gateway, evaluating ops/prometheus/rules.yml', () => {
  let stack: RunningStack | undefined;
  let prometheus: RunningPrometheus | undefined;
  let policyDir: string | undefined;

  beforeAll(async () => {
    policyDir = await mkdtemp(join(tmpdir(), 'ops-policy-'));
    const policyFile = join(policyDir, 'versions.json');
    await writeFile(policyFile, JSON.stringify(POLICY));
    stack = await startProcessStack({ gatewayEnv: { API_VERSIONS_FILE: policyFile } });
  }, 20_000);

  afterAll(async () => {
    await prometheus?.stop();
    await stack?.stop();
    if (policyDir) await rm(policyDir, { recursive: true, force: true });
  }, 20_000);

  it(
    'records api:deprecated_version_share:ratio_rate5m as the share of versioned traffic sent on deprecated ' + 'v1',
    async () => {
      if (!stack) throw new Error('stack did not start');
      const { gatewayUrl, gatewayAdminUrl } = stack;
      const deadline = Date.now() + BUDGET_MS;
      const sent: Sent = { deprecated: 0, versioned: 0 };

      // 1. Baseline: create every series the mix will increment, then start scraping.
      await sendMix(gatewayUrl, { v1: WARM_UP, v2: WARM_UP, invalid: WARM_UP }, { deprecated: 0, versioned: 0 });
      prometheus = await startPrometheus({
        targets: { [scrapeJobs.gateway]: new URL(gatewayAdminUrl).host },
        ruleFiles: [rulesFile],
      });
      const prom = prometheus;
      const diagnose = async () => {
        const rules = await ruleStates(prom.url).catch((error: unknown) => `rules API: ${String(error)}`);
        const targets = await fetch(`${prom.url}/api/v1/targets`).then(
          (r) => r.text(),
          (error: unknown) => String(error),
        );
        return `rules: ${JSON.stringify(rules)}\ntargets: ${targets}\nprometheus log:\n${prom.log()}`;
      };
      const baseline = { '1': WARM_UP, '2': WARM_UP, invalid: WARM_UP };
      const matches = (counts: Map<string, number>, expected: Record<string, number>) =>
        Object.entries(expected).every(([version, n]) => counts.get(version) === n);
      const inBudget = () => ({ timeoutMs: deadline - Date.now(), intervalMs: 250, lastSeen: diagnose });
      await eventually(
        'a scrape of the warm-up traffic',
        async () => matches((await scrapedCounts(prom.url)).counts, baseline),
        inBudget(),
      );

      // 2. The measured traffic.
      await sendMix(gatewayUrl, MIX, sent);
      expect(sent).toEqual({ deprecated: MIX.v1, versioned: MIX.v1 + MIX.v2 });
      const expectedShare = sent.deprecated / sent.versioned;

      // 3. A scrape that saw all of it, then a rule evaluation at least a second after that scrape.
      const complete = { '1': WARM_UP + MIX.v1, '2': WARM_UP + MIX.v2, invalid: WARM_UP + MIX.invalid };
      const scrapedAt = await eventually(
        'a scrape of all the traffic sent',
        async () => {
          const scraped = await scrapedCounts(prom.url);
          return matches(scraped.counts, complete) ? scraped.at : undefined;
        },
        inBudget(),
      );
      const share = await eventually(
        'api:deprecated_version_share:ratio_rate5m evaluated after that scrape',
        async () => {
          const samples = await query(prom.url, 'api:deprecated_version_share:ratio_rate5m[30s]');
          const latest = samples[0]?.values?.at(-1);
          return latest && latest[0] >= scrapedAt + 1 ? Number(latest[1]) : undefined;
        },
        inBudget(),
      );

      expect(Math.abs(share - expectedShare), `recorded share ${share}, sent ${expectedShare}`).toBeLessThanOrEqual(
        0.05,
      );
      // The unresolvable requests were counted, under version="invalid", and left out of the share.
      const perVersion = await query(prom.url, 'sum by (version) (api:version_requests:rate5m)');
      expect(perVersion.map((sample) => sample.metric.version).sort()).toEqual(['1', '2', 'invalid']);
      // Every rule, alerts included, evaluates without error against the real series.
      const unhealthy = (await ruleStates(prom.url)).filter((rule) => rule.health !== 'ok');
      expect(unhealthy).toEqual([]);
    },
    55_000,
  );

  it('answers every dashboard and rule expression without a query error', async () => {
    if (!prometheus) throw new Error('prometheus did not start (see the test above)');
    const expressions = [
      ...loadDashboards().flatMap(({ file, dashboard }) => dashboardExpressions(dashboard, file)),
      ...loadRules().expressions,
    ];
    const failures: string[] = [];
    for (const { source, expr } of expressions) {
      // e.g. many-to-many matching errors only show at evaluation, not at parse time
      await query(prometheus.url, substituteGrafanaVariables(expr)).catch((error: unknown) =>
        failures.push(`${source}: ${String(error)}`),
      );
    }
    expect(failures).toEqual([]);
  }, 10_000);
});
