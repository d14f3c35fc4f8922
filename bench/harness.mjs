// What the bench scripts share: starting a built service pinned to a core and waiting for its 'listening'
// line, and loading a URL with wrk pinned to another core. Everything listens on 127.0.0.1 only.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { openSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { imageNodeMajor, nodeOfMajor } from '../scripts/image-node.mjs';
import { entries, nodeFlags, repoRoot } from '../scripts/paths.mjs';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';

/** The servers' core: backend and proxy share it, as they would on a small host. */
export const SERVER_CPU = '0';
/** The load generator's core, so wrk does not steal the servers' CPU. */
export const LOAD_CPU = '1';
export const pinning = cpus().length >= 2;
export const pinned = (cpu, command, args) => (pinning ? ['taskset', ['-c', cpu, command, ...args]] : [command, args]);

export const shell = (line) => execFileSync('sh', ['-c', line], { encoding: 'utf8' }).trim();

/** The requests both `npm run bench` and `bench/ab.mjs` measure. */
export const ROUTES = [
  { name: 'GET /v2/orders/ord-1001', method: 'GET', path: '/v2/orders/ord-1001', headers: {}, status: 200 },
  { name: 'GET /v1/orders/ord-1001', method: 'GET', path: '/v1/orders/ord-1001', headers: {}, status: 200 },
  {
    name: 'GET /orders/ord-1001 (API-Version: 2)',
    method: 'GET',
    path: '/orders/ord-1001',
    headers: { 'API-Version': '2' },
    status: 200,
  },
  {
    name: 'POST /api/users',
    method: 'POST',
    path: '/api/users',
    headers: { 'Content-Type': 'application/json' },
    body: '{"name":"Bench User","email":"bench@example.com"}',
    status: 201,
  },
];

/**
 * The node binary to run services with. `spec` is a major ("24": the npm package node@24, see
 * scripts/image-node.mjs), "path" (the node on PATH that runs the bench) or a file path. Unset: the image's
 * major, so the bench measures the Node that ships.
 */
export function nodeBinary(spec = imageNodeMajor()) {
  if (spec === 'path') return process.execPath;
  if (!/^\d+$/.test(spec)) return spec;
  return nodeOfMajor(spec).binary;
}

/** `node --version` of a binary from nodeBinary. */
export const nodeVersion = (binary) => execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();

/** Exits with the install command when a tool the bench runs is missing. */
export function need(command, hint) {
  try {
    shell(`command -v ${command}`);
  } catch {
    process.stderr.write(`${command} not found: ${hint}\n`);
    process.exit(1);
  }
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The node flags a built entry point ships with (scripts/paths.mjs nodeFlags); none for any other build. */
export function shippedNodeOptions(entry) {
  const service = Object.keys(entries).find((name) => entries[name] === entry);
  return service === undefined ? '' : nodeFlags[service].join(' ');
}

/**
 * Starts a built service (or a bench/reference build) with `node` (a binary from nodeBinary) and its log
 * going to a file (pino writes as in production), and resolves with the child and the API URL from its 'listening'
 * line.
 * `nodeOptions` defaults to the flags the entry ships with.
 */
export async function startNode(
  dir,
  name,
  entry,
  env,
  { cpu = SERVER_CPU, nodeOptions = shippedNodeOptions(entry), node = process.execPath } = {},
) {
  const logPath = join(dir, `${name}.log`);
  const out = openSync(logPath, 'w');
  const [command, args] = pinned(cpu, node, [...nodeOptions.split(' ').filter(Boolean), entry]);
  const child = spawn(command, args, {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', out, 'inherit'],
  });
  // A gateway on a new embedded consumer store first creates its database: seconds of CPU on one core.
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const line = readFileSync(logPath, 'utf8')
      .split('\n')
      .find((text) => text.includes('"msg":"listening"'));
    if (line !== undefined) return { child, url: JSON.parse(line).api, adminUrl: JSON.parse(line).admin };
    if (child.exitCode !== null) break;
    await sleep(50);
  }
  child.kill('SIGKILL');
  const tail = readFileSync(logPath, 'utf8').trimEnd().split('\n').slice(-5).join('\n');
  throw new Error(
    `${name} did not start${child.exitCode === null ? ' within 120 s' : ` (exit ${child.exitCode})`}; its log ` +
      `ends:\n${tail}`,
  );
}

/**
 * Writes wrk's Lua hooks to `file`: the request ({ method, path, headers, body? }) is built once (static),
 * and done() prints the summary as one JSON line.
 */
/** wrk's done() hook: the summary as one JSON line after RESULT, which load() reads. */
export const WRK_DONE =
  `done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\\nRESULT ` +
  `{"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,` +
  `"timeout":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), e.connect, e.read, e.write, ` +
  `e.status, e.timeout))
end
`;

export function wrkScript(file, request) {
  const headers = Object.entries(request.headers)
    .map(([name, value]) => `wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`)
    .join('\n');
  writeFileSync(
    file,
    `wrk.method = ${JSON.stringify(request.method)}
wrk.path = ${JSON.stringify(request.path)}
${request.body === undefined ? '' : `wrk.body = ${JSON.stringify(request.body)}`}
${headers}
${WRK_DONE}`,
  );
  return file;
}

const execFileAsync = promisify(execFile);

/** One wrk run (one thread) on the load core with a script from wrkScript. */
export async function load(url, script, connections, seconds) {
  const [command, args] = pinned(LOAD_CPU, 'wrk', [
    '-t1',
    `-c${connections}`,
    `-d${seconds}s`,
    '--timeout',
    '5s',
    '-s',
    script,
    url,
  ]);
  const { stdout } = await execFileAsync(command, args, { encoding: 'utf8' });
  const line = stdout.split('\n').find((text) => text.startsWith('RESULT '));
  if (line === undefined) throw new Error(`wrk printed no result:\n${stdout}`);
  const r = JSON.parse(line.slice('RESULT '.length));
  const errors = r.connect + r.read + r.write + r.status + r.timeout;
  return {
    rps: r.requests / (r.duration_us / 1e6),
    p50Ms: r.p50_us / 1000,
    p99Ms: r.p99_us / 1000,
    requests: r.requests,
    errors,
  };
}

/** utime + stime of a process in µs (fields 14 and 15 of /proc/<pid>/stat, counted after the command name). */
export function cpuMicros(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * tickMicros();
}
/** cpuMicros of a process and of its child processes (nginx's master and its worker). */
export function processTreeCpuMicros(pid) {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
    .split(' ')
    .filter((id) => id !== '');
  return children.reduce((sum, child) => sum + cpuMicros(Number(child)), cpuMicros(pid));
}
let tickUs;
const tickMicros = () => (tickUs ??= 1e6 / Number(shell('getconf CLK_TCK')));

/**
 * What a process started here traces unless the bench says otherwise: nothing, whatever OTEL_* variables the shell
 * running the bench has. An empty OTEL_* variable counts as unset, so these name no endpoint and no exporter.
 */
export const UNTRACED = {
  OTEL_EXPORTER_OTLP_ENDPOINT: '',
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
  OTEL_TRACES_EXPORTER: '',
};

/**
 * The built backend and the built gateway in front of it, logging at info as in production, neither tracing; the
 * gateway's consumer store is the embedded one, in `dir`. `children` collects both processes for the caller to stop.
 */
export async function startGatewayStack(dir, children, { node, backendCpu = SERVER_CPU, gatewayNodeOptions = '' }) {
  const backend = await startBackend(dir, 'backend', { cpu: backendCpu, node });
  children.push(backend.child);
  const gateway = await startGateway(dir, 'gateway', backend.url, { node, nodeOptions: gatewayNodeOptions });
  children.push(gateway.child);
  return { backend, gateway };
}

/**
 * A built gateway (`entry`, by default this checkout's) on loopback ports in front of `backendUrl`, untraced, without a
 * database: its consumer store the embedded one, in `<dir>/<name>-data`. `env` adds to that or overrides it;
 * the rest are startNode's options.
 */
export function startGateway(dir, name, backendUrl, { entry = entries.gateway, env = {}, ...options } = {}) {
  return startNode(
    dir,
    name,
    entry,
    {
      ...UNTRACED,
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_PORT: '0',
      GATEWAY_ADMIN_PORT: '0',
      BACKEND_URL: backendUrl,
      DATABASE_URL: '',
      GATEWAY_DATA_DIR: join(dir, `${name}-data`),
      ...env,
    },
    options,
  );
}

/**
 * The built backend on loopback ports, its admin listener too, untraced: `env` adds to that or overrides it; the
 * rest are startNode's options.
 */
export function startBackend(dir, name, { env = {}, ...options } = {}) {
  return startNode(
    dir,
    name,
    entries.backend,
    { ...UNTRACED, BACKEND_HOST: '127.0.0.1', BACKEND_PORT: '0', BACKEND_ADMIN_PORT: '0', ...env },
    options,
  );
}

/** An OTLP/HTTP sink on the load core that discards what it gets (bench/otlp-sink.mjs), for traced processes. */
export const startOtlpSink = (dir) => startNode(dir, 'otlp-sink', 'bench/otlp-sink.mjs', {}, { cpu: LOAD_CPU });

/** Registers a consumer on a gateway's admin listener (loopback, no token) and answers a key of it. */
export async function issueKey(adminUrl, name) {
  const post = async (path, body) => {
    const res = await fetch(`${adminUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const { id } = await post('/consumers', { name });
  return (await post(`/consumers/${id}/keys`)).key;
}
