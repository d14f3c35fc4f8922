// What a pin costs a request: one gateway, one consumer's key, its request naming no version (served by its pin)
// against the same request naming the version in the path, in turns.
//
//   node bench/pins-cost.mjs [seconds]
//
// One built gateway (embedded consumer store) in front of one backend. It registers one consumer, pinned to the
// newest current version (v2 in ops/versions.json), with a key. Then BENCH_ROUNDS rounds (default 8), each
// loading for `seconds` (default 5) `GET /orders/ord-1001` with the key (the pin chooses v2) and `GET
// /v2/orders/ord-1001` with the key (the path chooses v2), in alternating order (pinned first in odd rounds),
// and reads the gateway's CPU (utime + stime from /proc/<pid>/stat) around each phase
// (bench/alternating-phases.mjs). Both phases are served by the same backend route and counted for the same
// consumer; what differs is who chose the version. Prints each round's req/s and CPU µs per request of both
// phases and the median ratios pinned/named over the rounds.
//
// Environment: BENCH_ROUNDS, BENCH_NODE (as bench/ab.mjs: a major, "path" or a binary; default the image's).
// Needs `npm run build`, 2 cores, wrk and taskset (apt-get install -y wrk util-linux).
import { join } from 'node:path';
import { CONNECTIONS, alternatePhases, withGatewayOnItsOwnCore } from './alternating-phases.mjs';
import { issueKey, nodeBinary, nodeVersion, wrkScript } from './harness.mjs';

const [seconds = '5'] = process.argv.slice(2);
const rounds = Number(process.env.BENCH_ROUNDS ?? 8);
const node = nodeBinary(process.env.BENCH_NODE);

await withGatewayOnItsOwnCore('bench/pins-cost.mjs', { node }, async ({ gateway, dir }) => {
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
  await alternatePhases(gateway, scripts, {
    order: ['pinned', 'named'],
    over: 'pinned',
    under: 'named',
    dearer: 'pinned dearer',
    seconds: Number(seconds),
    rounds,
  });
});
