/**
 * Traces through the built gateway and backend as real processes on loopback (docs/tracing.md): both export to an
 * OTLP/HTTP receiver of this test's own, the gateway in http/protobuf (the default), the backend in http/json. A
 * recording relay between them keeps each upstream request's raw header lines, so "exactly one traceparent" is read
 * from what the gateway put on the wire, not from a server's folded view of it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type ServiceProcess } from '../../platform/test/support/service-process.js';
import { eventually } from '../../platform/test/support/eventually.mjs';
import {
  SPAN_KIND,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../../platform/test/support/otlp-receiver.js';
import { sharedGatewayStore } from '../support/gateway-store.js';
import { describeWithTool } from '../../platform/test/support/tools.js';
import { query, startPrometheus } from '../ops/prometheus-process.js';

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const OTHER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const OTHER_SPAN = 'b7ad6b7169203331';
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

/**
 * A module the processes are started with (`--import`) that reports on stderr every OpenTelemetry module they load:
 * with tracing off no SDK module may be (the API package is prom-client's own dependency), with it on the SDK is.
 */
const LOAD_PROBE = `import { registerHooks } from 'node:module';
registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context);
    if (resolved.url.includes('/@opentelemetry/')) process.stderr.write('loaded ' + resolved.url + '\\n');
    return resolved;
  },
});
`;

let probeDir: string;
let probeOptions: { NODE_OPTIONS: string };

beforeAll(() => {
  probeDir = mkdtempSync(join(tmpdir(), 'tracing-probe-'));
  const probe = join(probeDir, 'load-probe.mjs');
  writeFileSync(probe, LOAD_PROBE);
  probeOptions = { NODE_OPTIONS: `--import=${probe}` };
});

afterAll(() => rmSync(probeDir, { recursive: true, force: true }));

/** What the gateway sent upstream: the raw header lines (name, value, name, value…). */
interface Relayed {
  url: string;
  rawHeaders: string[];
}

interface Relay {
  url: string;
  seen: Map<string, Relayed>;
  close(): Promise<void>;
}

/** A pass-through HTTP relay to `target` that records every request's raw headers by its X-Request-Id. */
async function startRelay(target: string): Promise<Relay> {
  const seen = new Map<string, Relayed>();
  const { hostname, port } = new URL(target);
  const server = createServer((req, res) => {
    seen.set(String(req.headers['x-request-id']), { url: String(req.url), rawHeaders: req.rawHeaders });
    const upstream = httpRequest(
      { host: hostname, port: Number(port), method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Every value of one header among raw header lines (names compared case-insensitively). */
function valuesOf(rawHeaders: string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]?.toLowerCase() === name) values.push(rawHeaders[i + 1] as string);
  }
  return values;
}

/** A GET with headers given as raw lines, so a header can be sent twice. */
function get(url: string, rawHeaders: [string, string][]): Promise<{ status: number; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: 'GET' }, (res) => {
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    for (const [name, value] of rawHeaders) {
      const present = request.getHeader(name);
      request.setHeader(name, present === undefined ? value : [...[present].flat().map(String), value]);
    }
    request.once('error', reject);
    request.end();
  });
}

describe('traces through the gateway (OTEL_* set on both processes)', () => {
  let receiver: OtlpReceiver;
  let relay: Relay;
  let backend: ServiceProcess;
  let gateway: ServiceProcess;
  let requestNumber = 0;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    const otel = { OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url };
    backend = await startService('backend', {
      BACKEND_HOST: '127.0.0.1',
      BACKEND_PORT: '0',
      BACKEND_ADMIN_PORT: '0',
      ...otel,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      ...probeOptions,
    });
    relay = await startRelay(backend.apiUrl);
    gateway = await startService('gateway', {
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_PORT: '0',
      GATEWAY_ADMIN_PORT: '0',
      ...sharedGatewayStore(),
      BACKEND_URL: relay.url,
      ...otel,
      ...probeOptions,
    });
  }, 60_000);

  afterAll(async () => {
    await Promise.all([gateway?.stop(), backend?.stop()]);
    await Promise.all([relay?.close(), receiver?.close()]);
  });

  /** The spans of one trace once all three have arrived: gateway server and client span, backend server span. */
  function hop(traceId: string): Promise<{ server: ReceivedSpan; client: ReceivedSpan; backend: ReceivedSpan }> {
    const ofTrace = () => receiver.spans.filter((span) => span.traceId === traceId);
    const pick = (service: string, kind: number) =>
      ofTrace().filter((span) => span.service === service && span.kind === kind);
    return eventually(
      `the three spans of trace ${traceId}`,
      () => {
        const [server, client, backend] = [
          pick('gateway', SPAN_KIND.server),
          pick('gateway', SPAN_KIND.client),
          pick('users-orders', SPAN_KIND.server),
        ];
        if (server.length + client.length + backend.length < 3) return undefined;
        // Exactly one of each, never more.
        expect([server.length, client.length, backend.length]).toEqual([1, 1, 1]);
        return { server: server[0], client: client[0], backend: backend[0] } as Record<string, ReceivedSpan> & {
          server: ReceivedSpan;
          client: ReceivedSpan;
          backend: ReceivedSpan;
        };
      },
      { timeoutMs: 10_000, lastSeen: () => JSON.stringify(ofTrace(), null, 1) },
    );
  }

  /**
   * Sends a GET through the gateway and checks the hop: one traceparent upstream, naming the gateway's client span
   * as its parent; the client span a child of the gateway's server span; the backend's server span its child.
   */
  async function traced(path: string, headers: [string, string][] = []) {
    const requestId = `tracing-${process.pid}-${++requestNumber}`;
    const response = await get(`${gateway.apiUrl}${path}`, [['x-request-id', requestId], ...headers]);
    const relayed = relay.seen.get(requestId);
    expect(relayed, 'the request reached the backend').toBeDefined();
    const traceparents = valuesOf((relayed as Relayed).rawHeaders, 'traceparent');
    expect(traceparents).toHaveLength(1);
    const [, traceId, parentId] = TRACEPARENT.exec(traceparents[0] as string) ?? [];
    expect(traceId, traceparents[0]).toBeDefined();
    const spans = await hop(traceId as string);
    expect(spans.client.spanId).toBe(parentId);
    expect(spans.client.parentSpanId).toBe(spans.server.spanId);
    expect(spans.backend.parentSpanId).toBe(spans.client.spanId);
    return { response, relayed: relayed as Relayed, requestId, traceparents, traceId: traceId as string, ...spans };
  }

  it('(a) without a traceparent: a new trace, the gateway its root, named by the version and route template', async () => {
    const hop = await traced('/v2/orders/ord-1001');
    expect(hop.response.status).toBe(200);
    expect(hop.server.parentSpanId).toBe('');
    expect(hop.server.name).toBe('GET /v2/orders/{id}');
    expect(hop.server.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/v2/orders/{id}',
      'http.response.status_code': 200,
      'url.path': '/v2/orders/ord-1001',
      'api.version.requested': '2',
      'api.version.served': '2',
      'api.version.selected_by': 'path',
      'api.deprecation.phase': 'current',
    });
    expect(hop.server.attributes).not.toHaveProperty('api.translation.changes');
    expect(hop.server.attributes).not.toHaveProperty('api.consumer.id');
    expect(hop.client.name).toBe('GET');
    expect(hop.client.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.response.status_code': 200,
      'url.full': `${relay.url}/v2/orders/ord-1001`,
    });
    expect(hop.backend.name).toBe('GET /v2/orders/{id}');
  });

  it("(b) with a traceparent: continues the caller's trace, its span the parent, its tracestate passed on", async () => {
    const hop = await traced('/orders/ord-1002', [
      ['traceparent', `00-${CALLER_TRACE}-${CALLER_SPAN}-01`],
      ['tracestate', 'vendor=opaque'],
      ['api-version', '2'],
    ]);
    expect(hop.traceId).toBe(CALLER_TRACE);
    expect(hop.server.parentSpanId).toBe(CALLER_SPAN);
    expect(hop.traceparents[0]).not.toContain(CALLER_SPAN);
    expect(valuesOf(hop.relayed.rawHeaders, 'tracestate')).toEqual(['vendor=opaque']);
    expect(hop.server.name).toBe('GET /orders/{id}');
    expect(hop.server.attributes).toMatchObject({ 'api.version.selected_by': 'header', 'api.version.served': '2' });
  });

  it('(c) with two traceparent headers, or two values in one: a new trace, one traceparent upstream', async () => {
    const twoLines = await traced('/v2/orders/ord-1003', [
      ['traceparent', `00-${CALLER_TRACE}-${CALLER_SPAN}-01`],
      ['traceparent', `00-${OTHER_TRACE}-${OTHER_SPAN}-01`],
      ['tracestate', 'vendor=opaque'],
    ]);
    const oneLine = await traced('/v2/orders/ord-1003', [
      ['traceparent', `00-${CALLER_TRACE}-${CALLER_SPAN}-01, 00-${OTHER_TRACE}-${OTHER_SPAN}-01`],
    ]);
    for (const hop of [twoLines, oneLine]) {
      // Which of two parents is meant is undefined: W3C Trace Context discards an unparseable traceparent.
      expect([CALLER_TRACE, OTHER_TRACE]).not.toContain(hop.traceId);
      expect(hop.server.parentSpanId).toBe('');
      expect(valuesOf(hop.relayed.rawHeaders, 'tracestate')).toEqual([]);
    }
  });

  it('(d) a version declared as changes: the deprecated v1 served by v2, the changes on the span', async () => {
    const hop = await traced('/v1/orders/ord-1001');
    expect(hop.response.status).toBe(200);
    expect(hop.response.headers.deprecation).toBe('true');
    expect(hop.relayed.url).toBe('/v2/orders/ord-1001');
    expect(hop.server.name).toBe('GET /v1/orders/{id}');
    expect(hop.server.attributes).toMatchObject({
      'http.route': '/v1/orders/{id}',
      'api.version.requested': '1',
      'api.version.served': '2',
      'api.version.selected_by': 'path',
      'api.deprecation.phase': 'deprecated',
      'api.translation.changes': ['rename user_id → customer_id', 'scale total → total_cents ×100', 'add currency'],
    });
    expect(hop.client.attributes['url.full']).toBe(`${relay.url}/v2/orders/ord-1001`);
    expect(hop.backend.name).toBe('GET /v2/orders/{id}');
  });

  it('names the consumer of a valid API-Key by its id, and no span carries the key', async () => {
    const post = async (path: string, body?: unknown) => {
      const res = await fetch(`${gateway.adminUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      expect(res.status).toBe(201);
      return (await res.json()) as { id: string; key: string };
    };
    const { id } = await post('/consumers', { name: `tracing ${process.pid}` });
    const { key } = await post(`/consumers/${id}/keys`);
    const hop = await traced('/v2/orders/ord-1004', [['api-key', key]]);
    expect(hop.server.attributes['api.consumer.id']).toBe(id);
    expect(JSON.stringify(receiver.spans)).not.toContain(key);
  });

  it("puts trace_id and span_id on both processes' log lines of the request", async () => {
    const hop = await traced('/v2/orders/ord-1005');
    const completed = (service: ServiceProcess) =>
      eventually(
        'the request completed line',
        () => service.logs.find((entry) => entry.reqId === hop.requestId && entry.msg === 'request completed'),
        { timeoutMs: 5_000 },
      );
    expect(await completed(gateway)).toMatchObject({ trace_id: hop.traceId, span_id: hop.server.spanId });
    expect(await completed(backend)).toMatchObject({ trace_id: hop.traceId, span_id: hop.backend.spanId });
  });

  it('links latency buckets to traces: /metrics in OpenMetrics with trace_id exemplars', async () => {
    const hop = await traced('/v1/orders/ord-1006');
    const response = await fetch(`${gateway.adminUrl}/metrics`);
    expect(response.headers.get('content-type')).toBe('application/openmetrics-text; version=1.0.0; charset=utf-8');
    const text = await response.text();
    expect(text.endsWith('# EOF\n')).toBe(true);
    const exemplars = text
      .split('\n')
      .filter(
        (line) => line.startsWith('http_request_duration_seconds_bucket{') && line.includes('route="/v1/orders/:id"'),
      )
      .map((line) => /# \{trace_id="([0-9a-f]{32})"\}/.exec(line)?.[1])
      .filter((traceId) => traceId !== undefined);
    // The latest request on the route is the one its bucket's exemplar names.
    expect(exemplars).toContain(hop.traceId);
    expect(text).toMatch(/^http_requests_total\{/m);
  });

  it('exports in both encodings: the gateway http/protobuf, the backend http/json', () => {
    expect(receiver.contentTypes).toContain('application/x-protobuf');
    expect(receiver.contentTypes).toContain('application/json');
  });

  describeWithTool('prometheus', "Prometheus reading a traced process's /metrics", () => {
    it('scrapes both processes in OpenMetrics and keeps the trace ids of the latency buckets', async () => {
      const hop = await traced('/v1/orders/ord-1007');
      const hostOf = (url: string) => new URL(url).host;
      const prometheus = await startPrometheus({
        targets: { gateway: hostOf(gateway.adminUrl), backend: hostOf(backend.adminUrl) },
        ruleFiles: [],
      });
      try {
        await eventually(
          'both targets scraped',
          async () => (await query(prometheus.url, 'up == 1')).length === 2 || undefined,
          { timeoutMs: 20_000, lastSeen: () => prometheus.log() },
        );
        // The counter keeps its name: OpenMetrics drops `_total` from the TYPE line only.
        expect(await query(prometheus.url, 'http_requests_total{job="gateway",route="/v1/orders/:id"}')).not.toEqual(
          [],
        );
        const now = Date.now() / 1000;
        const url =
          `${prometheus.url}/api/v1/query_exemplars?query=${encodeURIComponent('http_request_duration_seconds_bucket')}` +
          `&start=${now - 300}&end=${now + 60}`;
        const traceIds = await eventually(
          'the exemplar of the traced request',
          async () => {
            const body = (await (await fetch(url)).json()) as {
              data: { seriesLabels: Record<string, string>; exemplars: { labels: Record<string, string> }[] }[];
            };
            const ids = body.data.flatMap((series) => series.exemplars.map((exemplar) => exemplar.labels.trace_id));
            return ids.includes(hop.traceId) ? ids : undefined;
          },
          { timeoutMs: 20_000, lastSeen: () => prometheus.log() },
        );
        expect(traceIds).toContain(hop.traceId);
      } finally {
        await prometheus.stop();
      }
    }, 60_000);
  });

  it('loads the SDK in both processes (the probe the tracing-off case relies on sees it)', () => {
    for (const service of [gateway, backend]) expect(service.output()).toContain('/@opentelemetry/sdk-trace/');
  });
});

describe('tracing off (no OTEL_* variable set)', () => {
  const off = { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '', OTEL_TRACES_EXPORTER: '' };
  let relay: Relay;
  let backend: ServiceProcess;
  let gateway: ServiceProcess;

  beforeAll(async () => {
    backend = await startService('backend', {
      BACKEND_HOST: '127.0.0.1',
      BACKEND_PORT: '0',
      BACKEND_ADMIN_PORT: '0',
      ...off,
      ...probeOptions,
    });
    relay = await startRelay(backend.apiUrl);
    gateway = await startService('gateway', {
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_PORT: '0',
      GATEWAY_ADMIN_PORT: '0',
      ...sharedGatewayStore(),
      BACKEND_URL: relay.url,
      ...off,
      ...probeOptions,
    });
  }, 60_000);

  afterAll(async () => {
    await Promise.all([gateway?.stop(), backend?.stop()]);
    await relay?.close();
  });

  it('passes a traceparent and tracestate through untouched, as a proxy that does not trace must', async () => {
    const requestId = `untraced-${process.pid}`;
    const traceparent = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;
    const response = await get(`${gateway.apiUrl}/v1/orders/ord-1001`, [
      ['x-request-id', requestId],
      ['traceparent', traceparent],
      ['tracestate', 'vendor=opaque'],
    ]);
    expect(response.status).toBe(200);
    const relayed = relay.seen.get(requestId) as Relayed;
    expect(valuesOf(relayed.rawHeaders, 'traceparent')).toEqual([traceparent]);
    expect(valuesOf(relayed.rawHeaders, 'tracestate')).toEqual(['vendor=opaque']);
    const line = await eventually(
      'the request completed line',
      () => gateway.logs.find((entry) => entry.reqId === requestId && entry.msg === 'request completed'),
      { timeoutMs: 5_000 },
    );
    expect(line).not.toHaveProperty('trace_id');
  });

  it('keeps /metrics in the Prometheus text format, without exemplars', async () => {
    for (const adminUrl of [gateway.adminUrl, backend.adminUrl]) {
      const response = await fetch(`${adminUrl}/metrics`);
      expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      const text = await response.text();
      expect(text).toMatch(/^http_request_duration_seconds_bucket\{/m);
      expect(text).not.toContain('# {');
      expect(text).not.toContain('# EOF');
    }
  });

  it('never loads the OpenTelemetry SDK (only the API, which prom-client always loads)', () => {
    for (const service of [gateway, backend]) {
      const loaded = service.output().match(/\/@opentelemetry\/[^/]+\//g) ?? [];
      expect(new Set(loaded)).toEqual(new Set(['/@opentelemetry/api/']));
    }
  });
});
