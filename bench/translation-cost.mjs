// What serving a version declared as changes costs a request: one gateway, GET /v1/orders/ord-1001 (declared as
// changes in ops/versions.json, so answered from the backend's v2 and translated back) against GET
// /v2/orders/ord-1001 (the backend's own representation, streamed through), in turns.
//
//   node bench/translation-cost.mjs [seconds]
//
// One built gateway (embedded consumer store) in front of one backend. Then BENCH_ROUNDS rounds (default 8),
// each loading for `seconds` (default 5) both routes in alternating order (translated first in odd rounds), and
// reads the gateway's CPU (utime + stime from /proc/<pid>/stat) around each phase (bench/alternating-phases.mjs).
// Both phases reach the same backend route; what differs is the translation of the answer (v1 is deprecated, so
// its answers also carry Deprecation, Sunset and Link). Prints each round's req/s and CPU µs per request of both
// phases and the median ratios translated/untranslated over the rounds.
//
// Environment: BENCH_ROUNDS, BENCH_NODE (as bench/ab.mjs: a major, "path" or a binary; default the image's).
// Needs `npm run build`, 2 cores, wrk and taskset (apt-get install -y wrk util-linux).
import { join } from 'node:path';
import { CONNECTIONS, alternatePhases, withGatewayOnItsOwnCore } from './alternating-phases.mjs';
import { nodeBinary, nodeVersion, wrkScript } from './harness.mjs';

const [seconds = '5'] = process.argv.slice(2);
const rounds = Number(process.env.BENCH_ROUNDS ?? 8);
const node = nodeBinary(process.env.BENCH_NODE);

await withGatewayOnItsOwnCore('bench/translation-cost.mjs', { node }, async ({ gateway, dir }) => {
  process.stdout.write(
    `GET /v1/orders/ord-1001 (translated from v2) against GET /v2/orders/ord-1001, ${seconds} s per phase, ` +
      `${rounds} rounds, ${CONNECTIONS} connections, Node ${nodeVersion(node)}\n`,
  );
  const scripts = {
    translated: wrkScript(join(dir, 'translated.lua'), { method: 'GET', path: '/v1/orders/ord-1001', headers: {} }),
    untranslated: wrkScript(join(dir, 'untranslated.lua'), { method: 'GET', path: '/v2/orders/ord-1001', headers: {} }),
  };
  await alternatePhases(gateway, scripts, {
    order: ['translated', 'untranslated'],
    over: 'translated',
    under: 'untranslated',
    dearer: 'translated dearer',
    seconds: Number(seconds),
    rounds,
  });
});
