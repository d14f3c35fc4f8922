import type { IncomingMessage } from 'node:http';
import Fastify, { type FastifyBaseLogger, type FastifyRequest } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildAdminApp } from '../../src/admin.js';
import { baseServerOptions, httpFoundation } from '../../src/http-foundation.js';
import { createLogger } from '../../src/logger.js';
import { createRegistry, httpMetrics } from '../../src/metrics.js';
import { readTracingConfig } from '../../src/tracing/config.js';
import { RequestTraces } from '../../src/plugins/request-trace.js';
import { startTracing, type RequestTrace, type Tracing } from '../../src/tracing/index.js';
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.js';

/**
 * The server span every request gets in a process that traces (the foundation's log controller starts and ends it),
 * through the real SDK and exporter to a receiver on loopback; shutting the tracer down sends what it holds.
 */
let receiver: OtlpReceiver;
let tracing: Tracing;
const lines: Record<string, unknown>[] = [];

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  const config = readTracingConfig(
    { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
    'platform-test',
  );
  const logger = createLogger('info', 'platform-test', {
    pretty: false,
    destination: { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  tracing = (await startTracing(config, logger)) as Tracing;
  const registry = createRegistry({ exemplars: true });
  const app = Fastify(baseServerOptions(logger, { tracing }));
  await app.register(httpFoundation);
  await app.register(httpMetrics, { registry });
  app.get('/things/:id', async () => ({ ok: true }));
  app.get('/boom', async () => {
    throw new Error('boom');
  });
  // A catch-all that matches its own patterns, as the gateway's versioned resources do.
  app.get('/catch/*', (request, reply) => {
    if (request.url === '/catch/none') {
      reply.callNotFound();
      return;
    }
    request.routeLabel = '/catch/:name';
    void reply.send({ ok: true });
  });
  const admin = await buildAdminApp({
    registry,
    logger,
    lifecycle: { leaving: false },
    adminToken: undefined,
    host: '127.0.0.1',
  });
  for (const url of ['/things/t-1', '/boom', '/nowhere', '/catch/one', '/catch/none']) {
    await app.inject({ url, headers: { 'x-request-id': `id${url}` } });
  }
  await admin.inject('/metrics');
  await app.close();
  await admin.close();
  await tracing.shutdown();
});

afterAll(() => receiver.close());

const spanOf = (path: string) => {
  const found = receiver.spans.filter((span) => span.attributes['url.path'] === path);
  expect(found, path).toHaveLength(1);
  return found[0]!;
};

it('names a server span by method and route template, with the HTTP attributes', () => {
  const span = spanOf('/things/t-1');
  expect(span).toMatchObject({
    service: 'platform-test',
    name: 'GET /things/{id}',
    kind: SPAN_KIND.server,
    statusCode: 0,
  });
  expect(span.attributes).toMatchObject({
    'http.request.method': 'GET',
    'http.route': '/things/{id}',
    'http.response.status_code': 200,
    'url.scheme': 'http',
  });
});

it('names a catch-all route by the pattern it matched itself', () => {
  expect(spanOf('/catch/one')).toMatchObject({ name: 'GET /catch/{name}' });
});

it('names a request no route matched by its method alone, without http.route', () => {
  for (const path of ['/nowhere', '/catch/none']) {
    const span = spanOf(path);
    expect(span.name).toBe('GET');
    expect(span.attributes).not.toHaveProperty('http.route');
    // 404, or 405 where another method serves the path.
    expect(span.attributes['http.response.status_code']).toBeGreaterThanOrEqual(404);
    expect(span.statusCode).toBe(0);
  }
});

it('marks a 5xx as an error of the server span', () => {
  expect(spanOf('/boom')).toMatchObject({ statusCode: 2, attributes: { 'error.type': '500' } });
});

it('does not trace the admin listener', () => {
  expect(receiver.spans.filter((span) => span.attributes['url.path'] === '/metrics')).toEqual([]);
});

it("puts the span's ids on the request's log line", () => {
  const span = spanOf('/things/t-1');
  const line = lines.find((entry) => entry.reqId === 'id/things/t-1' && entry.msg === 'request completed');
  expect(line).toMatchObject({ trace_id: span.traceId, span_id: span.spanId });
});

it('gives a request the span its logger was built with, and one of its own to a request whose logger was not', () => {
  const started: string[] = [];
  const stub = (traceId: string) => ({ traceId, spanId: `span-${traceId}`, sampled: true }) as unknown as RequestTrace;
  const tracing = {
    startRequest: (raw: IncomingMessage) => {
      started.push(raw.url as string);
      return stub(raw.url as string);
    },
    shutdown: async () => undefined,
  } as Tracing;
  const traces = new RequestTraces(tracing);
  const bindings: Record<string, unknown>[] = [];
  const parent = {
    child: (own: Record<string, unknown>) => (bindings.push(own), parent),
  } as unknown as FastifyBaseLogger;
  const rawA = { url: '/a' } as IncomingMessage;
  const rawB = { url: '/b' } as IncomingMessage;
  traces.childLoggerFactory.call(undefined as never, parent, { reqId: 'a' }, {}, rawA);
  expect(bindings).toEqual([{ reqId: 'a', trace_id: '/a', span_id: 'span-/a' }]);
  const requestA = { raw: rawA, trace: null } as unknown as FastifyRequest;
  traces.attach(requestA);
  expect(requestA.trace?.traceId).toBe('/a');
  const set: unknown[] = [];
  const requestB = {
    raw: rawB,
    trace: null,
    log: { setBindings: (own: unknown) => set.push(own) },
  } as unknown as FastifyRequest;
  traces.attach(requestB);
  expect(requestB.trace?.traceId).toBe('/b');
  expect(set).toEqual([{ trace_id: '/b', span_id: 'span-/b' }]);
  expect(started).toEqual(['/a', '/b']);
});
