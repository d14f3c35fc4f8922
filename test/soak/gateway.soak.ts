import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startProcessStack, type ProcessStack } from '../e2e/process-stack.js';
import { startLoad } from '../fault/load.js';

/**
 * Soak (real built processes, `npm run test:soak` builds first): 50 connections through the
 * gateway for 60 s (SOAK_SECONDS to change it). No answer but the expected one, and the gateway's
 * resident memory after the soak at most 1.2 times what it was after the warm-up (a leak per request
 * would show as steady growth).
 */
const CONNECTIONS = 50;
const WARM_UP_MS = 10_000;
const SOAK_MS = Number(process.env.SOAK_SECONDS ?? 60) * 1_000;
const PATHS = ['/v2/orders/ord-1001', '/v1/orders/ord-1001', '/orders/ord-1002', '/api/users/page?limit=5'];

let stack: ProcessStack;
beforeAll(async () => {
  stack = await startProcessStack();
});
afterAll(async () => {
  await stack?.stop();
});

/** prom-client's default process metric, from the gateway's admin listener. */
async function gatewayRss(): Promise<number> {
  const metrics = await (await fetch(`${stack.gatewayAdminUrl}/metrics`)).text();
  const match = /^process_resident_memory_bytes (\d+)/m.exec(metrics);
  if (match?.[1] === undefined) throw new Error('process_resident_memory_bytes missing');
  return Number(match[1]);
}

it(`serves ${CONNECTIONS} connections for the soak with only expected answers and stable memory`, async () => {
  const load = startLoad(stack.gatewayUrl, PATHS, CONNECTIONS);
  await sleep(WARM_UP_MS);
  const rssAfterWarmUp = await gatewayRss();
  const soakStart = performance.now();
  await sleep(SOAK_MS);
  const outcomes = await load.stop();
  // Idle a moment so a scavenge can run: what stays is what the soak kept.
  await sleep(1_000);
  const rssAfterSoak = await gatewayRss();

  const soaked = outcomes.filter((o) => o.startedAt >= soakStart);
  const unexpected = outcomes.filter((o) => o.error !== undefined || o.status !== 200);
  const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
  process.stdout.write(
    `soak: ${soaked.length} requests in ${SOAK_MS / 1000} s (${Math.round(soaked.length / (SOAK_MS / 1000))} req/s), ` +
      `${unexpected.length} unexpected; gateway RSS after warm-up ${mib(rssAfterWarmUp)} MiB, after soak ` +
      `${mib(rssAfterSoak)} MiB ` +
      `(${((rssAfterSoak / rssAfterWarmUp - 1) * 100).toFixed(1)} %)\n`,
  );
  expect(soaked.length).toBeGreaterThan(0);
  expect(unexpected.slice(0, 5)).toEqual([]);
  expect(rssAfterSoak).toBeLessThanOrEqual(rssAfterWarmUp * 1.2);
  expect(rssAfterSoak).toBeGreaterThanOrEqual(rssAfterWarmUp * 0.8);
});
