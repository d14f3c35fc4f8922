// Throughput and latency of the gateway next to the proxy users would otherwise deploy (nginx, logging every
// request as an operator would run it), next to the Node proxies a Node user would pick (stock
// @fastify/http-proxy without and with Fastify's request logging, a bare node:http + undici proxy, http-proxy),
// and the backend alone; and the gateway again in a second stack where gateway and backend trace every request
// (`gateway-traced`: tracing's cost, docs/tracing.md#cost). Runs the built JavaScript (`npm run bench` builds
// first) on the Node the Docker image ships. Everything listens on 127.0.0.1 only. The servers share core 0 (as
// backend and proxy would on a small host); wrk runs on core 1 so the load generator does not steal the servers'
// CPU (bench/harness.mjs). Targets are loaded in turn, A B C A B C, so a slow drift of the machine (other jobs,
// thermal) spreads over all of them instead of biasing one. Each 50-connection run also reads the target's CPU
// time (utime + stime of its processes, nginx's worker included) and divides it by the requests served: what a
// request costs the proxy itself, which the host's other tenants move less than req/s, since time they take from
// the servers' core is not counted (bench/ab.mjs compares two builds that way, side by side).
//
// Environment: BENCH_SECONDS (per run, default 5), BENCH_ROUNDS (default 2), BENCH_CONNECTIONS (default 50),
// BENCH_GATEWAY_NODE_OPTIONS (e.g. --cpu-prof --cpu-prof-dir=/tmp/prof, to see where the gateway's time goes),
// BENCH_NODE (the Node for backend, gateway and peers: a major such as "24", fetched as the npm package
// node@24 through `npm exec`, "path" for the node running this script, or a binary; default the Docker
// image's major, read from the Dockerfile).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  LOAD_CPU,
  ROUTES,
  SERVER_CPU,
  load,
  median,
  need,
  nodeBinary,
  nodeVersion,
  pinned,
  pinning,
  processTreeCpuMicros,
  shell,
  startBackend,
  startGateway,
  startGatewayStack,
  startNode,
  startOtlpSink,
  wrkScript,
} from './harness.mjs';
import { repoRoot } from '../scripts/paths.mjs';
import { SUNSET } from './peers/versioning.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
/** The Node proxies measured next to the gateway, each in front of the same backend. */
const PEERS = [
  { name: 'fastify-http-proxy', entry: 'bench/peers/fastify-http-proxy.mjs' },
  // The same stock proxy with Fastify's standard request logging on: a line in and a line out per request,
  // to the file its stdout goes to, as nginx writes its access log.
  { name: 'fastify-http-proxy-log', entry: 'bench/peers/fastify-http-proxy.mjs', env: { PEER_LOGGER: 'true' } },
  { name: 'node-http-undici', entry: 'bench/reference/bare-proxy.mjs' },
  { name: 'http-proxy', entry: 'bench/peers/http-proxy.mjs' },
];
const PROXIES = ['gateway', 'gateway-traced', 'nginx', ...PEERS.map((peer) => peer.name)];
/**
 * Tracing every request (docs/tracing.md): what `gateway-traced` runs with, gateway and backend alike, exporting
 * OTLP http/protobuf to a sink on the load core that discards what it gets (a collector runs elsewhere).
 */
const TRACE_EVERY_REQUEST = { OTEL_TRACES_SAMPLER: 'always_on', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' };

/**
 * Direct has no header-form route and no v1 (the backend serves only v2; the gateway presents v1 from it): it gets
 * the path the proxies forward to.
 */
const pathFor = (targetName, route) => {
  if (targetName !== 'direct') return route.path;
  if (route.path.startsWith('/orders/')) return `/v2${route.path}`;
  return route.path.replace(/^\/v1\/orders\//, '/v2/orders/');
};

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * nginx as a keep-alive reverse proxy doing what the gateway does for these routes: the path forms with
 * Vary (and the v1 deprecation headers; v1 forwarded to the backend's v2 without translating the body, which
 * nginx cannot), the header form mapped to a path version (406 for other values),
 * the users API passed through, X-Forwarded-* and X-Request-Id added. One JSON access-log line per request
 * (nginx's default is to log; `escape=json`), written to a file unbuffered (each line its own write), as
 * the gateway writes its completion line.
 */
function nginxConfig(dir, port, backendPort) {
  const link = '"</v2/orders/$order_id>; rel=\\"successor-version\\""';
  return `worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/nginx-error.log warn;
events { worker_connections 4096; }
http {
  log_format json escape=json '{"time":"$time_iso8601","requestId":"$request_id","remoteAddr":"$remote_addr",'
    '"method":"$request_method","url":"$request_uri","status":$status,"bytes":$body_bytes_sent,'
    '"requestTimeS":$request_time,"upstreamTimeS":"$upstream_response_time","userAgent":"$http_user_agent"}';
  access_log ${dir}/nginx-access.log json;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream backend { server 127.0.0.1:${backendPort}; keepalive 128; }
  map $http_api_version $api_version { "" 1; "1" 1; "2" 2; default invalid; }
  map $api_version $header_deprecation { 1 true; default ""; }
  map $api_version $header_sunset { 1 "${SUNSET}"; default ""; }
  map $api_version $header_link { 1 ${link}; default ""; }
  server {
    listen 127.0.0.1:${port} backlog=4096;
    keepalive_requests 1000000;
    proxy_http_version 1.1;
    proxy_set_header Connection "";
    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    proxy_set_header X-Forwarded-Proto $scheme;
    proxy_set_header X-Forwarded-Host $host;
    proxy_set_header X-Request-Id $request_id;
    add_header X-Request-Id $request_id always;
    location ~ ^/v1/orders/(?<order_id>[^/]+)$ {
      if ($http_api_version !~ "^(1)?$") { return 400; }
      proxy_hide_header Deprecation; proxy_hide_header Sunset; proxy_hide_header Link;
      add_header X-Request-Id $request_id always;
      add_header Vary API-Version always;
      add_header Deprecation true always;
      add_header Sunset "${SUNSET}" always;
      add_header Link ${link} always;
      rewrite ^ /v2/orders/$order_id break;
      proxy_pass http://backend;
    }
    location ~ ^/v2/orders/[^/]+$ {
      if ($http_api_version !~ "^(2)?$") { return 400; }
      add_header X-Request-Id $request_id always;
      add_header Vary API-Version always;
      proxy_pass http://backend;
    }
    location ~ ^/orders/(?<order_id>[^/]+)$ {
      if ($api_version = invalid) { return 406; }
      add_header X-Request-Id $request_id always;
      add_header Vary API-Version always;
      add_header Deprecation $header_deprecation always;
      add_header Sunset $header_sunset always;
      add_header Link $header_link always;
      rewrite ^ /v2/orders/$order_id break;
      proxy_pass http://backend;
    }
    location /api/users { proxy_pass http://backend; }
    location / { return 404; }
  }
}
`;
}

async function startNginx(dir, backendUrl) {
  const port = await freePort();
  for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, sub));
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, nginxConfig(dir, port, new URL(backendUrl).port));
  const [command, args] = pinned(SERVER_CPU, 'nginx', ['-p', dir, '-c', conf, '-e', join(dir, 'nginx-error.log')]);
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    try {
      await fetch(`${url}/v2/orders/ord-1001`);
      return { child, url };
    } catch {
      await sleep(50);
    }
  }
  child.kill('SIGKILL');
  throw new Error('nginx did not start');
}

/** One request per route and target before loading: the same status, and the proxies' version headers. */
async function checkAnswers(targets) {
  for (const route of ROUTES) {
    for (const target of targets) {
      const res = await fetch(`${target.url}${pathFor(target.name, route)}`, {
        method: route.method,
        headers: route.headers,
        body: route.body,
      });
      await res.arrayBuffer();
      if (res.status !== route.status)
        throw new Error(`${target.name} ${route.name}: ${res.status}, expected ${route.status}`);
      if (target.name === 'direct') continue;
      const versioned = route.path.includes('orders');
      if (versioned && res.headers.get('vary') !== 'API-Version')
        throw new Error(`${target.name} ${route.name}: Vary ${res.headers.get('vary')}`);
      const v1 = route.path.startsWith('/v1/');
      if (
        v1 &&
        (res.headers.get('deprecation') !== 'true' ||
          res.headers.get('sunset') !== SUNSET ||
          res.headers.get('link') === null)
      ) {
        throw new Error(`${target.name} ${route.name}: deprecation headers missing`);
      }
      if (res.headers.get('x-request-id') === null) throw new Error(`${target.name} ${route.name}: no X-Request-Id`);
    }
  }
}

/**
 * A second stack, gateway and backend both tracing every request, on the servers' core like the first: its req/s
 * against the untraced gateway's is tracing's cost end to end, both processes' spans included. Answers the traced
 * gateway's address and the pid whose CPU is read (the gateway's, as for the untraced one).
 */
async function startTracedStack(dir, children, node) {
  const sink = await startOtlpSink(dir);
  children.push(sink.child);
  const tracing = { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, ...TRACE_EVERY_REQUEST };
  const backend = await startBackend(dir, 'traced-backend', { env: tracing, node });
  children.push(backend.child);
  const gateway = await startGateway(dir, 'traced-gateway', backend.url, { node, env: tracing });
  children.push(gateway.child);
  return { url: gateway.url, pid: gateway.child.pid };
}

/** http-proxy lives in bench/peers/package.json, out of the project's dependencies; installed on first use. */
function installPeers() {
  if (existsSync(join(repoRoot, 'bench/peers/node_modules/http-proxy'))) return;
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--prefix', join(repoRoot, 'bench/peers')], {
    stdio: 'inherit',
  });
}

need('nginx', 'apt-get install -y nginx');
need('wrk', 'apt-get install -y wrk');
if (pinning) need('taskset', 'apt-get install -y util-linux');

installPeers();
const node = nodeBinary(process.env.BENCH_NODE);
const dir = mkdtempSync(join(tmpdir(), 'bench-http-'));
const children = [];
const stopAll = () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
};
process.on('exit', stopAll);

try {
  // The gateway's consumer store is the embedded one, in the run's directory.
  const { backend, gateway } = await startGatewayStack(dir, children, {
    node,
    gatewayNodeOptions: process.env.BENCH_GATEWAY_NODE_OPTIONS ?? '',
  });
  const nginx = await startNginx(dir, backend.url);
  children.push(nginx.child);
  const traced = await startTracedStack(dir, children, node);
  const targets = [
    { name: 'direct', url: backend.url, pid: backend.child.pid },
    { name: 'gateway', url: gateway.url, pid: gateway.child.pid },
    { name: 'gateway-traced', url: traced.url, pid: traced.pid },
    { name: 'nginx', url: nginx.url, pid: nginx.child.pid },
  ];
  for (const peer of PEERS) {
    const started = await startNode(
      dir,
      peer.name,
      peer.entry,
      { GATEWAY_PORT: '0', BACKEND_URL: backend.url, ...peer.env },
      { node },
    );
    children.push(started.child);
    targets.push({ name: peer.name, url: started.url, pid: started.child.pid });
  }
  await checkAnswers(targets);
  if (!readFileSync(join(dir, 'nginx-access.log'), 'utf8').includes('"requestId":'))
    throw new Error('nginx wrote no access-log line');
  if (!readFileSync(join(dir, 'fastify-http-proxy-log.log'), 'utf8').includes('"msg":"request completed"'))
    throw new Error('fastify-http-proxy-log wrote no request line');
  for (const name of ['traced-gateway', 'traced-backend'])
    if (!readFileSync(join(dir, `${name}.log`), 'utf8').includes('"msg":"tracing on"'))
      throw new Error(`${name} is not tracing`);

  const runs = [];
  for (const route of ROUTES) {
    const script = (suffix, path) =>
      wrkScript(join(dir, `route-${ROUTES.indexOf(route)}${suffix}.lua`), { ...route, path });
    const scripts = { proxy: script('', route.path), direct: script('-direct', pathFor('direct', route)) };
    const scriptFor = (target) => (target.name === 'direct' ? scripts.direct : scripts.proxy);
    for (const target of targets) await load(target.url, scriptFor(target), CONNECTIONS, 1); // warm-up (JIT, pools)
    for (let round = 0; round < ROUNDS; round++) {
      for (const target of targets) {
        const cpuBefore = processTreeCpuMicros(target.pid);
        const many = await load(target.url, scriptFor(target), CONNECTIONS, SECONDS);
        const cpuUs = (processTreeCpuMicros(target.pid) - cpuBefore) / many.requests;
        const one = await load(target.url, scriptFor(target), 1, SECONDS);
        runs.push({
          route: route.name,
          target: target.name,
          round,
          connections: CONNECTIONS,
          ...many,
          cpuUs,
          single: one,
        });
        process.stdout.write(
          `${route.name.padEnd(40)} ${target.name.padEnd(18)} ${many.rps.toFixed(0).padStart(7)} req/s  ` +
            `${cpuUs.toFixed(0).padStart(4)} µs CPU/req  p50 ${many.p50Ms.toFixed(2)} ms  p99 ` +
            `${many.p99Ms.toFixed(2)} ms  | 1 conn p50 ${one.p50Ms.toFixed(3)} ms  errors ` +
            `${many.errors + one.errors}\n`,
        );
      }
    }
  }

  const summary = ROUTES.map((route) => {
    const of = (target, pick) =>
      median(runs.filter((run) => run.route === route.name && run.target === target).map(pick));
    const row = { route: route.name };
    for (const { name } of targets) {
      row[name] = {
        rps: of(name, (run) => run.rps),
        cpuUs: of(name, (run) => run.cpuUs),
        p50Ms: of(name, (run) => run.p50Ms),
        p99Ms: of(name, (run) => run.p99Ms),
        singleP50Ms: of(name, (run) => run.single.p50Ms),
        errors: runs
          .filter((run) => run.route === route.name && run.target === name)
          .reduce((sum, run) => sum + run.errors + run.single.errors, 0),
      };
    }
    row.perNginx = Object.fromEntries(PROXIES.map((name) => [name, row[name].rps / row.nginx.rps]));
    row.gatewayCpuPerStock = row.gateway.cpuUs / row['fastify-http-proxy'].cpuUs;
    row.tracedPerGateway = row['gateway-traced'].rps / row.gateway.rps;
    row.tracedCpuPerGateway = row['gateway-traced'].cpuUs / row.gateway.cpuUs;
    row.gatewayPerNginx = row.gateway.rps / row.nginx.rps;
    row.gatewayPerDirect = row.gateway.rps / row.direct.rps;
    row.addedP50MsOverNginx = row.gateway.singleP50Ms - row.nginx.singleP50Ms;
    return row;
  });

  const date = new Date().toISOString().slice(0, 10);
  const machine = {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    node: nodeVersion(node),
    nginx: shell('nginx -v 2>&1'),
    wrk: shell('wrk -v 2>&1 | head -1'),
    fastify: JSON.parse(readFileSync(join(repoRoot, 'node_modules/fastify/package.json'), 'utf8')).version,
    undici: JSON.parse(readFileSync(join(repoRoot, 'node_modules/undici/package.json'), 'utf8')).version,
    fastifyHttpProxy: JSON.parse(readFileSync(join(repoRoot, 'node_modules/@fastify/http-proxy/package.json'), 'utf8'))
      .version,
    httpProxy: JSON.parse(readFileSync(join(repoRoot, 'bench/peers/node_modules/http-proxy/package.json'), 'utf8'))
      .version,
    loadAverage: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
  };
  const settings = {
    seconds: SECONDS,
    rounds: ROUNDS,
    connections: CONNECTIONS,
    serverCpu: pinning ? SERVER_CPU : 'any',
    loadCpu: pinning ? LOAD_CPU : 'any',
  };
  const command = 'npm run bench';
  mkdirSync(join(repoRoot, 'bench/results'), { recursive: true });
  const resultPath = join(repoRoot, 'bench/results', `${date}.json`);
  writeFileSync(resultPath, `${JSON.stringify({ date, command, machine, settings, summary, runs }, null, 2)}\n`);
  refreshReadme({ date, command, machine, settings, summary });
  process.stdout.write(`wrote ${resultPath} and bench/README.md\n`);
} finally {
  stopAll();
  await sleep(300);
  rmSync(dir, { recursive: true, force: true });
}

function refreshReadme({ date, command, machine, settings, summary }) {
  const f0 = (n) => n.toFixed(0);
  const f2 = (n) => n.toFixed(2);
  const lines = [
    `Results of \`${command}\` on ${date}: Node ${machine.node}, ${machine.nginx.replace('nginx version: ', '')}, ` +
      `${machine.wrk.split(' [')[0]},`,
    `fastify ${machine.fastify}, undici ${machine.undici}, @fastify/http-proxy ${machine.fastifyHttpProxy}, ` +
      `http-proxy ${machine.httpProxy};`,
    `${machine.cores} × ${machine.cpu}; load average at the end ${machine.loadAverage}.`,
    `${settings.connections} connections (and 1 for the "1 conn" column), ${settings.seconds} s per run, median of ` +
      `${settings.rounds} rounds;`,
    `servers on CPU ${settings.serverCpu}, wrk on CPU ${settings.loadCpu}. Latencies in ms.`,
    '',
    '| route | target | req/s | CPU µs/req | p50 | p99 | 1 conn p50 | errors |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of summary) {
    for (const target of ['direct', ...PROXIES]) {
      const t = row[target];
      lines.push(
        `| ${row.route} | ${target} | ${f0(t.rps)} | ${f0(t.cpuUs)} | ${f2(t.p50Ms)} | ${f2(t.p99Ms)} | ` +
          `${t.singleP50Ms.toFixed(3)} | ${t.errors} |`,
      );
    }
  }
  const peers = PROXIES.filter((name) => !name.startsWith('gateway') && name !== 'nginx');
  lines.push(
    '',
    `| route | gateway/nginx req/s | ${peers.map((name) => `${name}/nginx`).join(' | ')} | gateway/direct req/s | ` +
      `gateway CPU/req ÷ fastify-http-proxy's | gateway p50 − nginx p50 at 1 conn (ms) | ` +
      `gateway-traced/gateway req/s | gateway-traced/gateway CPU/req |`,
    `|---|---:|${peers.map(() => '---:|').join('')}---:|---:|---:|---:|---:|`,
  );
  for (const row of summary) {
    const peerCells = peers.map((name) => `${f2(row.perNginx[name])}×`).join(' | ');
    lines.push(
      `| ${row.route} | ${f2(row.gatewayPerNginx)}× | ${peerCells} | ${f2(row.gatewayPerDirect)}× | ` +
        `${f2(row.gatewayCpuPerStock)} | ${row.addedP50MsOverNginx.toFixed(3)} | ${f2(row.tracedPerGateway)}× | ` +
        `${f2(row.tracedCpuPerGateway)}× |`,
    );
  }
  const geo = (pick) => Math.exp(summary.reduce((sum, row) => sum + Math.log(pick(row)), 0) / summary.length);
  const peerMeans = peers.map((name) => `${f2(geo((row) => row.perNginx[name]))}×`).join(' | ');
  lines.push(
    `| geometric mean | ${f2(geo((row) => row.gatewayPerNginx))}× | ${peerMeans} | ` +
      `${f2(geo((row) => row.gatewayPerDirect))}× | ${f2(geo((row) => row.gatewayCpuPerStock))} | | ` +
      `${f2(geo((row) => row.tracedPerGateway))}× | ${f2(geo((row) => row.tracedCpuPerGateway))}× |`,
  );

  const readmePath = join(repoRoot, 'bench/README.md');
  const readme = readFileSync(readmePath, 'utf8');
  const start = '<!-- http-bench:start -->';
  const end = '<!-- http-bench:end -->';
  const block = `${start}\n${lines.join('\n')}\n${end}`;
  const from = readme.indexOf(start);
  const to = readme.indexOf(end);
  const next =
    from === -1 || to === -1
      ? `${readme.trimEnd()}\n\n## Gateway vs nginx\n\n${block}\n`
      : `${readme.slice(0, from)}${block}${readme.slice(to + end.length)}`;
  writeFileSync(readmePath, next);
}
