// The CPU a traced request costs the gateway's tracer alone, without HTTP: what platform/src/tracing does for one
// proxied request (the server span with the gateway's attributes, the client span and its traceparent, the upstream
// call's end as undici's diagnostics channels report it, both spans exported in batches to an OTLP sink on
// loopback), in µs of this process's CPU per request, for each protocol and for a sampled share.
//
//   node bench/tracing-cost.mjs [requests]
//
// Runs the built platform (`npm run build` first) on the node running it. The sink (bench/otlp-sink.mjs) is a
// process of its own, so only the sending side of an export is counted. The first line is this script's own
// simulation of a request with a tracer that does nothing (objects, headers, the channel messages undici would
// publish): the tracer's cost is each case's figure less that one.
import { spawn } from 'node:child_process';
import { channel } from 'node:diagnostics_channel';
import { once } from 'node:events';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { createLogger } from '../platform/dist/logger.js';
import { AttributeSet, readTracingConfig, startTracing } from '../platform/dist/tracing/index.js';

const REQUESTS = Number(process.argv[2] ?? 100_000);

const sink = spawn(process.execPath, [new URL('otlp-sink.mjs', import.meta.url).pathname], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const [listening] = await once(sink.stdout, 'data');
const sinkUrl = JSON.parse(String(listening).split('\n')[0]).api;

const undici = {
  create: channel('undici:request:create'),
  headers: channel('undici:request:headers'),
  trailers: channel('undici:request:trailers'),
};

/** The gateway's attributes of a request to the deprecated v1 served by v2, built once as accounting/trace.ts does. */
const VERSION_ANSWER = new AttributeSet({
  'api.version.requested': '1',
  'api.version.selected_by': 'path',
  'api.deprecation.phase': 'deprecated',
});
const SERVED = new AttributeSet({
  'api.version.served': '2',
  'api.translation.changes': ['rename user_id → customer_id', 'add currency'],
});

const PEER = { remoteAddress: '127.0.0.1' };

/** What the foundation, the catch-all route and the proxy do with the trace of one request. */
function oneRequest(tracing, i) {
  const raw = {
    method: 'GET',
    url: '/v1/orders/ord-1001',
    headers: { host: 'gateway', 'user-agent': 'wrk', 'x-request-id': String(i) },
    socket: PEER,
  };
  const request = { method: 'GET', url: raw.url, raw, routeLabel: '/v1/orders/:id', routeOptions: { url: '/*' } };
  const trace = tracing.startRequest(raw);
  trace.setAttributes(VERSION_ANSWER);
  trace.setAttributes(SERVED);
  const headers = { host: 'backend', 'x-request-id': String(i) };
  trace.forward(headers);
  // undici's request as its channels show it: the headers the proxy handed over, as a flat array.
  const upstream = {
    origin: 'http://127.0.0.1:8081',
    path: '/v2/orders/ord-1001',
    headers: Object.entries(headers).flat(),
  };
  undici.create.publish({ request: upstream });
  undici.headers.publish({ request: upstream, response: { statusCode: 200, headers: [], statusText: 'OK' } });
  undici.trailers.publish({ request: upstream, trailers: [] });
  trace.end(request, { statusCode: 200 });
}

/** A tracer that does nothing: what the simulation of a request costs without one. */
const NO_TRACE = {
  traceId: '',
  spanId: '',
  sampled: false,
  setAttribute() {},
  setAttributes() {},
  forward() {},
  end() {},
};
const noTracing = { startRequest: () => NO_TRACE, shutdown: async () => {} };

async function measure(variables, n) {
  const config =
    variables === undefined
      ? undefined
      : readTracingConfig(
          { OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl, OTEL_BSP_MAX_QUEUE_SIZE: '65536', ...variables },
          'bench',
        );
  const tracing = config === undefined ? noTracing : await startTracing(config, createLogger('warn', 'bench'));
  const run = async (n) => {
    const before = process.cpuUsage();
    for (let i = 0; i < n; i++) {
      oneRequest(tracing, i);
      // Let the exporter's sockets work, as the event loop of a serving process does between requests.
      if (i % 100 === 99) await yieldToLoop();
    }
    await tracing.shutdown();
    const used = process.cpuUsage(before);
    return (used.user + used.system) / n;
  };
  return run(n);
}

const cases = [
  ['no tracer (this simulation alone)', undefined],
  ['http/protobuf, every request', { OTEL_TRACES_SAMPLER: 'always_on' }],
  ['http/json, every request', { OTEL_TRACES_SAMPLER: 'always_on', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }],
  ['http/protobuf, 10 % of the requests', { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }],
  ['http/protobuf, none recorded', { OTEL_TRACES_SAMPLER: 'always_off' }],
];
process.stdout.write(`node ${process.version}, ${REQUESTS} requests per case (after a warm-up of 20,000)\n`);
for (const [name, variables] of cases) {
  await measure(variables, 20_000);
  process.stdout.write(`${name}: ${(await measure(variables, REQUESTS)).toFixed(1)} µs CPU per request\n`);
}
sink.kill();
