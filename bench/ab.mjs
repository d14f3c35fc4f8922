// A/B of two gateway builds under identical conditions: CPU µs per request of each.
//
//   node bench/ab.mjs <gateway-a.js> <gateway-b.js> [route] [seconds]
//
// route: a GET path (default /v2/orders/ord-1001) or the name of one of `npm run bench`'s routes
// (e.g. 'POST /api/users', 'GET /orders/ord-1001 (API-Version: 2)'), sent with its method, headers and body;
// else `METHOD /path` (e.g. 'PUT /v1/orders/ord-1001'), sent with BENCH_BODY and BENCH_HEADERS.
//
// Both gateways run at the same time on the servers' core, each in front of its own backend (the dist/
// build), with the backends and two wrk runs (50 connections each) on the load core. The scheduler shares
// the servers' core between the two gateways, so the host's quiet and busy phases, which move a single run
// by up to 2×, hit both alike (how closely two copies of one build agree: bench/README.md#gateway-vs-nginx).
// Prints req/s and CPU µs per request (utime + stime from /proc/<pid>/stat) for each. Absolute figures are
// higher than in `npm run bench` (two gateways share a core and its caches); compare A with B.
//
// Environment:
//   BENCH_PAIRS      pairs to run (default 1); odd pairs swap the two builds' places (start order, ports),
//                    so each build runs in both orders; ends with the median of B/A over the pairs.
//   BENCH_TURNS      "true": the two gateways of a pair are loaded in turns, each with the servers' core to
//                    itself as in `npm run bench`, instead of at once. Where B costs much more than A, sharing a
//                    core gives B fewer requests a second, and a gateway serving fewer pays more per request for
//                    the same work (fewer requests per event-loop turn and system call): at once measures that as
//                    B's cost too, in turns does not. In turns the host's drift between the two is not shared:
//   BENCH_ROUNDS     with BENCH_TURNS, rounds of turns per pair (default 1), A B then B A and so on, each a B/A
//                    ratio of its own: many short rounds (seconds 2) keep each ratio's two turns close in time.
//   BENCH_NODE       the Node both builds run on: a major ("24", the npm package node@24 through `npm exec`),
//                    "path" (the node running this script) or a binary; default the Docker image's major.
//   BENCH_NODE_A, BENCH_NODE_B                  the same for one build (e.g. A on 20, B on 24).
//   BENCH_NODE_OPTIONS_A, BENCH_NODE_OPTIONS_B  node flags for one gateway (e.g. --max-semi-space-size=32).
//   BENCH_HEADERS    request headers added to the route's, as JSON (e.g. '{"Accept":"application/json"}').
//   BENCH_BODY       the body of a `METHOD /path` route (e.g. '{"user_id":"u-1"}', with a Content-Type header).
//   BENCH_VERSIONS_FILE_A, BENCH_VERSIONS_FILE_B  the version policy file of one gateway (API_VERSIONS_FILE;
//                    default ops/versions.json), e.g. one build with the query and media type schemes on.
//   BENCH_API_KEY_A, BENCH_API_KEY_B  "true": that gateway's requests carry a valid API-Key (a consumer
//                    registered on its admin port before the load), e.g. the same build with and without keys.
//   BENCH_TRACING_A, BENCH_TRACING_B  "true": that build's gateway traces every request (OTEL_TRACES_SAMPLER=
//                    always_on, OTLP http/protobuf) to a sink on the load core (bench/otlp-sink.mjs) that discards
//                    what it gets, e.g. the same build with tracing off and on; a number from 0 to 1 records that
//                    share of the requests (traceidratio). The backends never trace here: one
//                    that did would answer slower on the busy load core, and fewer requests a second would make
//                    each of its gateway's requests dearer for reasons that are not tracing.
// Each gateway keeps its consumer store in the run's temporary directory (the embedded one).
//
// To compare a change with the commit before it: build that commit in a worktree of its own (its own
// node_modules, so its gateway imports its own @version-router/platform), then
//   git worktree add /tmp/before HEAD && (cd /tmp/before && npm ci && npm run build)
//   BENCH_PAIRS=6 node bench/ab.mjs /tmp/before/gateway/dist/src/main.js gateway/dist/src/main.js
// Needs `npm run build`, 2 cores, wrk and taskset (apt-get install -y wrk util-linux).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  LOAD_CPU,
  ROUTES,
  cpuMicros,
  issueKey,
  load,
  median,
  need,
  nodeBinary,
  nodeVersion,
  pinning,
  startBackend,
  startGateway,
  startOtlpSink,
  wrkScript,
} from './harness.mjs';

const CONNECTIONS = 50;
const [gatewayA, gatewayB, path = '/v2/orders/ord-1001', seconds = '5'] = process.argv.slice(2);
// Any other route: a GET path, or `METHOD /path` sent with BENCH_BODY as its body.
const [, method = 'GET', target = path] = /^([A-Z]+) (\/\S*)$/.exec(path) ?? [];
const body = process.env.BENCH_BODY;
const named = ROUTES.find((route) => route.name === path) ?? {
  method,
  path: target,
  headers: {},
  ...(body === undefined ? {} : { body }),
};
const request = { ...named, headers: { ...named.headers, ...JSON.parse(process.env.BENCH_HEADERS ?? '{}') } };
if (gatewayB === undefined) {
  process.stderr.write('usage: node bench/ab.mjs <gateway-a.js> <gateway-b.js> [route] [seconds]\n');
  process.exit(2);
}
if (!pinning) {
  process.stderr.write('bench/ab.mjs needs 2 cores: one shared by the two gateways, one for the backends and wrk\n');
  process.exit(1);
}
need('wrk', 'apt-get install -y wrk');
need('taskset', 'apt-get install -y util-linux');

const env = process.env;
/** BENCH_TRACING_*: undefined (off), "true" (every request) or the share of requests recorded. */
function samplingOf(value) {
  if (value === undefined || value === '' || value === 'false') return undefined;
  const ratio = value === 'true' ? 1 : Number(value);
  return ratio === 1
    ? { ratio, env: { OTEL_TRACES_SAMPLER: 'always_on' } }
    : { ratio, env: { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: String(ratio) } };
}
const pairs = Number(env.BENCH_PAIRS ?? 1);
const builds = [
  {
    name: 'a',
    entry: gatewayA,
    node: nodeBinary(env.BENCH_NODE_A ?? env.BENCH_NODE),
    nodeOptions: env.BENCH_NODE_OPTIONS_A ?? '',
    policy: env.BENCH_VERSIONS_FILE_A,
    apiKey: env.BENCH_API_KEY_A === 'true',
    tracing: samplingOf(env.BENCH_TRACING_A),
  },
  {
    name: 'b',
    entry: gatewayB,
    node: nodeBinary(env.BENCH_NODE_B ?? env.BENCH_NODE),
    nodeOptions: env.BENCH_NODE_OPTIONS_B ?? '',
    policy: env.BENCH_VERSIONS_FILE_B,
    apiKey: env.BENCH_API_KEY_B === 'true',
    tracing: samplingOf(env.BENCH_TRACING_B),
  },
];
for (const build of builds) {
  const details = [
    `Node ${nodeVersion(build.node)}`,
    build.nodeOptions,
    build.policy === undefined ? '' : `policy ${build.policy}`,
    build.apiKey ? 'with API-Key' : '',
    build.tracing === undefined ? '' : `tracing ${build.tracing.ratio * 100} % of the requests`,
  ].filter((part) => part !== '');
  build.label = `${build.name.toUpperCase()} ${build.entry} (${details.join(', ')})`;
}
process.stdout.write(
  `${builds.map((build) => build.label).join('\n')}\n${path}, ${seconds} s, ${pairs} pair(s)` +
    `${env.BENCH_TURNS === 'true' ? ', in turns' : ''}\n`,
);

/** One pair: both builds loaded at once; resolves with { a, b } figures. */
async function runPair(order) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-ab-'));
  const children = [];
  try {
    let sink;
    if (builds.some((build) => build.tracing !== undefined)) {
      sink = await startOtlpSink(dir);
      children.push(sink.child);
    }
    const start = async (build) => {
      const tracing =
        build.tracing === undefined ? {} : { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, ...build.tracing.env };
      const backend = await startBackend(dir, `${build.name}-backend`, { cpu: LOAD_CPU, node: build.node });
      children.push(backend.child);
      const gateway = await startGateway(dir, `${build.name}-gateway`, backend.url, {
        entry: resolve(build.entry),
        env: { ...(build.policy === undefined ? {} : { API_VERSIONS_FILE: resolve(build.policy) }), ...tracing },
        node: build.node,
        nodeOptions: build.nodeOptions,
      });
      children.push(gateway.child);
      const headers = build.apiKey
        ? { ...request.headers, 'API-Key': await issueKey(gateway.adminUrl, `bench ${build.name}`) }
        : request.headers;
      return { build, ...gateway, script: wrkScript(join(dir, `${build.name}.lua`), { ...request, headers }) };
    };
    const gateways = [];
    for (const build of order) gateways.push(await start(build));
    /** Loads `some` of the gateways at once; returns each one's figures by build name. */
    const measure = async (some, duration) => {
      const before = some.map((gateway) => cpuMicros(gateway.child.pid));
      const results = await Promise.all(
        some.map((gateway) => load(gateway.url, gateway.script, CONNECTIONS, duration)),
      );
      const figures = {};
      some.forEach((gateway, i) => {
        const cpuUs = (cpuMicros(gateway.child.pid) - before[i]) / results[i].requests;
        figures[gateway.build.name] = { rps: results[i].rps, cpuUs, errors: results[i].errors };
      });
      return figures;
    };
    const turns = env.BENCH_TURNS === 'true' ? gateways.map((gateway) => [gateway]) : [gateways];
    for (const turn of turns) await measure(turn, 2); // warm-up: JIT, pool connections
    const rounds = [];
    for (let round = 0; round < (env.BENCH_TURNS === 'true' ? Number(env.BENCH_ROUNDS ?? 1) : 1); round++) {
      const figures = {};
      for (const turn of round % 2 === 0 ? turns : [...turns].reverse()) {
        Object.assign(figures, await measure(turn, Number(seconds)));
      }
      rounds.push(figures);
    }
    return rounds;
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    await sleep(300);
    rmSync(dir, { recursive: true, force: true });
  }
}

const ratios = [];
let measured = 0;
for (let pair = 0; pair < pairs; pair++) {
  const order = pair % 2 === 0 ? builds : [...builds].reverse();
  const rounds = await runPair(order);
  rounds.forEach(({ a, b }, round) => {
    measured++;
    const ratio = b.cpuUs / a.cpuUs;
    // A pair in which a gateway served nothing (the host stalled) says nothing about either build.
    if (Number.isFinite(ratio)) ratios.push(ratio);
    const show = (name, f) =>
      `${name.toUpperCase()} ${f.rps.toFixed(0)} req/s ${f.cpuUs.toFixed(0)} µs CPU/req errors ${f.errors}`;
    const first = round % 2 === 0 ? order : [...order].reverse();
    process.stdout.write(
      `pair ${pair + 1}${rounds.length > 1 ? ` round ${round + 1}` : ''} ` +
        `(${first.map((build) => build.name.toUpperCase()).join(' first, ')} second): ${show('a', a)} ` +
        `| ${show('b', b)} | B/A ${ratio.toFixed(3)}\n`,
    );
  });
}
if (ratios.length > 1) {
  const medianRatio = median(ratios);
  const lower = ratios.filter((ratio) => ratio < 1).length;
  const sorted = [...ratios].sort((x, y) => x - y);
  const quartiles = `${sorted[Math.floor(sorted.length / 4)].toFixed(3)}–${sorted[Math.floor((3 * sorted.length) / 4)].toFixed(3)}`;
  process.stdout.write(
    `median B/A CPU per request ${medianRatio.toFixed(3)} (${((medianRatio - 1) * 100).toFixed(1)} %, quartiles ` +
      `${quartiles}), B lower in ${lower} of ${ratios.length}${
        ratios.length < measured ? ` (${measured - ratios.length} without requests left out)` : ''
      }\n`,
  );
}
