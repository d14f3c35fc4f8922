// A/B of node flags for the backend: requests/s of the backend's own routes with flags A and flags B, in
// memory and on PostgreSQL, straight to the backend (no gateway, so the backend's cost is all that is
// measured). Pairs alternate which flags run first; each run is wrk (1 thread) on the load core against a
// fresh backend pinned to the servers' core (bench/harness.mjs), on the Node the image ships unless
// BENCH_NODE says otherwise. Needs `npm run build`, wrk and taskset.
//   node bench/backend-node-options.mjs [--a=] [--b=--max-semi-space-size=2] [--pairs 3] [--seconds 10]
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { entries } from '../scripts/paths.mjs';
import { load, median, need, nodeBinary, nodeVersion, startNode, wrkScript } from './harness.mjs';
import { fillUsers, startBenchPostgres } from './postgres.mjs';

const { values } = parseArgs({
  options: {
    a: { type: 'string', default: '' },
    b: { type: 'string', default: '--max-semi-space-size=2' },
    pairs: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '10' },
  },
});
need('wrk', 'apt-get install -y --no-install-recommends wrk');
const node = nodeBinary(process.env.BENCH_NODE);
const CONNECTIONS = 16;
const dir = mkdtempSync(join(tmpdir(), 'bench-backend-flags-'));
const postgres = await startBenchPostgres();

const json = { 'Content-Type': 'application/json' };
const createBody = '{"name":"Bench User","email":"bench@example.com"}';
const CASES = [
  { name: 'GET /api/users/{id} (memory)', store: 'memory', method: 'GET', path: '/api/users/user-1', headers: {} },
  {
    name: 'POST /api/users (memory)',
    store: 'memory',
    method: 'POST',
    path: '/api/users',
    headers: json,
    body: createBody,
  },
  { name: 'GET /api/v2/orders/ord-1001', store: 'memory', method: 'GET', path: '/api/v2/orders/ord-1001', headers: {} },
  {
    name: 'GET /api/users/page?limit=20 (memory)',
    store: 'memory',
    method: 'GET',
    path: '/api/users/page?limit=20',
    headers: {},
  },
  {
    name: 'GET /api/users/{id} (postgres)',
    store: 'postgres',
    method: 'GET',
    path: '/api/users/user-5000',
    headers: {},
  },
  {
    name: 'GET /api/users/page?limit=20 (postgres)',
    store: 'postgres',
    method: 'GET',
    path: '/api/users/page?limit=20',
    headers: {},
  },
];

async function backend(flags, store) {
  const env = {
    BACKEND_HOST: '127.0.0.1',
    BACKEND_PORT: '0',
    BACKEND_ADMIN_PORT: '0',
    ...(store === 'postgres' ? { DATABASE_URL: postgres.url } : {}),
  };
  const started = await startNode(dir, `backend-${store}`, entries.backend, env, { node, nodeOptions: flags });
  // The in-memory routes read user-1 and page through 100 users.
  if (store === 'memory') {
    for (let i = 0; i < 100; i++)
      await fetch(`${started.url}/api/users`, { method: 'POST', headers: json, body: createBody });
  }
  return started;
}

try {
  await fillUsers(postgres.url, 10_000);
  console.log(
    `node ${nodeVersion(node)}; A: ${values.a || '(no flags)'}; B: ${values.b || '(no flags)'}; wrk ${CONNECTIONS} ` +
      `connections, ${values.seconds} s per run after 2 s of warm-up, ${values.pairs} pairs\n`,
  );
  console.log('| request (straight to the backend) | A req/s (median) | B req/s (median) | B/A (median of pairs) |');
  console.log('|---|---:|---:|---:|');
  for (const request of CASES) {
    const script = wrkScript(join(dir, `${request.name.replace(/\W+/g, '-')}.lua`), request);
    const rates = { a: [], b: [] };
    const ratios = [];
    for (let pair = 0; pair < Number(values.pairs); pair++) {
      const order = pair % 2 === 0 ? ['a', 'b'] : ['b', 'a'];
      const pairRates = {};
      for (const side of order) {
        const started = await backend(values[side], request.store);
        try {
          await load(started.url, script, CONNECTIONS, 2);
          const result = await load(started.url, script, CONNECTIONS, Number(values.seconds));
          if (result.errors > 0) throw new Error(`${request.name} (${side}): ${result.errors} errors`);
          pairRates[side] = result.rps;
          rates[side].push(result.rps);
        } finally {
          started.child.kill('SIGTERM');
          await sleep(300);
        }
      }
      ratios.push(pairRates.b / pairRates.a);
    }
    console.log(
      `| ${request.name} | ${median(rates.a).toFixed(0)} | ${median(rates.b).toFixed(0)} | ` +
        `${median(ratios).toFixed(3)}× |`,
    );
  }
} finally {
  await postgres.stop();
}
