// What a pin costs a request: one gateway, one consumer's key, its request naming no version (served by its pin)
// against the same request naming the version in the path, in turns.
//
//   node bench/pins-cost.mjs [seconds]
//
// One built gateway (embedded consumer store) in front of one backend. It registers one consumer, pinned to the
// newest current version (v2 in ops/versions.json), with a key. Then BENCH_ROUNDS rounds (default 8), each
// loading for `seconds` (default 5) `GET /orders/ord-1001` with the key (the pin chooses v2) and `GET
// /v2/orders/ord-1001` with the key (the path chooses v2), in alternating order (pinned first in odd rounds),
// and reads the gateway's CPU (utime + stime from /proc/<pid>/stat) around each phase. Both phases are served
// by the same backend route and counted for the same consumer; what differs is who chose the version. Prints
// each round's req/s and CPU µs per request of both phases and the median ratios pinned/named over the rounds.
//
// Environment: BENCH_ROUNDS, BENCH_NODE (as bench/ab.mjs: a major, "path" or a binary; default the image's).
// Needs `npm run build`, 2 cores, wrk and taskset (apt-get install -y wrk util-linux).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  LOAD_CPU,
  cpuMicros,
  issueKey,
  load,
  median,
  need,
  nodeBinary,
  nodeVersion,
  pinning,
  startGatewayStack,
  wrkScript,
} from './harness.mjs';

const CONNECTIONS = 50;
const [seconds = '5'] = process.argv.slice(2);
const rounds = Number(process.env.BENCH_ROUNDS ?? 8);
const node = nodeBinary(process.env.BENCH_NODE);

if (!pinning) {
  process.stderr.write('bench/pins-cost.mjs needs 2 cores: one for the gateway, one for the backend and wrk\n');
  process.exit(1);
}
need('wrk', 'apt-get install -y wrk');
need('taskset', 'apt-get install -y util-linux');

const dir = mkdtempSync(join(tmpdir(), 'bench-pins-'));
const children = [];
try {
  const { gateway } = await startGatewayStack(dir, children, { node, backendCpu: LOAD_CPU });
  const key = await issueKey(gateway.adminUrl, 'bench pinned');
  const consumer = await (await fetch(`${gateway.url}/consumer`, { headers: { 'API-Key': key } })).json();
  process.stdout.write(
    `GET /orders/ord-1001 (pinned to v${consumer.pinned_version}) against GET /v2/orders/ord-1001, both with the ` +
      `key, ` +
      `${seconds} s per phase, ${rounds} rounds, ${CONNECTIONS} connections, Node ${nodeVersion(node)}\n`,
  );
  const headers = { 'API-Key': key };
  const scripts = {
    pinned: wrkScript(join(dir, 'pinned.lua'), { method: 'GET', path: '/orders/ord-1001', headers }),
    named: wrkScript(join(dir, 'named.lua'), { method: 'GET', path: '/v2/orders/ord-1001', headers }),
  };
  const phase = async (name) => {
    const before = cpuMicros(gateway.child.pid);
    const result = await load(gateway.url, scripts[name], CONNECTIONS, Number(seconds));
    return { rps: result.rps, cpuUs: (cpuMicros(gateway.child.pid) - before) / result.requests, errors: result.errors };
  };
  await phase('pinned'); // warm-up: JIT, pool connections, the consumer's first use
  await phase('named');

  const cpuRatios = [];
  const rpsRatios = [];
  for (let round = 1; round <= rounds; round++) {
    const order = round % 2 === 1 ? ['pinned', 'named'] : ['named', 'pinned'];
    const figures = {};
    for (const name of order) figures[name] = await phase(name);
    const cpuRatio = figures.pinned.cpuUs / figures.named.cpuUs;
    const rpsRatio = figures.pinned.rps / figures.named.rps;
    cpuRatios.push(cpuRatio);
    rpsRatios.push(rpsRatio);
    const show = (name) =>
      `${name} ${figures[name].rps.toFixed(0)} req/s ${figures[name].cpuUs.toFixed(0)} µs CPU/req errors ` +
      `${figures[name].errors}`;
    process.stdout.write(
      `round ${round} (${order.join(' first, ')} second): ${show('pinned')} | ${show('named')} | CPU pinned/named ` +
        `${cpuRatio.toFixed(3)}, req/s ${rpsRatio.toFixed(3)}\n`,
    );
  }
  const dearer = cpuRatios.filter((ratio) => ratio > 1).length;
  process.stdout.write(
    `median pinned/named: CPU per request ${median(cpuRatios).toFixed(3)} (pinned dearer in ${dearer} of ${rounds} ` +
      `rounds), ` +
      `req/s ${median(rpsRatios).toFixed(3)}\n`,
  );
} finally {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  await sleep(300);
  rmSync(dir, { recursive: true, force: true });
}
