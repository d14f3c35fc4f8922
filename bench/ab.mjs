// A/B of two gateway builds under identical conditions: CPU µs per request of each.
//
//   node bench/ab.mjs <gateway-a.js> <gateway-b.js> [path] [seconds]
//
// Both gateways run at the same time on the servers' core, each in front of its own backend (the dist/
// build), with the backends and two wrk runs (50 connections each) on the load core. The scheduler shares
// the servers' core between the two gateways, so the host's quiet and busy phases, which move a single run
// by up to 2×, hit both alike; two copies of the same build agree within about 3 %. Prints req/s and CPU
// µs per request (utime + stime from /proc/<pid>/stat) for each; run it again with A and B swapped.
// Absolute figures are higher than in `npm run bench` (two gateways share a core and its caches);
// compare A with B.
//
// To compare a change: `npm run build && cp -r dist /tmp/before`, change, `npm run build`, then
//   node bench/ab.mjs /tmp/before/gateway/src/main.js dist/gateway/src/main.js
// Needs `npm run build`, 2 cores, wrk and taskset (apt-get install -y wrk util-linux).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { LOAD_CPU, load, need, pinning, shell, startNode, wrkScript } from './harness.mjs';

const CONNECTIONS = 50;
const [gatewayA, gatewayB, path = '/v2/orders/ord-1001', seconds = '5'] = process.argv.slice(2);
if (gatewayB === undefined) {
  process.stderr.write('usage: node bench/ab.mjs <gateway-a.js> <gateway-b.js> [path] [seconds]\n');
  process.exit(2);
}
if (!pinning) {
  process.stderr.write('bench/ab.mjs needs 2 cores: one shared by the two gateways, one for the backends and wrk\n');
  process.exit(1);
}
need('wrk', 'apt-get install -y wrk');
need('taskset', 'apt-get install -y util-linux');

/** utime + stime in clock ticks (fields 14 and 15 of /proc/<pid>/stat, counted after the command name). */
const cpuTicks = (pid) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
};
const tickUs = 1e6 / Number(shell('getconf CLK_TCK'));

const dir = mkdtempSync(join(tmpdir(), 'bench-ab-'));
const children = [];
try {
  const start = async (name, entry) => {
    const backend = await startNode(dir, `${name}-backend`, 'dist/services/users-orders/src/main.js', { BACKEND_HOST: '127.0.0.1', BACKEND_PORT: '0', BACKEND_ADMIN_PORT: '0' }, { cpu: LOAD_CPU });
    children.push(backend.child);
    const gateway = await startNode(dir, `${name}-gateway`, resolve(entry), { GATEWAY_HOST: '127.0.0.1', GATEWAY_PORT: '0', GATEWAY_ADMIN_PORT: '0', BACKEND_URL: backend.url });
    children.push(gateway.child);
    return { label: `${name.toUpperCase()} ${entry}`, ...gateway };
  };
  const gateways = [await start('a', gatewayA), await start('b', gatewayB)];
  const script = wrkScript(join(dir, 'ab.lua'), { method: 'GET', path, headers: {} });
  const loadBoth = (duration) => Promise.all(gateways.map((gateway) => load(gateway.url, script, CONNECTIONS, duration)));

  await loadBoth(2); // warm-up: JIT, pool connections
  const before = gateways.map((gateway) => cpuTicks(gateway.child.pid));
  const results = await loadBoth(Number(seconds));
  gateways.forEach((gateway, i) => {
    const cpuUs = ((cpuTicks(gateway.child.pid) - before[i]) * tickUs) / results[i].requests;
    process.stdout.write(`${gateway.label}: ${results[i].rps.toFixed(0)} req/s, ${cpuUs.toFixed(0)} µs CPU per request, errors ${results[i].errors}\n`);
  });
} finally {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  await sleep(300);
  rmSync(dir, { recursive: true, force: true });
}
