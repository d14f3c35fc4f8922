// Ratios of `npm run bench`'s targets, round by round: each round loads every target once, a few seconds apart, so
// the ratio of two targets within a round is less moved by the host's drift than the ratio of their medians.
// Prints, per route, the median of the rounds' ratios and each round's, by req/s (CPU per request where named).
//
//   node bench/round-ratios.mjs [bench/results/<date>.json]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../scripts/paths.mjs';
import { median } from './harness.mjs';

const file = process.argv[2] ?? join(repoRoot, 'bench/results', `${new Date().toISOString().slice(0, 10)}.json`);
const { runs } = JSON.parse(readFileSync(file, 'utf8'));

/** [label, numerator target, denominator target, figure]: what a reader of the verdict compares. */
const RATIOS = [
  ['gateway ÷ bare proxy, req/s', 'gateway', 'node-http-undici', 'rps'],
  ['stock @fastify/http-proxy ÷ bare proxy, req/s', 'fastify-http-proxy', 'node-http-undici', 'rps'],
  ['stock with request log ÷ bare proxy, req/s', 'fastify-http-proxy-log', 'node-http-undici', 'rps'],
  ['gateway ÷ stock, req/s', 'gateway', 'fastify-http-proxy', 'rps'],
  ['gateway ÷ stock with request log, req/s', 'gateway', 'fastify-http-proxy-log', 'rps'],
  ['traced gateway ÷ gateway, req/s', 'gateway-traced', 'gateway', 'rps'],
  ['traced gateway ÷ gateway, CPU per request', 'gateway-traced', 'gateway', 'cpuUs'],
];

for (const route of [...new Set(runs.map((run) => run.route))]) {
  process.stdout.write(`${route}\n`);
  const roundsOf = (target) =>
    runs.filter((run) => run.route === route && run.target === target).sort((a, b) => a.round - b.round);
  for (const [label, top, bottom, figure] of RATIOS) {
    const tops = roundsOf(top);
    const bottoms = roundsOf(bottom);
    if (tops.length === 0 || tops.length !== bottoms.length) continue;
    const ratios = tops.map((run, i) => run[figure] / bottoms[i][figure]);
    process.stdout.write(
      `  ${label.padEnd(46)} ${median(ratios).toFixed(3)}  rounds ${ratios.map((r) => r.toFixed(2)).join(' ')}\n`,
    );
  }
}
