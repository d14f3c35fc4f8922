import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startProcessStack, type ProcessStack } from '../e2e/process-stack.js';
import { liveHeap, liveHeapProbe, rssGrowthBeyondYoungGeneration, youngGeneration } from '../support/live-heap.js';
import { expectServes } from './raw.js';
import { metricValue, scrape, seriesOf } from '../support/metrics.js';

/**
 * Metric-cardinality attack against the built processes (npm run build first): request after request with
 * values never seen before wherever a client controls one, which must not become new label values.
 */
/**
 * The gateway's memory settles over its first few thousand requests (V8 and allocator warm-up, code
 * optimised on the way); "before" is measured after this warm-up with the same mix.
 */
const WARM_UP = 5_000;
const ATTACK = 20_000;
const CONCURRENCY = 16;
/**
 * One new (method, route, status) combination costs 17 series: the counter and 16 histogram series. After
 * a warm-up with the same mix, the attack may add at most two such combinations, however many requests.
 */
const MAX_NEW_SERIES = 34;
/**
 * The live heap after a full collection, the measure of a leak: the attack grows it by 1–2 %, while a leak of
 * about 100 bytes per request (a Set of every client id seen, tried once) grows it by 6–8 % and fails.
 */
const MAX_LIVE_HEAP_GROWTH = 0.05;
const MAX_RSS_GROWTH = 0.2;

let stack: ProcessStack;
beforeAll(async () => {
  stack = await startProcessStack({ gatewayEnv: liveHeapProbe() });
});
afterAll(async () => {
  await stack?.stop();
});

const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)] as T;
const token = () => randomUUID().slice(0, 8 + Math.floor(Math.random() * 20));

/** A path from every route family the gateway has, with random segments, and unmatched paths. */
function randomPath(): string {
  return pick([
    () => `/${token()}/${token()}`,
    () => `/api/users/${token()}`,
    () => `/api/users/page?cursor=${token()}`,
    () => `/v${pick(['1', '2', '9', token()])}/orders/${token()}`,
    () => `/api/v${pick(['1', '2'])}/orders/${token()}`,
    () => `/orders/${token()}`,
  ])();
}

async function hammer(baseUrl: string, count: number): Promise<Map<number, number>> {
  const agent = new Agent({ connections: CONCURRENCY });
  const statuses = new Map<number, number>();
  let sent = 0;
  const worker = async (): Promise<void> => {
    while (sent < count) {
      sent++;
      const res = await request(`${baseUrl}${randomPath()}`, {
        dispatcher: agent,
        headers: {
          'api-version': pick(['1', '2', token(), String(Math.floor(Math.random() * 1e9))]),
          'x-client-id': token(),
          'x-request-id': token(),
        },
      });
      await res.body.dump();
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await agent.close();
  return statuses;
}

it(
  `keeps /metrics to at most ${MAX_NEW_SERIES} new series, the gateway's live heap within 5 % and its RSS ` +
    `within 20 % over ${ATTACK} requests of random paths, versions and ids`,
  async () => {
    await hammer(stack.gatewayUrl, WARM_UP);
    const [gatewayBefore, backendBefore] = await Promise.all([
      scrape(stack.gatewayAdminUrl),
      scrape(stack.backendAdminUrl),
    ]);
    const liveHeapBefore = await liveHeap(stack.gateway);

    const started = performance.now();
    const statuses = await hammer(stack.gatewayUrl, ATTACK);
    const elapsedMs = performance.now() - started;
    const [gatewayAfter, backendAfter] = await Promise.all([
      scrape(stack.gatewayAdminUrl),
      scrape(stack.backendAdminUrl),
    ]);
    const liveHeapAfter = await liveHeap(stack.gateway);

    const figures = {
      elapsedMs: Math.round(elapsedMs),
      statuses: Object.fromEntries(statuses),
      gatewaySeries: [seriesOf(gatewayBefore).length, seriesOf(gatewayAfter).length],
      backendSeries: [seriesOf(backendBefore).length, seriesOf(backendAfter).length],
      gatewayLiveHeapMiB: [liveHeapBefore, liveHeapAfter].map(mib),
      gatewayRssMiB: [gatewayBefore, gatewayAfter].map((text) =>
        mib(metricValue(text, 'process_resident_memory_bytes')),
      ),
      gatewayYoungGenerationMiB: [gatewayBefore, gatewayAfter].map((text) => mib(youngGeneration(text))),
    };
    // The figures docs/testing.md#hostile-clients reports.
    process.stdout.write(`cardinality attack: ${JSON.stringify(figures)}\n`);

    expect([...statuses.keys()].every((status) => status < 500)).toBe(true);
    expect(seriesOf(gatewayAfter).length - seriesOf(gatewayBefore).length).toBeLessThanOrEqual(MAX_NEW_SERIES);
    expect(seriesOf(backendAfter).length - seriesOf(backendBefore).length).toBeLessThanOrEqual(MAX_NEW_SERIES);
    // No client-chosen value appears on /metrics, except the consumers of deprecated versions, which are
    // bounded: at most 20 named and "other" per version (docs/replicas.md#consumer-series).
    const consumerSeries = (text: string) =>
      text.split('\n').filter((line) => line.startsWith('api_version_consumer_requests_total{'));
    const otherLines = (text: string) =>
      text
        .split('\n')
        .filter((line) => !line.startsWith('api_version_consumer_requests_total{'))
        .join('\n');
    for (const text of [gatewayAfter, backendAfter]) expect(otherLines(text)).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{1,4}/);
    expect(consumerSeries(backendAfter)).toEqual([]);
    const perVersion = new Map<string, number>();
    for (const line of consumerSeries(gatewayAfter)) {
      const version = /version="([^"]*)"/.exec(line)?.[1] ?? '';
      perVersion.set(version, (perVersion.get(version) ?? 0) + 1);
    }
    expect(perVersion.size).toBeGreaterThan(0);
    for (const count of perVersion.values()) expect(count).toBeLessThanOrEqual(21);
    expect(consumerSeries(gatewayAfter)).toHaveLength(consumerSeries(gatewayBefore).length);
    expect(liveHeapAfter).toBeLessThanOrEqual(liveHeapBefore * (1 + MAX_LIVE_HEAP_GROWTH));
    expect(rssGrowthBeyondYoungGeneration(gatewayBefore, gatewayAfter)).toBeLessThanOrEqual(MAX_RSS_GROWTH);
    await expectServes(stack.gatewayUrl);
  },
);
