// Users on PostgreSQL against users in memory, through the gateway (docs/backend.md#users-in-postgresql):
// GET /api/users/{id} with wrk at 16 connections, POST /api/users at 1, 16 and 64 (the backend's memory while
// GET /api/users streams is bench/users-stream-memory.mjs). Runs the built processes (npm run build first) on
// the Node the Docker image ships (BENCH_NODE as in bench/ab.mjs), the servers pinned to one core and wrk to
// the other (bench/harness.mjs); PostgreSQL is embedded (bench/postgres.mjs) and pinned to wrk's core, off the
// servers' core, as a database on a host of its own would be. Each row runs BENCH_ROUNDS times (default 3),
// the two stores in turns (memory first in odd rounds), and reports medians: the host's drift over minutes
// hits both stores alike.
//   node bench/users-postgres.mjs
import { mkdtempSync } from 'node:fs';
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
  startBackend,
  startGateway,
  wrkScript,
} from './harness.mjs';
import { fillUsers, freePort, startBenchPostgres } from './postgres.mjs';

const USERS = 1_000_000;
/** GET rows run at 16 connections; creates at each of these, since their batching depends on concurrency. */
const GET_CONNECTIONS = 16;
const CREATE_CONNECTIONS = [1, 16, 64];
const SECONDS = 10;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const node = nodeBinary(process.env.BENCH_NODE);
need('wrk', 'apt-get install -y --no-install-recommends wrk');
need('taskset', 'apt-get install -y util-linux');

const dir = mkdtempSync(join(tmpdir(), 'bench-users-postgres-'));
const postgres = await startBenchPostgres({ cpu: LOAD_CPU });
const started = [];

async function stack(name, env) {
  const adminPort = await freePort();
  const backend = await startBackend(dir, `backend-${name}`, {
    env: { BACKEND_ADMIN_PORT: String(adminPort), ...env },
    node,
  });
  // Each gateway its own consumer store (the default directory is one per checkout) and no database.
  const gateway = await startGateway(dir, `gateway-${name}`, backend.url, { node });
  started.push(backend.child, gateway.child);
  return { name, backend, gateway, adminUrl: `http://127.0.0.1:${adminPort}` };
}

/** Mean seconds per statement by operation, from the backend's db_query_duration_seconds. */
async function statementMeans(adminUrl) {
  const text = await (await fetch(`${adminUrl}/metrics`)).text();
  const read = (suffix) =>
    Object.fromEntries(
      [
        ...text.matchAll(new RegExp(`^db_query_duration_seconds_${suffix}\\{operation="([a-z_]+)"\\} (\\S+)$`, 'gm')),
      ].map((m) => [m[1], Number(m[2])]),
    );
  const [sums, counts] = [read('sum'), read('count')];
  return Object.fromEntries(Object.keys(counts).map((op) => [op, sums[op] / counts[op]]));
}

try {
  const memory = await stack('memory', {});
  const onPostgres = await stack('postgres', { DATABASE_URL: postgres.url });
  const fillStarted = Date.now();
  await fillUsers(postgres.url, USERS);
  console.log(
    `node ${nodeVersion(node)}; ${ROUNDS} rounds, medians; PostgreSQL embedded with ` +
      `${USERS.toLocaleString('en-US')} users (inserted in ${((Date.now() - fillStarted) / 1000).toFixed(1)} s); ` +
      `wrk ${SECONDS} s per row after a 2 s warm-up\n`,
  );
  await fetch(`${memory.gateway.url}/api/users`, { method: 'POST', body: '{"name":"Ada","email":"ada@example.com"}' });

  const rows = [];
  const routes = [
    {
      name: 'GET /api/users/{id}',
      method: 'GET',
      pathFor: (s) => (s.name === 'memory' ? '/api/users/user-1' : '/api/users/user-500000'),
      headers: {},
      connections: [GET_CONNECTIONS],
    },
    {
      name: 'POST /api/users',
      method: 'POST',
      pathFor: () => '/api/users',
      headers: { 'Content-Type': 'application/json' },
      body: '{"name":"Bench User","email":"bench@example.com"}',
      connections: CREATE_CONNECTIONS,
    },
  ];
  for (const route of routes) {
    for (const connections of route.connections) {
      const runs = { memory: [], postgres: [] };
      for (let round = 0; round < ROUNDS; round++) {
        for (const s of round % 2 === 0 ? [memory, onPostgres] : [onPostgres, memory]) {
          const script = wrkScript(join(dir, `${s.name}-${route.method}.lua`), { ...route, path: route.pathFor(s) });
          await load(s.gateway.url, script, connections, 2);
          runs[s.name].push(await load(s.gateway.url, script, connections, SECONDS));
        }
      }
      const ratios = runs.postgres.map((run, round) => run.rps / runs.memory[round].rps);
      for (const store of ['memory', 'postgres']) {
        const of = (field) => median(runs[store].map((run) => run[field]));
        rows.push({
          route: route.name,
          connections,
          store,
          rps: of('rps'),
          p50Ms: of('p50Ms'),
          p99Ms: of('p99Ms'),
          errors: runs[store].reduce((sum, run) => sum + run.errors, 0),
          vsMemory: store === 'memory' ? 1 : median(ratios),
          rounds: store === 'memory' ? '' : ratios.map((ratio) => ratio.toFixed(2)).join(', '),
        });
      }
    }
  }
  console.log(
    '| request (through the gateway) | connections | store | requests/s | p50 ms | p99 ms | errors | vs memory ' +
      '(median over the rounds) | each round |',
  );
  console.log('|---|---:|---|---:|---:|---:|---:|---:|---|');
  for (const row of rows) {
    console.log(
      `| ${row.route} | ${row.connections} | ${row.store} | ${row.rps.toFixed(0)} | ${row.p50Ms.toFixed(2)} | ` +
        `${row.p99Ms.toFixed(2)} | ${row.errors} | ${row.vsMemory.toFixed(2)}× | ${row.rounds} |`,
    );
  }
  const means = await statementMeans(onPostgres.adminUrl);
  console.log(
    `\nmean PostgreSQL statement time (pool wait included), by operation: ${Object.entries(means)
      .map(([op, s]) => `${op} ${(s * 1000).toFixed(2)} ms`)
      .join(', ')}`,
  );
} finally {
  for (const child of started) child.kill('SIGTERM');
  await sleep(500);
  await postgres.stop();
}
