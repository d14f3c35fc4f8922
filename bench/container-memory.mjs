// The memory the gateway and the backend containers need under load: what deploy/kubernetes requests and
// caps derive from (bench/README.md "Memory in containers"; the test in test/kubernetes reads the result).
//
//   node bench/container-memory.mjs
//   NODE_IMAGE=version-router-standin/node:24-trixie-slim POSTGRES_IMAGE=version-router-standin/postgres:17 \
//     node bench/container-memory.mjs        # a machine without a registry (test/containers/engine.sh)
//
// Needs docker and wrk, and `npm run build` (fillUsers applies the schema with the built migrations). Builds
// both images under the names the manifests give them, then runs two stacks with the pods' settings
// (read-only root, /tmp on tmpfs, every capability dropped): the users in memory (the base), and on
// PostgreSQL with 1,000,000 users (overlays/postgres). Each is loaded for BENCH_SECONDS (60) by wrk on every
// kind of route at once (versioned orders by path and by header from 1,000 rotating consumers, pages of
// users, whole user listings) while /metrics, the status page and /consumers are read every second. Each
// stack runs twice: unbounded (no memory limit, no heap cap: what the processes take) and as the manifests
// ship them (their memory limit and NODE_OPTIONS). The working set is what the kubelet counts against a
// request and evicts on: the cgroup's usage minus its inactive file pages, sampled every 250 ms; the peak
// RSS is the kernel's high-water mark of the Node process. Writes bench/results/container-memory.json.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import {
  MIB,
  STARTING,
  buildImages,
  bytesOf,
  cgroupOf,
  docker,
  hostPort,
  peakRss,
  runContainer,
  statusOf,
  workingSet,
} from './containers.mjs';
import { need, shell } from './harness.mjs';
import { fillUsers } from './postgres.mjs';
import { repoRoot } from '../scripts/paths.mjs';
import { eventually } from '../platform/test/support/eventually.mjs';

const execFileAsync = promisify(execFile);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const USERS_ON_POSTGRES = 1_000_000;
const SAMPLE_MS = 250;
/** memory, postgres or both (the default), comma-separated. */
const STACKS = (process.env.BENCH_STACKS ?? 'memory,postgres').split(',');

need('docker', 'a Docker engine (test/containers/engine.sh starts one)');
need('wrk', 'apt-get install -y wrk');

const prefix = `vr-memory-${process.pid}`;
const work = mkdtempSync(join(tmpdir(), 'container-memory-'));

/** What the base manifests give each container: image, memory limit and request, NODE_OPTIONS. */
function manifestContainers() {
  const containers = {};
  for (const name of ['gateway', 'backend']) {
    const deployment = parseAllDocuments(readFileSync(join(repoRoot, `deploy/kubernetes/base/${name}.yaml`), 'utf8'))
      .map((document) => document.toJS())
      .find((object) => object.kind === 'Deployment');
    const container = deployment.spec.template.spec.containers[0];
    containers[name] = {
      image: container.image,
      limit: container.resources.limits.memory,
      nodeOptions: container.env.find((variable) => variable.name === 'NODE_OPTIONS')?.value,
    };
  }
  const kustomization = parseAllDocuments(
    readFileSync(join(repoRoot, 'deploy/kubernetes/components/images/kustomization.yaml'), 'utf8'),
  )[0].toJS();
  for (const { name, newTag } of kustomization.images) {
    const process = Object.keys(containers).find((candidate) => containers[candidate].image === name);
    containers[process].image = `${name}:${newTag}`;
  }
  return containers;
}

/**
 * The process's resident memory that is not V8's old space, from its /metrics (prom-client's default
 * metrics): what it needs on top of the old space, whose size --max-old-space-size caps.
 */
function memoryOutsideOldSpace(metrics) {
  const value = (pattern) => Number(pattern.exec(metrics)?.[1] ?? Number.NaN);
  return (
    value(/^process_resident_memory_bytes (\S+)$/m) -
    value(/^nodejs_heap_space_size_total_bytes\{space="old"\} (\S+)$/m)
  );
}

/** A wrk Lua script: GET `paths` in turn, with X-Client-Id from 1,000 consumers and optional headers. */
function wrkScript(file, paths, headers = {}) {
  const lines = Object.entries(headers).map(
    ([name, value]) => `wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`,
  );
  writeFileSync(
    file,
    `local paths = { ${paths.map((path) => JSON.stringify(path)).join(', ')} }
local n = 0
${lines.join('\n')}
request = function()
  n = n + 1
  wrk.headers["X-Client-Id"] = "consumer-" .. (n % 1000)
  return wrk.format("GET", paths[(n % #paths) + 1])
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\\nRESULT {"requests":%d,"non2xx":%d,"errors":%d}\\n', summary.requests, e.status, ` +
      `e.connect + e.read + e.write + e.timeout))
end
`,
  );
  return file;
}

async function wrk(url, script, connections, timeout = '10s') {
  const { stdout } = await execFileAsync(
    'wrk',
    ['-t1', `-c${connections}`, `-d${SECONDS}s`, '--timeout', timeout, '-s', script, url],
    { encoding: 'utf8', maxBuffer: 16 * MIB },
  );
  const line = stdout.split('\n').find((text) => text.startsWith('RESULT '));
  if (line === undefined) throw new Error(`wrk printed no result:\n${stdout}`);
  return JSON.parse(line.slice('RESULT '.length));
}

/** One stack loaded for SECONDS; answers the peaks of both containers and what the load did. */
async function measure(stack, containers, bounded) {
  docker('network', 'create', prefix);
  const started = [];
  try {
    const limits = (name) =>
      bounded
        ? { memory: bytesOf(containers[name].limit), env: { NODE_OPTIONS: containers[name].nodeOptions } }
        : { memory: undefined, env: {} };
    let databaseUrl;
    if (stack === 'postgres') {
      const image = process.env.POSTGRES_IMAGE ?? 'postgres:17';
      // PostgreSQL runs as its image ships it (it writes to its root filesystem).
      started.push(
        runContainer(
          prefix,
          'postgres',
          image,
          { POSTGRES_PASSWORD: 'bench', POSTGRES_DB: 'router' },
          { publish: [5432], pod: false },
        ),
      );
      const url = () => `postgres://postgres:bench@127.0.0.1:${hostPort(`${prefix}-postgres`, 5432)}/router`;
      // Refused until it listens: that is what the wait is for.
      const accepts = () =>
        fillUsers(url(), 0).then(
          () => true,
          () => false,
        );
      await eventually('PostgreSQL accepts connections', accepts, STARTING);
      console.log(`${stack}: filling ${USERS_ON_POSTGRES} users`);
      await fillUsers(url(), USERS_ON_POSTGRES);
      databaseUrl = `postgres://postgres:bench@${prefix}-postgres:5432/router`;
    }
    const backend = runContainer(
      prefix,
      'backend',
      containers.backend.image,
      { ...limits('backend').env, ...(databaseUrl === undefined ? {} : { DATABASE_URL: databaseUrl }) },
      { memory: limits('backend').memory, publish: [9465] },
    );
    started.push(backend);
    const gateway = runContainer(
      prefix,
      'gateway',
      containers.gateway.image,
      { ...limits('gateway').env, BACKEND_URL: `http://${backend}:8081` },
      // Its embedded consumer store's directory, an emptyDir in the pod.
      { memory: limits('gateway').memory, publish: [8080, 9464], volumes: ['/var/lib/gateway'] },
    );
    started.push(gateway);
    const api = `http://127.0.0.1:${hostPort(gateway, 8080)}`;
    const gatewayAdmin = `http://127.0.0.1:${hostPort(gateway, 9464)}`;
    const backendAdmin = `http://127.0.0.1:${hostPort(backend, 9465)}`;
    for (const admin of [gatewayAdmin, backendAdmin]) {
      await eventually(`${admin}/readyz`, async () => (await statusOf(`${admin}/readyz`)) === 200, STARTING);
    }
    if (stack === 'memory') {
      for (let i = 0; i < 1000; i++) {
        const res = await fetch(`${api}/api/users`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: `User ${i}`, email: `user${i}@example.com` }),
        });
        if (res.status !== 201) throw new Error(`seeding users: ${res.status}`);
      }
    }

    const groups = { gateway: cgroupOf(gateway), backend: cgroupOf(backend) };
    const peaks = { gateway: 0, backend: 0 };
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        for (const name of ['gateway', 'backend']) peaks[name] = Math.max(peaks[name], workingSet(groups[name]));
        await sleep(SAMPLE_MS);
      }
    })();
    let reads = 0;
    const outsideOldSpace = { gateway: 0, backend: 0 };
    const reader = (async () => {
      const deadline = Date.now() + SECONDS * 1000;
      while (Date.now() < deadline) {
        for (const [name, admin] of [
          ['gateway', gatewayAdmin],
          ['backend', backendAdmin],
        ]) {
          outsideOldSpace[name] = Math.max(
            outsideOldSpace[name],
            memoryOutsideOldSpace(await (await fetch(`${admin}/metrics`)).text()),
          );
          reads++;
        }
        for (const url of [`${gatewayAdmin}/`, `${gatewayAdmin}/consumers`]) {
          await (await fetch(url)).arrayBuffer();
          reads++;
        }
        await sleep(1000);
      }
    })();
    console.log(`${stack}${bounded ? ' (as shipped)' : ''}: ${SECONDS} s of load`);
    const orders = ['/v1/orders/ord-1001', '/v2/orders/ord-1001', '/v2/orders/ord-1002', '/versions'];
    const [byPath, byHeader, pages, listings] = await Promise.all([
      wrk(api, wrkScript(join(work, 'path.lua'), orders), 128),
      wrk(api, wrkScript(join(work, 'header.lua'), ['/orders/ord-1001'], { 'API-Version': '1' }), 64),
      wrk(api, wrkScript(join(work, 'pages.lua'), ['/api/users/page?limit=100', '/api/users/user-1']), 32),
      wrk(api, wrkScript(join(work, 'listings.lua'), ['/api/users']), 4, '60s'),
      reader,
    ]);
    sampling = false;
    await sampler;
    const result = {};
    for (const name of ['gateway', 'backend']) {
      const state = JSON.parse(docker('inspect', '-f', '{{json .State}}', `${prefix}-${name}`));
      result[name] = {
        peakWorkingSetMiB: Math.round((peaks[name] / MIB) * 10) / 10,
        peakRssMiB: Math.round((peakRss(groups[name]) / MIB) * 10) / 10,
        peakOutsideOldSpaceMiB: Math.round((outsideOldSpace[name] / MIB) * 10) / 10,
        oomKilled: state.OOMKilled,
        running: state.Running,
      };
    }
    return { ...result, load: { byPath, byHeader, pages, listings, adminReads: reads } };
  } finally {
    for (const name of started.reverse()) docker('rm', '-f', name);
    docker('network', 'rm', prefix);
  }
}

const containers = manifestContainers();
buildImages(Object.fromEntries(Object.entries(containers).map(([name, { image }]) => [name, image])));
const runs = {};
try {
  for (const stack of STACKS) {
    runs[stack] = {
      unbounded: await measure(stack, containers, false),
      asShipped: await measure(stack, containers, true),
    };
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
const processes = ['gateway', 'backend'];
const largest = (pick) =>
  Object.fromEntries(processes.map((name) => [name, Math.max(...Object.values(runs).flatMap(pick(name)))]));
const record = {
  date: new Date().toISOString().slice(0, 10),
  command: 'node bench/container-memory.mjs',
  machine: {
    cores: Number(shell('nproc')),
    docker: docker('version', '-f', '{{.Server.Version}}'),
    nodeImage: process.env.NODE_IMAGE ?? 'node:24-trixie-slim',
  },
  settings: { seconds: SECONDS, usersOnPostgres: USERS_ON_POSTGRES, sampleMs: SAMPLE_MS, stacks: STACKS },
  // What test/kubernetes holds the manifests to, both as shipped (with the heap cap: without it V8 lets
  // large objects and buffers grow far more before collecting). The larger of working set and RSS: the
  // memory request is at least this much. The memory outside V8's old space: the limit is at least the
  // old-space cap plus this much.
  peakAsShippedMiB: largest((name) => (stack) => [
    stack.asShipped[name].peakWorkingSetMiB,
    stack.asShipped[name].peakRssMiB,
  ]),
  peakOutsideOldSpaceMiB: largest((name) => (stack) => [stack.asShipped[name].peakOutsideOldSpaceMiB]),
  peakUnboundedMiB: largest((name) => (stack) => [
    stack.unbounded[name].peakWorkingSetMiB,
    stack.unbounded[name].peakRssMiB,
  ]),
  manifests: containers,
  runs,
};
writeFileSync(join(repoRoot, 'bench/results/container-memory.json'), `${JSON.stringify(record, null, 2)}\n`);
console.log(JSON.stringify(record, null, 2));
