// The backend's memory while GET /api/users streams 1,000,000 users from PostgreSQL
// (docs/backend.md#users-in-postgresql): each round starts a fresh backend on the same database, waits
// for it to settle, then reads the whole array as fast as it can while sampling the backend's RSS every
// 20 ms. Runs the built backend
// (npm run build first) pinned to one core, on the Node the image ships unless BENCH_NODE says otherwise
// ("20", "path" for the node running this script, or a binary: bench/harness.mjs nodeBinary), with the node
// flags it ships with (scripts/paths.mjs nodeFlags) unless --node-options says otherwise (`=` for none).
//   node bench/users-stream-memory.mjs [--rounds 3] [--node-options=--max-semi-space-size=1]
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { entries } from '../scripts/paths.mjs';
import { nodeBinary, nodeVersion, shippedNodeOptions, startNode } from './harness.mjs';
import { fillUsers, startBenchPostgres } from './postgres.mjs';

const USERS = 1_000_000;
const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    'node-options': { type: 'string', default: shippedNodeOptions(entries.backend) },
  },
});
const rounds = Number(values.rounds);
const node = nodeBinary(process.env.BENCH_NODE);

const dir = mkdtempSync(join(tmpdir(), 'bench-users-stream-'));
const postgres = await startBenchPostgres();
const rssMiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
const backendEnv = {
  BACKEND_HOST: '127.0.0.1',
  BACKEND_PORT: '0',
  BACKEND_ADMIN_PORT: '0',
  DATABASE_URL: postgres.url,
};

try {
  await fillUsers(postgres.url, USERS);
  console.log(
    `node ${nodeVersion(node)} ${values['node-options'] || '(no flags)'}; ${USERS.toLocaleString('en-US')} users in ` +
      `embedded PostgreSQL\n`,
  );
  console.log('| round | streamed | time | MiB/s | RSS idle → peak |');
  console.log('|---|---:|---:|---:|---:|');
  for (let round = 1; round <= rounds; round++) {
    const backend = await startNode(dir, `backend-${round}`, entries.backend, backendEnv, {
      node,
      nodeOptions: values['node-options'],
    });
    try {
      // One small request first, so the idle figure includes the code every request loads.
      await (await fetch(`${backend.url}/api/users/page?limit=1`)).text();
      await sleep(2_000);
      const pid = backend.child.pid;
      const idle = rssMiB(pid);
      let peak = idle;
      const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 20);
      const started = Date.now();
      let bytes = 0;
      const res = await fetch(`${backend.url}/api/users`);
      for await (const chunk of res.body) bytes += chunk.length;
      clearInterval(sampler);
      const seconds = (Date.now() - started) / 1000;
      const mib = bytes / 2 ** 20;
      console.log(
        `| ${round} | ${mib.toFixed(0)} MiB | ${seconds.toFixed(1)} s | ${(mib / seconds).toFixed(1)} | ` +
          `${idle.toFixed(0)} → ${peak.toFixed(0)} MiB (+${(peak - idle).toFixed(0)}) |`,
      );
    } finally {
      backend.child.kill('SIGTERM');
      await sleep(300);
    }
  }
} finally {
  await postgres.stop();
}
