// What `compare` on a version entry costs its clients: GET /v1/orders/ord-1001 through one gateway whose policy
// serves v1 from the backend's own route and nothing more (off), and through one whose policy declares v1 as
// changes with `"compare": {"sample": <share>}` (on): every sampled request also asks the backend for v2 after the
// answer is sent, translates it back and compares. Client p50/p99 and req/s of both, in alternating phases.
//
//   node bench/compare-cost.mjs [seconds] [share]
//
// A small backend that still serves v1 itself (bench/compare-backend.mjs) on the load core, two built gateways
// (embedded consumer stores) on the gateway core, loaded one at a time by wrk (50 connections) for `seconds`
// (default 5) each, BENCH_ROUNDS rounds (default 6), the order swapped every round; `share` is the sample
// (default 1: every request compared, the worst case). Prints each round and the medians.
//
// Needs `npm run build`, 2 cores, wrk and taskset (apt-get install -y wrk util-linux).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  LOAD_CPU,
  load,
  median,
  need,
  nodeBinary,
  nodeVersion,
  pinning,
  startGateway,
  startNode,
  wrkScript,
} from './harness.mjs';

const [seconds = '5', share = '1'] = process.argv.slice(2);
const rounds = Number(process.env.BENCH_ROUNDS ?? 6);
const node = nodeBinary(process.env.BENCH_NODE);
const CONNECTIONS = 50;

if (!pinning) {
  process.stderr.write('bench/compare-cost.mjs needs 2 cores: one for the gateways, one for the backend and wrk\n');
  process.exit(1);
}
need('wrk', 'apt-get install -y wrk');
need('taskset', 'apt-get install -y util-linux');

const v1 = { version: 1, status: 'deprecated', announced: '2026-06-01', sunset: '2030-01-01T00:00:00Z', successor: 2 };
const changes = [
  { resource: '/orders/:id', op: 'rename', field: 'user_id', to: 'customer_id' },
  { resource: '/orders/:id', op: 'scale', field: 'total', to: 'total_cents', factor: 100 },
  { resource: '/orders/:id', op: 'add', field: 'currency' },
];
const policies = {
  off: { default_version: 2, versions: [v1, { version: 2, status: 'current' }] },
  on: {
    default_version: 2,
    versions: [
      { ...v1, changes, compare: { sample: Number(share) } },
      { version: 2, status: 'current' },
    ],
  },
};

const dir = mkdtempSync(join(tmpdir(), 'bench-compare-cost-'));
const children = [];
try {
  const backend = await startNode(
    dir,
    'backend',
    new URL('./compare-backend.mjs', import.meta.url).pathname,
    {},
    { cpu: LOAD_CPU, node, nodeOptions: '' },
  );
  children.push(backend.child);
  const gateways = {};
  for (const [name, policy] of Object.entries(policies)) {
    const file = join(dir, `versions-${name}.json`);
    writeFileSync(file, JSON.stringify(policy));
    const gateway = await startGateway(dir, `gateway-${name}`, backend.url, { env: { API_VERSIONS_FILE: file }, node });
    children.push(gateway.child);
    gateways[name] = gateway;
  }
  process.stdout.write(
    `GET /v1/orders/ord-1001, compare off against on (sample ${share}), ${seconds} s per phase, ${rounds} rounds, ` +
      `${CONNECTIONS} connections, Node ${nodeVersion(node)}\n`,
  );
  const script = wrkScript(join(dir, 'v1.lua'), { method: 'GET', path: '/v1/orders/ord-1001', headers: {} });
  for (const name of ['off', 'on']) await load(gateways[name].url, script, CONNECTIONS, 2);
  const figures = { off: [], on: [] };
  for (let round = 1; round <= rounds; round++) {
    const order = round % 2 === 1 ? ['off', 'on'] : ['on', 'off'];
    const results = {};
    for (const name of order) results[name] = await load(gateways[name].url, script, CONNECTIONS, Number(seconds));
    for (const name of order) figures[name].push(results[name]);
    const show = (name) =>
      `${name} ${results[name].rps.toFixed(0)} req/s p50 ${results[name].p50Ms.toFixed(2)} ms p99 ` +
      `${results[name].p99Ms.toFixed(2)} ms errors ${results[name].errors}`;
    process.stdout.write(`round ${round} (${order.join(' first, ')} second): ${show('off')} | ${show('on')}\n`);
  }
  const med = (name, key) => median(figures[name].map((result) => result[key]));
  process.stdout.write(
    `median: off ${med('off', 'rps').toFixed(0)} req/s p99 ${med('off', 'p99Ms').toFixed(2)} ms | on ` +
      `${med('on', 'rps').toFixed(0)} req/s p99 ${med('on', 'p99Ms').toFixed(2)} ms | p99 on/off ` +
      `${(med('on', 'p99Ms') / med('off', 'p99Ms')).toFixed(3)}\n`,
  );
  const comparison = await (await fetch(`${gateways.on.adminUrl}/versions/1/comparison`)).json();
  process.stdout.write(
    `compared ${comparison.compared}, differ ${comparison.differ}, error ${comparison.error}, skipped ` +
      `${comparison.skipped}\n`,
  );
} finally {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  await sleep(300);
  rmSync(dir, { recursive: true, force: true });
}
