// What an API key costs a request: one gateway, the same request with and without a valid key, in turns.
//
//   node bench/keys-cost.mjs [route] [seconds]
//
// One built gateway (embedded consumer store) in front of one backend. Before the load it registers
// BENCH_KEYS consumers with a key each (default 10; e.g. 10000 to see whether the check grows with the keys).
// Then BENCH_ROUNDS rounds (default 8), each loading the route for `seconds` (default 5) without a key and
// with one of the keys, in alternating order (without first in odd rounds), and reads the gateway's CPU
// (utime + stime from /proc/<pid>/stat) around each phase (bench/alternating-phases.mjs: both phases of a round
// in the same process, back to back); what differs is the key on the request. Prints each round's req/s and CPU
// µs per request of both phases and the median ratios with/without over the rounds.
//
// Environment: BENCH_KEYS, BENCH_ROUNDS, BENCH_NODE (as bench/ab.mjs: a major, "path" or a binary; default
// the image's), BENCH_GATEWAY_NODE_OPTIONS (the gateway's node flags, e.g. --cpu-prof). Needs `npm run build`, 2 cores,
// wrk and taskset (apt-get install -y wrk util-linux).
import { join } from 'node:path';
import { CONNECTIONS, alternatePhases, withGatewayOnItsOwnCore } from './alternating-phases.mjs';
import { ROUTES, issueKey, nodeBinary, nodeVersion, wrkScript } from './harness.mjs';

/** Registrations in flight at once while the registry is filled. */
const REGISTERING = 16;
const [path = '/v1/orders/ord-1001', seconds = '5'] = process.argv.slice(2);
const keyCount = Number(process.env.BENCH_KEYS ?? 10);
const rounds = Number(process.env.BENCH_ROUNDS ?? 8);
const node = nodeBinary(process.env.BENCH_NODE);
const request = ROUTES.find((route) => route.name === path) ?? { method: 'GET', path, headers: {} };
const gatewayNodeOptions = process.env.BENCH_GATEWAY_NODE_OPTIONS ?? '';

await withGatewayOnItsOwnCore('bench/keys-cost.mjs', { node, gatewayNodeOptions }, async ({ gateway, dir }) => {
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
  await alternatePhases(gateway, scripts, {
    order: ['without', 'with'],
    over: 'with',
    under: 'without',
    dearer: 'with a key dearer',
    seconds: Number(seconds),
    rounds,
  });
});
