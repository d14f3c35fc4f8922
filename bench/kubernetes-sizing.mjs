// What deploy/kubernetes's CPU and memory requests, the autoscalers' targets and maxima and the PostgreSQL pool sizes
// derive from (bench/README.md, "Sizing the Kubernetes pods"; test/kubernetes reads the result file).
//
//   npm run build && node bench/kubernetes-sizing.mjs [embedded|postgres ...]
//   NODE_IMAGE=version-router-standin/node:24-trixie-slim POSTGRES_IMAGE=version-router-standin/postgres:17 \
//     node bench/kubernetes-sizing.mjs      # a machine without a registry (test/containers/engine.sh)
//
// In containers, as the pods run: both images built under the names the manifests give them, each container given
// what `kubectl kustomize` renders for its Deployment (its literal environment, the policy ConfigMap's directory,
// its memory and CPU limits, the pods' security settings, an emptyDir's volume), per configuration: `embedded` is
// deploy/kubernetes/base (users in memory, each gateway's consumer store embedded, on a new volume as a new pod has
// it), `postgres` is overlays/postgres (users and consumers in one PostgreSQL container; the schema applied first by
// both migration commands, as the migration Job applies it, and the processes only checking it). Gateway and
// backend share core 0 (--cpuset-cpus), PostgreSQL and the load generator core 1. 1,000 consumers with a key each
// and 1,000 users are created first; then three wrk processes load the gateway at once for BENCH_SECONDS (60): keyed
// orders by path (/v1 and /v2 in turn, 1,000 keys round robin; 64 connections), orders by header from 1,000
// rotating X-Client-Ids (32), pages of users (16), while /metrics of both and the status page are read every second.
//
// Each configuration runs BENCH_ROUNDS (2) times, in turn. Reported per run and container: the peak memory while
// starting (the embedded store's first start creates its database) and under load (the larger of the kubelet's
// working set and the resident memory of its processes, sampled every 250 ms), the CPU it used per 1,000 requests
// per second served (its cgroup's CPU time over the load less what it used at rest, measured for BENCH_IDLE_SECONDS
// (20) before the load while its admin listener is read as under load, divided by the requests the gateway answered:
// what each further request costs, which is what the autoscalers add replicas for), and on
// PostgreSQL the most connections each process held open and busy at once (pg_stat_activity by application_name)
// and the most requests the backend's pool kept waiting. Writes bench/results/kubernetes-sizing.json. Needs docker,
// kubectl (kustomize) and wrk (apt-get install -y wrk).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { parseAllDocuments } from 'yaml';
import {
  MIB,
  STARTING,
  buildImages,
  bytesOf,
  cgroupOf,
  coresOf,
  cpuMicros,
  docker,
  hostPort,
  residentMemory,
  runContainer,
  statusOf,
  workingSet,
} from './containers.mjs';
import { LOAD_CPU, SERVER_CPU, WRK_DONE, load, need } from './harness.mjs';
import { migrationEntries, repoRoot } from '../scripts/paths.mjs';
import { eventually } from '../platform/test/support/eventually.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
/** Each configuration is measured this many times, in turn, so a noisy machine shows as a range. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONSUMERS = 1_000;
const USERS = 1_000;
const SAMPLE_MS = 250;
/** Before the load, how long each container's CPU is measured without requests (its admin listener still read). */
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 20);
const PROCESSES = ['gateway', 'backend'];
/** Each configuration's kustomization. */
const KUSTOMIZATIONS = { embedded: 'deploy/kubernetes/base', postgres: 'deploy/kubernetes/overlays/postgres' };
const configurations = process.argv.slice(2).length > 0 ? process.argv.slice(2) : Object.keys(KUSTOMIZATIONS);
need('docker', 'a Docker engine (test/containers/engine.sh starts one)');
need('kubectl', 'kubectl 1.27 or newer (it renders the kustomizations)');
need('wrk', 'apt-get install -y wrk');

/** The rendered kustomization's objects. */
function rendered(directory) {
  const text = execFileSync('kubectl', ['kustomize', join(repoRoot, directory)], { encoding: 'utf8' });
  return parseAllDocuments(text).map((document) => document.toJS());
}

/**
 * Per process, what its rendered Deployment gives its container: the image, the limits, the literal environment and
 * the gateway's settings from its ConfigMap.
 */
function manifestContainers(directory) {
  const objects = rendered(directory);
  const configMap = (name) => objects.find((object) => object.kind === 'ConfigMap' && object.metadata.name === name);
  return Object.fromEntries(
    PROCESSES.map((name) => {
      const deployment = objects.find((object) => object.kind === 'Deployment' && object.metadata.name === name);
      const [container] = deployment.spec.template.spec.containers;
      const env = {};
      for (const variable of container.env) {
        if (variable.value !== undefined) env[variable.name] = variable.value;
        const fromConfigMap = variable.valueFrom?.configMapKeyRef;
        if (fromConfigMap !== undefined) env[variable.name] = configMap(fromConfigMap.name).data[fromConfigMap.key];
      }
      return [name, { image: container.image, limits: container.resources.limits, env }];
    }),
  );
}

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

/** Registers a consumer on the gateway's admin listener and answers a key of it. */
async function issueKey(adminUrl, token, name) {
  const post = async (path, body) => {
    const res = await fetch(`${adminUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const { id } = await post('/consumers', { name });
  return (await post(`/consumers/${id}/keys`)).key;
}

/** Every SAMPLE_MS, each container's memory (working set and resident) and, on PostgreSQL, its connections. */
function sampler(groups, database) {
  const peaks = { start: {}, load: {} };
  const connections = {};
  let phase = 'start';
  let running = true;
  const done = (async () => {
    while (running) {
      for (const [name, group] of Object.entries(groups)) {
        try {
          const memory = Math.max(workingSet(group), residentMemory(group));
          peaks[phase][name] = Math.max(peaks[phase][name] ?? 0, memory);
        } catch {
          // A container that just exited: its last figures stand.
        }
      }
      if (database !== undefined && phase === 'load') {
        const { rows } = await database.query(
          "SELECT application_name AS name, count(*)::int AS open, count(*) FILTER (WHERE state <> 'idle')::int AS busy " +
            'FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND application_name <> $1 GROUP BY 1',
          ['psql'],
        );
        for (const { name, open, busy } of rows) {
          const peak = (connections[name] ??= { open: 0, busy: 0 });
          peak.open = Math.max(peak.open, open);
          peak.busy = Math.max(peak.busy, busy);
        }
      }
      await sleep(SAMPLE_MS);
    }
  })();
  return {
    peaks,
    connections,
    loading: () => (phase = 'load'),
    stop: async () => {
      running = false;
      await done;
    },
  };
}

const mib = (bytes) => Math.round((bytes / MIB) * 10) / 10;

async function measure(configuration) {
  const network = `vr-sizing-${process.pid}`;
  const containers = manifestContainers(KUSTOMIZATIONS[configuration]);
  const dir = mkdtempSync(join(tmpdir(), 'bench-sizing-'));
  const token = randomBytes(16).toString('hex');
  const started = [];
  let database;
  let samples;
  docker('network', 'create', network);
  try {
    const databaseEnv = {};
    if (configuration === 'postgres') {
      const image = process.env.POSTGRES_IMAGE ?? 'postgres:17';
      // PostgreSQL as its image ships it (it writes to its root filesystem), on the load core: a host of its own.
      started.push(
        runContainer(
          network,
          'postgres',
          image,
          { POSTGRES_PASSWORD: 'bench', POSTGRES_DB: 'router' },
          { publish: [5432], pod: false, cpuset: LOAD_CPU },
        ),
      );
      const url = () => `postgres://postgres:bench@127.0.0.1:${hostPort(`${network}-postgres`, 5432)}/router`;
      // Refused until it listens: that is what the wait is for.
      const accepts = async () => {
        const client = new pg.Client({ connectionString: url(), application_name: 'psql' });
        try {
          await client.connect();
          await client.query('SELECT 1');
          return true;
        } catch {
          return false;
        } finally {
          await client.end().catch(() => undefined);
        }
      };
      await eventually('PostgreSQL accepts connections', accepts, STARTING);
      databaseEnv.DATABASE_URL = `postgres://postgres:bench@${network}-postgres:5432/router`;
      // The migration Job: each image's migration command, before the processes start.
      for (const name of PROCESSES) {
        console.log(`${configuration}: ${name} migration command`);
        runContainer(network, `migrate-${name}`, containers[name].image, databaseEnv, {
          detach: false,
          command: ['node', migrationEntries[name]],
        });
      }
      database = new pg.Client({ connectionString: url(), application_name: 'psql' });
      await database.connect();
    }
    const common = (name) => ({
      memory: bytesOf(containers[name].limits.memory),
      cpus: coresOf(containers[name].limits.cpu),
      cpuset: SERVER_CPU,
    });
    const backend = runContainer(
      network,
      'backend',
      containers.backend.image,
      { ...containers.backend.env, ADMIN_TOKEN: token, ...databaseEnv },
      { ...common('backend'), publish: [9465], alias: 'backend' },
    );
    started.push(backend);
    const gateway = runContainer(
      network,
      'gateway',
      containers.gateway.image,
      {
        ...containers.gateway.env,
        ADMIN_TOKEN: token,
        // Notices go nowhere: no consumer of the bench has an address.
        SMTP_URL: 'smtp://127.0.0.1:1',
        ...databaseEnv,
      },
      {
        ...common('gateway'),
        publish: [8080, 9464],
        volumes: ['/var/lib/gateway'],
        // The policy ConfigMap's directory, as the pod mounts it.
        binds: [[join(repoRoot, 'deploy/kubernetes/base/policy'), '/etc/version-router/policy']],
      },
    );
    started.push(gateway);
    samples = sampler({ gateway: cgroupOf(gateway), backend: cgroupOf(backend) }, database);
    const api = `http://127.0.0.1:${hostPort(gateway, 8080)}`;
    const gatewayAdmin = `http://127.0.0.1:${hostPort(gateway, 9464)}`;
    const backendAdmin = `http://127.0.0.1:${hostPort(backend, 9465)}`;
    for (const admin of [backendAdmin, gatewayAdmin])
      await eventually(`${admin}/readyz`, async () => (await statusOf(`${admin}/readyz`)) === 200, STARTING);
    console.log(`${configuration}: ${CONSUMERS} consumers, ${USERS} users`);
    const keys = [];
    for (let i = 0; i < CONSUMERS; i++) keys.push(await issueKey(gatewayAdmin, token, `sizing consumer ${i}`));
    for (let i = 0; i < USERS; i++) {
      const res = await fetch(`${api}/api/users`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: `User ${i}`, email: `user${i}@example.com` }),
      });
      if (res.status !== 201) throw new Error(`POST /api/users: ${res.status}`);
    }
    await sleep(2_000);
    let poolWaiting = 0;
    const authorized = { headers: { authorization: `Bearer ${token}` } };
    const reads = setInterval(() => {
      fetch(`${backendAdmin}/metrics`).then(
        async (res) => {
          const waiting = /^db_pool_connections\{state="waiting"\} (\S+)$/m.exec(await res.text())?.[1];
          poolWaiting = Math.max(poolWaiting, Number(waiting ?? 0));
        },
        () => undefined,
      );
      for (const url of [`${gatewayAdmin}/metrics`, `${gatewayAdmin}/`])
        fetch(url, authorized).then(
          (res) => res.arrayBuffer(),
          () => undefined,
        );
    }, 1_000);
    const groups = { gateway: cgroupOf(gateway), backend: cgroupOf(backend) };
    const cpuNow = () => ({ gateway: cpuMicros(groups.gateway), backend: cpuMicros(groups.backend) });
    console.log(`${configuration}: ${IDLE_SECONDS} s at rest`);
    const idleFrom = cpuNow();
    const idleStartedAt = process.hrtime.bigint();
    await sleep(IDLE_SECONDS * 1000);
    const idleTo = cpuNow();
    const idleS = Number(process.hrtime.bigint() - idleStartedAt) / 1e9;
    // Cores used at rest, per process.
    const idleCores = {
      gateway: (idleTo.gateway - idleFrom.gateway) / 1e6 / idleS,
      backend: (idleTo.backend - idleFrom.backend) / 1e6 / idleS,
    };
    samples.loading();
    const cpuBefore = cpuNow();
    const startedAt = process.hrtime.bigint();
    console.log(`${configuration}: ${SECONDS} s of load`);
    const results = await Promise.all([
      load(api, script(join(dir, 'keyed.lua'), ['/v1/orders/ord-1001', '/v2/orders/ord-1001'], { keys }), 64, SECONDS),
      load(
        api,
        script(join(dir, 'header.lua'), ['/orders/ord-1001'], { headers: { 'API-Version': '1' } }),
        32,
        SECONDS,
      ),
      load(api, script(join(dir, 'pages.lua'), ['/api/users/page?limit=100', '/api/users/user-1']), 16, SECONDS),
    ]);
    const elapsedS = Number(process.hrtime.bigint() - startedAt) / 1e9;
    const cpuS = {
      gateway: (cpuMicros(groups.gateway) - cpuBefore.gateway) / 1e6,
      backend: (cpuMicros(groups.backend) - cpuBefore.backend) / 1e6,
    };
    clearInterval(reads);
    await samples.stop();
    const requests = results.reduce((sum, result) => sum + result.requests, 0);
    const errors = results.reduce((sum, result) => sum + result.errors, 0);
    const rps = requests / elapsedS;
    // CPU cores used per request per second, times 1,000 requests per second, in millicores: beyond what the process
    // uses at rest (perThousand), and all of it (gross).
    const perThousand = (seconds, name) => Math.round(((seconds / elapsedS - idleCores[name]) / rps) * 1_000 * 1_000);
    const gross = (seconds) => Math.round((seconds / elapsedS / rps) * 1_000 * 1_000);
    const record = (peaks) => Object.fromEntries(Object.entries(peaks).map(([name, bytes]) => [name, mib(bytes)]));
    return {
      seconds: Math.round(elapsedS),
      requests,
      errors,
      requestsPerSecond: Math.round(rps),
      p99Ms: Math.max(...results.map((result) => result.p99Ms)),
      peakStartMiB: record(samples.peaks.start),
      peakLoadMiB: record(samples.peaks.load),
      cpuSeconds: { gateway: Math.round(cpuS.gateway * 10) / 10, backend: Math.round(cpuS.backend * 10) / 10 },
      millicoresPer1000Rps: {
        gateway: perThousand(cpuS.gateway, 'gateway'),
        backend: perThousand(cpuS.backend, 'backend'),
      },
      idleMillicores: {
        gateway: Math.round(idleCores.gateway * 1000),
        backend: Math.round(idleCores.backend * 1000),
      },
      grossMillicoresPer1000Rps: { gateway: gross(cpuS.gateway), backend: gross(cpuS.backend) },
      ...(database === undefined
        ? {}
        : {
            peakConnections: {
              gateway: samples.connections.gateway,
              backend: samples.connections['users-orders'],
            },
            peakBackendPoolWaiting: poolWaiting,
          }),
      settings: Object.fromEntries(
        PROCESSES.map((name) => [
          name,
          {
            limits: containers[name].limits,
            env: Object.fromEntries(
              Object.entries(containers[name].env).filter(
                ([key]) => key === 'NODE_OPTIONS' || key.startsWith('DATABASE_'),
              ),
            ),
          },
        ]),
      ),
    };
  } finally {
    await samples?.stop();
    await database?.end().catch(() => undefined);
    for (const name of started.reverse()) docker('rm', '-f', '-v', name);
    docker('network', 'rm', network);
    rmSync(dir, { recursive: true, force: true });
  }
}

const load1 = loadavg()[0];
buildImages(
  Object.fromEntries(PROCESSES.map((name) => [name, manifestContainers(KUSTOMIZATIONS.embedded)[name].image])),
);
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
    docker: docker('version', '-f', '{{.Server.Version}}'),
    nodeImage: process.env.NODE_IMAGE ?? 'node:24-trixie-slim',
    postgresImage: process.env.POSTGRES_IMAGE ?? 'postgres:17',
    loadAverageAtStart: Math.round(load1 * 10) / 10,
    containers: true,
  },
  settings: {
    seconds: SECONDS,
    idleSeconds: IDLE_SECONDS,
    rounds: ROUNDS,
    consumers: CONSUMERS,
    users: USERS,
    sampleMs: SAMPLE_MS,
  },
  runs,
};
writeFileSync(join(repoRoot, 'bench/results/kubernetes-sizing.json'), `${JSON.stringify(result, null, 2)}\n`);
process.stdout.write('wrote bench/results/kubernetes-sizing.json\n');
