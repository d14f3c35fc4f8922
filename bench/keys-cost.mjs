// What an API key costs a request: one gateway, the same request with and without a valid key, in turns.
//
//   node bench/keys-cost.mjs [route] [seconds]
//
// One built gateway (embedded consumer store) in front of one backend. Before the load it registers
// BENCH_KEYS consumers with a key each (default 10; e.g. 10000 to see whether the check grows with the keys).
// Then BENCH_ROUNDS rounds (default 8), each loading the route for `seconds` (default 5) without a key and
// with one of the keys, in alternating order (without first in odd rounds), and reads the gateway's CPU
// (utime + stime from /proc/<pid>/stat) around each phase. Both phases of a round run in the same process,
// with the same registry and JIT state, back to back, so neither a start order nor the host's drift over
// minutes favours one; what differs is the key on the request. Prints each round's req/s and CPU µs per
// request of both phases and the median ratios with/without over the rounds.
//
// Environment: BENCH_KEYS, BENCH_ROUNDS, BENCH_NODE (as bench/ab.mjs: a major, "path" or a binary; default
// the image's), BENCH_GATEWAY_NODE_OPTIONS (the gateway's node flags, e.g. --cpu-prof). Needs `npm run build`, 2 cores,
// wrk and taskset (apt-get install -y wrk util-linux).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  LOAD_CPU,
  ROUTES,
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
/** Registrations in flight at once while the registry is filled. */
const REGISTERING = 16;
const [path = '/v1/orders/ord-1001', seconds = '5'] = process.argv.slice(2);
const keyCount = Number(process.env.BENCH_KEYS ?? 10);
const rounds = Number(process.env.BENCH_ROUNDS ?? 8);
const node = nodeBinary(process.env.BENCH_NODE);
const request = ROUTES.find((route) => route.name === path) ?? { method: 'GET', path, headers: {} };

if (!pinning) {
  process.stderr.write('bench/keys-cost.mjs needs 2 cores: one for the gateway, one for the backend and wrk\n');
  process.exit(1);
}
need('wrk', 'apt-get install -y wrk');
need('taskset', 'apt-get install -y util-linux');

const dir = mkdtempSync(join(tmpdir(), 'bench-keys-'));
const children = [];
try {
  const { gateway } = await startGatewayStack(dir, children, {
    node,
    backendCpu: LOAD_CPU,
    gatewayNodeOptions: process.env.BENCH_GATEWAY_NODE_OPTIONS ?? '',
  });

  const started = Date.now();
  const keys = [];
  for (let next = 0; next < keyCount; next += REGISTERING) {
    const batch = Array.from({ length: Math.min(REGISTERING, keyCount - next) }, (_, i) =>
      issueKey(gateway.adminUrl, `bench ${next + i}`),
    );
    keys.push(...(await Promise.all(batch)));
  }
  process.stdout.write(
    `${request.method} ${request.path}, ${seconds} s per phase, ${rounds} rounds, ${CONNECTIONS} connections, Node ` +
      `${nodeVersion(node)}, ` +
      `${keyCount} consumers with a key each (registered in ${((Date.now() - started) / 1000).toFixed(0)} s)\n`,
  );

  // The key of the middle consumer: neither the first nor the last registered.
  const scripts = {
    without: wrkScript(join(dir, 'without.lua'), request),
    with: wrkScript(join(dir, 'with.lua'), {
      ...request,
      headers: { ...request.headers, 'API-Key': keys[keys.length >> 1] },
    }),
  };
  const phase = async (name) => {
    const before = cpuMicros(gateway.child.pid);
    const result = await load(gateway.url, scripts[name], CONNECTIONS, Number(seconds));
    return { rps: result.rps, cpuUs: (cpuMicros(gateway.child.pid) - before) / result.requests, errors: result.errors };
  };
  await phase('without'); // warm-up: JIT, pool connections, the consumer's first use
  await phase('with');

  const cpuRatios = [];
  const rpsRatios = [];
  for (let round = 1; round <= rounds; round++) {
    const order = round % 2 === 1 ? ['without', 'with'] : ['with', 'without'];
    const figures = {};
    for (const name of order) figures[name] = await phase(name);
    const cpuRatio = figures.with.cpuUs / figures.without.cpuUs;
    const rpsRatio = figures.with.rps / figures.without.rps;
    cpuRatios.push(cpuRatio);
    rpsRatios.push(rpsRatio);
    const show = (name) =>
      `${name} ${figures[name].rps.toFixed(0)} req/s ${figures[name].cpuUs.toFixed(0)} µs CPU/req errors ` +
      `${figures[name].errors}`;
    process.stdout.write(
      `round ${round} (${order.join(' first, ')} second): ${show('without')} | ${show('with')} | CPU with/without ` +
        `${cpuRatio.toFixed(3)}, req/s ${rpsRatio.toFixed(3)}\n`,
    );
  }
  const dearer = cpuRatios.filter((ratio) => ratio > 1).length;
  process.stdout.write(
    `median with/without: CPU per request ${median(cpuRatios).toFixed(3)} (with a key dearer in ${dearer} of ` +
      `${rounds} rounds), ` +
      `req/s ${median(rpsRatios).toFixed(3)}\n`,
  );
} finally {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  await sleep(300);
  rmSync(dir, { recursive: true, force: true });
}
