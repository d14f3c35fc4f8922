// Where a traced request's CPU goes, part by part, for the OpenTelemetry SDK's own pieces and for ours
// (platform/src/tracing/): ids, the clock, the span objects with their attributes, the batch processor, the OTLP
// encoding in each protocol, and what a traced request adds outside the tracer (the log line's ids, the latency
// exemplar). Each part is timed alone in a loop, in µs of this process's CPU for one proxied request: a server
// span with the gateway's attributes and a client span, as bench/tracing-cost.mjs makes them.
//
//   node bench/tracing-parts.mjs [requests]
//
// Runs the built platform (`npm run build` first) on the node running it. Prints, per part, the lowest and the
// median of BENCH_ROUNDS rounds (default 7): on a busy host the lowest is the better estimate of the work itself.
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import { createLogger } from '../platform/dist/logger.js';
import { AttributeSet } from '../platform/dist/tracing/attribute-set.js';
import { newSpanId, newTraceId } from '../platform/dist/tracing/ids.js';
import { jsonBatches } from '../platform/dist/tracing/otlp-json.js';
import { protobufBatches } from '../platform/dist/tracing/otlp-protobuf.js';
import { Span, SpanKind, spanFlags } from '../platform/dist/tracing/span.js';

// The SDK's packages, as the platform resolves them.
const require = createRequire(new URL('../platform/package.json', import.meta.url));
const load = (name) => import(require.resolve(name));
const api = await load('@opentelemetry/api');
const core = await load('@opentelemetry/core');
const sdk = await load('@opentelemetry/sdk-trace');
const resources = await load('@opentelemetry/resources');
const transformer = await load('@opentelemetry/otlp-transformer');
const promClient = await load('prom-client');

const REQUESTS = Number(process.argv[2] ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);

/** µs of CPU per call of `fn` (one request's worth of work): lowest and median over the rounds. */
function time(name, fn, calls = REQUESTS, per = 1) {
  for (let i = 0; i < Math.min(calls, 20_000); i++) fn(i);
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const before = process.cpuUsage();
    for (let i = 0; i < calls; i++) fn(i);
    const used = process.cpuUsage(before);
    rounds.push((used.user + used.system) / calls / per);
  }
  rounds.sort((a, b) => a - b);
  const low = rounds[0];
  const median = rounds[Math.floor(rounds.length / 2)];
  process.stdout.write(`| ${name} | ${low.toFixed(2)} | ${median.toFixed(2)} |\n`);
}

const PATH = '/v1/orders/ord-1001';
const CHANGES = Object.freeze(['rename user_id → customer_id', 'add currency']);
const serverStart = () => ({
  'http.request.method': 'GET',
  'url.path': PATH,
  'url.scheme': 'http',
  'client.address': '127.0.0.1',
  'user_agent.original': 'wrk',
});
const GATEWAY = [
  ['api.version.requested', '1'],
  ['api.version.selected_by', 'path'],
  ['api.deprecation.phase', 'deprecated'],
  ['api.version.served', '2'],
  ['api.translation.changes', CHANGES],
];
const UPSTREAM = [
  ['url.full', 'http://127.0.0.1:8081/v2/orders/ord-1001'],
  ['server.address', '127.0.0.1'],
  ['server.port', 8081],
  ['http.response.status_code', 200],
];

// ---- the SDK ----------------------------------------------------------------------------------------------------

function sdkTracer(processor, sampler = new sdk.AlwaysOnSampler()) {
  const provider = new sdk.TracerProvider({
    resource: resources.defaultResource(),
    sampler,
    spanProcessors: [processor],
  });
  return provider.getTracer('@version-router/platform');
}

/** One request's spans through the SDK, as the tracer before ours made them. */
function sdkRequest(tracer, attributes = true) {
  const { ROOT_CONTEXT, SpanKind: Kind, trace } = api;
  const server = tracer.startSpan(
    'GET',
    { kind: Kind.SERVER, attributes: attributes ? serverStart() : undefined },
    ROOT_CONTEXT,
  );
  if (attributes) for (const [key, value] of GATEWAY) server.setAttribute(key, value);
  const client = tracer.startSpan(
    'GET',
    { kind: Kind.CLIENT, attributes: attributes ? { 'http.request.method': 'GET' } : undefined },
    trace.setSpan(ROOT_CONTEXT, server),
  );
  if (attributes) for (const [key, value] of UPSTREAM) client.setAttribute(key, value);
  client.end();
  server.updateName('GET /v1/orders/{id}');
  if (attributes) {
    server.setAttribute('http.route', '/v1/orders/{id}');
    server.setAttribute('http.response.status_code', 200);
  }
  server.end();
}

// ---- ours -------------------------------------------------------------------------------------------------------

const discard = { record() {} };

const set = (entries) => new AttributeSet(Object.fromEntries(entries));
const SETS = {
  serverMethod: set([
    ['http.request.method', 'GET'],
    ['url.scheme', 'http'],
  ]),
  clientMethod: set([['http.request.method', 'GET']]),
  answer: set(GATEWAY.slice(0, 3)),
  served: set(GATEWAY.slice(3)),
  origin: set(UPSTREAM.slice(1, 3)),
  route: set([['http.route', '/v1/orders/{id}']]),
  status: set([['http.response.status_code', 200]]),
};

/**
 * One request's spans as platform/src/tracing/tracer.ts makes them, handed to `sink`: the attributes that are the
 * same for many requests in sets, as the tracer and the gateway give them, or (`sets` false) all one by one.
 */
function ourRequest(sink, sets = true) {
  const epochMs = Date.now();
  const origin = performance.now();
  const serverStart = sets
    ? [SETS.serverMethod, 0, 'url.path', PATH, 'client.address', '127.0.0.1', 'user_agent.original', 'wrk']
    : [
        'http.request.method',
        'GET',
        'url.path',
        PATH,
        'url.scheme',
        'http',
        'client.address',
        '127.0.0.1',
        'user_agent.original',
        'wrk',
      ];
  const server = new Span(
    sink,
    newTraceId(),
    newSpanId(),
    undefined,
    undefined,
    'GET',
    SpanKind.server,
    spanFlags(true, false),
    epochMs,
    origin,
    0,
    serverStart,
  );
  if (sets) {
    server.add(SETS.answer);
    server.add(SETS.served);
  } else {
    for (const [key, value] of GATEWAY) server.set(key, value);
  }
  const client = new Span(
    sink,
    server.traceId,
    newSpanId(),
    server.spanId,
    undefined,
    'GET',
    SpanKind.client,
    spanFlags(true, false),
    epochMs,
    origin,
    performance.now() - origin,
    sets ? [SETS.clientMethod, 0] : ['http.request.method', 'GET'],
  );
  client.set('url.full', UPSTREAM[0][1]);
  if (sets) {
    client.add(SETS.origin);
    client.add(SETS.status);
  } else {
    for (const [key, value] of UPSTREAM.slice(1)) client.set(key, value);
  }
  client.finish();
  server.name = 'GET /v1/orders/{id}';
  if (sets) {
    server.add(SETS.route);
    server.add(SETS.status);
  } else {
    server.set('http.route', '/v1/orders/{id}');
    server.set('http.response.status_code', 200);
  }
  server.finish();
}

const ORIGIN = {
  resource: Object.entries(resources.defaultResource().attributes).flat(),
  scopeName: '@version-router/platform',
};

/** Encodes requests' spans into batches of 512 spans, as the batcher does; each batch is sealed and its memory reused. */
function encodeInto(newBatch, sets) {
  let batch = newBatch();
  const sink = {
    record(span) {
      batch.add(span);
      if (batch.count === 512) {
        batch.bytes();
        batch.release();
        batch = newBatch();
      }
    },
  };
  return () => ourRequest(sink, sets);
}

process.stdout.write(`node ${process.version}, ${REQUESTS} requests per round, ${ROUNDS} rounds\n\n`);
process.stdout.write('| part (one request: server span + client span) | lowest µs | median µs |\n|---|---:|---:|\n');

// Ids and clock.
const ids = new sdk.RandomIdGenerator();
time('SDK: ids (1 trace id, 2 span ids, Math.random)', () => {
  ids.generateTraceId();
  ids.generateSpanId();
  ids.generateSpanId();
});
time('ours: ids (pooled crypto random bytes)', () => {
  newTraceId();
  newSpanId();
  newSpanId();
});
time('SDK: clock (Date.now and 2 hrTime conversions per span)', () => {
  for (let i = 0; i < 2; i++) {
    core.millisToHrTime(Date.now());
    core.addHrTimes([1, 2], core.millisToHrTime(performance.now()));
  }
});
time('ours: clock (1 Date.now, 4 performance.now)', () => {
  Date.now();
  performance.now();
  performance.now();
  performance.now();
  performance.now();
});

// Context: reading a caller's traceparent (the same propagator in both).
const propagator = new core.W3CTraceContextPropagator();
const withParent = {
  traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  tracestate: 'vendor=opaque',
};
time("both: a caller's traceparent and tracestate read (W3C propagator)", () =>
  propagator.extract(api.ROOT_CONTEXT, withParent, api.defaultTextMapGetter),
);

// Span objects and attributes, nothing exported.
const noopTracer = sdkTracer(new sdk.NoopSpanProcessor());
time('SDK: span objects, no attributes', () => sdkRequest(noopTracer, false));
time('SDK: span objects and 18 attributes (checked, copied)', () => sdkRequest(noopTracer));
const offTracer = sdkTracer(new sdk.NoopSpanProcessor(), new sdk.AlwaysOffSampler());
time('SDK: nothing recorded (always_off)', () => sdkRequest(offTracer));
time('ours: span objects, 18 attributes one by one', () => ourRequest(discard, false));
time('ours: span objects, constant attributes in sets', () => ourRequest(discard, true));

// Batch processor, the exporter discarding what it gets.
const sdkBatched = sdkTracer(
  new sdk.BatchSpanProcessor(
    { export: (spans, done) => done({ code: 0 }), shutdown: async () => {} },
    {
      maxQueueSize: 1 << 20,
      maxExportBatchSize: 512,
    },
  ),
);
time('SDK: spans through its BatchSpanProcessor (not serialised)', () => sdkRequest(sdkBatched));

// OTLP encoding: the SDK's serialisers on ended spans, per request of a 512-span batch.
const ended = [];
const collecting = sdkTracer({
  onStart() {},
  onEnd: (span) => ended.push(span),
  shutdown: async () => {},
  forceFlush: async () => {},
});
for (let i = 0; i < 256; i++) sdkRequest(collecting);
time(
  'SDK: protobuf serialisation (ProtobufTraceSerializer)',
  () => transformer.ProtobufTraceSerializer.serializeRequest(ended),
  500,
  256,
);
time(
  'SDK: JSON serialisation (JsonTraceSerializer)',
  () => transformer.JsonTraceSerializer.serializeRequest(ended),
  500,
  256,
);
time('ours: spans, attributes one by one, encoded in protobuf', encodeInto(protobufBatches(ORIGIN), false));
time('ours: spans, constant attributes in sets, encoded in protobuf', encodeInto(protobufBatches(ORIGIN), true));
time('ours: spans, attributes one by one, encoded in JSON', encodeInto(jsonBatches(ORIGIN), false));
time('ours: spans, constant attributes in sets, encoded in JSON', encodeInto(jsonBatches(ORIGIN), true));

// Outside the tracer: the request log line's ids, the latency histogram's exemplar.
const sinkStream = new Writable({ write: (chunk, encoding, done) => done() });
const logger = createLogger('info', 'bench', { pretty: false, destination: sinkStream });
time("log: a request's child logger", () => logger.child({ reqId: 'req-1' }));
time("log: a request's child logger, trace_id and span_id bound", () =>
  logger
    .child({ reqId: 'req-1' })
    .setBindings({ trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', span_id: '00f067aa0ba902b7' }),
);
const labels = { method: 'GET', route: '/v1/orders/:id', status_code: '200' };
const histogram = (enableExemplars) =>
  new promClient.Histogram({
    name: `bench_${enableExemplars ? 'with' : 'without'}`,
    help: 'bench',
    labelNames: ['method', 'route', 'status_code'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [],
    enableExemplars,
  });
const plain = histogram(false);
const withExemplars = histogram(true);
time('metrics: latency observed', () => plain.observe({ ...labels }, 0.0021));
time('metrics: latency observed with a trace_id exemplar', () =>
  withExemplars.observe({
    labels: { ...labels },
    value: 0.0021,
    exemplarLabels: { trace_id: '4bf92f3577b34da6a3ce929d0e0e4736' },
  }),
);
