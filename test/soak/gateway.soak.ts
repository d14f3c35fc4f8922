import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startProcessStack, type ProcessStack } from '../e2e/process-stack.js';
import { startLoad } from '../fault/load.js';
import { liveHeap, liveHeapProbe, rssGrowthBeyondYoungGeneration, youngGeneration } from '../support/live-heap.js';
import { metricValue, scrape } from '../support/metrics.js';

/**
 * Soak (real built processes, `npm run test:soak` builds first): 50 connections through the
 * gateway for 60 s (SOAK_SECONDS to change it). No answer but the expected one; the gateway's live
 * heap after a full collection at the end of the soak at most 1.1 times what it was after the
 * warm-up, both under the load, so both hold the requests in flight (a leak of 10 bytes per request
 * would add about 2 MiB, 8 %, over a minute's 200,000 requests and more), and its resident
 * memory after the soak within 20 % of it, less the young generation's growth (test/support/live-heap.ts).
 */
const CONNECTIONS = 50;
const WARM_UP_MS = 10_000;
const SOAK_MS = Number(process.env.SOAK_SECONDS ?? 60) * 1_000;
const PATHS = ['/v2/orders/ord-1001', '/v1/orders/ord-1001', '/orders/ord-1002', '/api/users/page?limit=5'];

let stack: ProcessStack;
beforeAll(async () => {
  stack = await startProcessStack({ gatewayEnv: liveHeapProbe() });
});
afterAll(async () => {
  await stack?.stop();
});

it(`serves ${CONNECTIONS} connections for the soak with only expected answers and stable memory`, async () => {
  const load = startLoad(stack.gatewayUrl, PATHS, CONNECTIONS);
  await sleep(WARM_UP_MS);
  const metricsAfterWarmUp = await scrape(stack.gatewayAdminUrl);
  const heapAfterWarmUp = await liveHeap(stack.gateway);
  const soakStart = performance.now();
  await sleep(SOAK_MS);
  const heapAfterSoak = await liveHeap(stack.gateway);
  const outcomes = await load.stop();
  // Idle a moment so a scavenge can run: what stays is what the soak kept.
  await sleep(1_000);
  const metricsAfterSoak = await scrape(stack.gatewayAdminUrl);

  const soaked = outcomes.filter((o) => o.startedAt >= soakStart);
  const unexpected = outcomes.filter((o) => o.error !== undefined || o.status !== 200);
  const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
  const percent = (ratio: number) => `${(ratio * 100).toFixed(1)} %`;
  const rss = (metrics: string) => metricValue(metrics, 'process_resident_memory_bytes');
  const rssGrowth = rssGrowthBeyondYoungGeneration(metricsAfterWarmUp, metricsAfterSoak);
  process.stdout.write(
    `soak: ${soaked.length} requests in ${SOAK_MS / 1000} s (${Math.round(soaked.length / (SOAK_MS / 1000))} req/s), ` +
      `${unexpected.length} unexpected; gateway live heap ${mib(heapAfterWarmUp)} → ${mib(heapAfterSoak)} MiB ` +
      `(${percent(heapAfterSoak / heapAfterWarmUp - 1)}); RSS ${mib(rss(metricsAfterWarmUp))} → ` +
      `${mib(rss(metricsAfterSoak))} MiB, young generation ${mib(youngGeneration(metricsAfterWarmUp))} → ` +
      `${mib(youngGeneration(metricsAfterSoak))} MiB, RSS beyond it ${percent(rssGrowth)}\n`,
  );
  expect(soaked.length).toBeGreaterThan(0);
  expect(unexpected.slice(0, 5)).toEqual([]);
  expect(heapAfterSoak).toBeLessThanOrEqual(heapAfterWarmUp * 1.1);
  expect(rssGrowth).toBeLessThanOrEqual(0.2);
  expect(rssGrowth).toBeGreaterThanOrEqual(-0.2);
});
