import { setTimeout as sleep } from 'node:timers/promises';
import {
  DiagLogLevel,
  ROOT_CONTEXT,
  SamplingDecision,
  SpanKind as ApiSpanKind,
  defaultTextMapGetter,
  diag,
  isSpanContextValid,
  trace,
  type Attributes,
  type Sampler,
  type SpanContext,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator, parseKeyPairsIntoRecord, setGlobalErrorHandler } from '@opentelemetry/core';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace';
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_ROUTE,
  ATTR_SERVICE_NAME,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from '@opentelemetry/semantic-conventions';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { matchedRouteOf } from '../plugins/route-label.js';
import { AttributeSet, setFor } from './attribute-set.js';
import { SpanBatcher, type TraceOrigin } from './batch.js';
import type { SamplerName, TracingConfig } from './config.js';
import { otlpHttpExporter } from './exporter.js';
import { newSpanId, newTraceId } from './ids.js';
import { jsonBatches } from './otlp-json.js';
import { protobufBatches } from './otlp-protobuf.js';
import { Span, SpanKind, spanFlags, type AttributeList, type SpanSink } from './span.js';
import type { RequestTrace, SpanAttributeValue, Tracing } from './types.js';
import { expectUpstream, forgetUpstream, observeUpstreamCalls, statusSet } from './upstream.js';

/** The longest a stopping process waits for its last spans to reach the collector. */
const SHUTDOWN_FLUSH_MS = 3_000;
/** The SDK's own warnings are logged at most this often. */
const SDK_WARNING_INTERVAL_MS = 60_000;
/** The instrumentation scope the spans are exported under. */
const SCOPE_NAME = '@version-router/platform';

const propagator = new W3CTraceContextPropagator();
const NO_ATTRIBUTES: Attributes = Object.freeze({});

/** OTEL_TRACES_SAMPLER's samplers, the SDK's own. */
function samplerOf(name: SamplerName, ratio: number): Sampler {
  const root = name.endsWith('always_off')
    ? new AlwaysOffSampler()
    : name.endsWith('traceidratio')
      ? new TraceIdRatioBasedSampler(ratio)
      : new AlwaysOnSampler();
  return name.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root;
}

/** A route pattern as a span names it: `/v1/orders/:id` → `/v1/orders/{id}`, OpenTelemetry's HTTP conventions. */
interface RouteTemplate {
  template: string;
  /** http.route. */
  set: AttributeSet;
}

/** Route patterns are few (the route table's and the policy's): each is converted once. */
const routes = new Map<string, RouteTemplate>();

function routeTemplateOf(route: string): RouteTemplate {
  let known = routes.get(route);
  if (known === undefined) {
    const template = route.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    routes.set(route, (known = { template, set: new AttributeSet({ [ATTR_HTTP_ROUTE]: template }) }));
  }
  return known;
}

/** A server span's http.request.method and url.scheme, and a client span's http.request.method, per method. */
const serverMethods = new Map<string, AttributeSet>();
const clientMethods = new Map<string, AttributeSet>();
const serverMethodOf = (method: string): AttributeSet =>
  new AttributeSet({ [ATTR_HTTP_REQUEST_METHOD]: method, [ATTR_URL_SCHEME]: 'http' });
const clientMethodOf = (method: string): AttributeSet => new AttributeSet({ [ATTR_HTTP_REQUEST_METHOD]: method });

/** The process's resource (service.name, the SDK's telemetry.sdk.*, OTEL_RESOURCE_ATTRIBUTES) as one list. */
function resourceOf(config: TracingConfig): AttributeList {
  const attributes: Attributes = {
    [ATTR_SERVICE_NAME]: config.processName,
    ...parseKeyPairsIntoRecord(config.resourceAttributes),
    ...(config.serviceName === undefined ? {} : { [ATTR_SERVICE_NAME]: config.serviceName }),
  };
  const resource = defaultResource().merge(resourceFromAttributes(attributes));
  const list: AttributeList = [];
  for (const [key, value] of Object.entries(resource.attributes)) {
    if (value !== undefined && value !== null) list.push(key, value as SpanAttributeValue);
  }
  return list;
}

/**
 * The tracer of a process (docs/tracing.md): W3C Trace Context, the SDK's samplers, spans of our own (span.ts)
 * encoded into OTLP batches as they end (batch.ts), sent over HTTP by the SDK's OTLP transport (exporter.ts). Why
 * not the SDK's span objects and serialisers: docs/decisions.md#traces-spans-of-our-own-the-sdks-transport.
 */
export function createTracing(config: TracingConfig, logger: Logger): Tracing {
  // The SDK's own warnings (an invalid exporter setting, a failed export's details) and the queue's, at most one line
  // a minute: a queue that overflows under load warns each time it has room again, many times a second.
  let quietUntil = 0;
  const warn = (message: string): void => {
    const now = Date.now();
    if (now < quietUntil) return;
    quietUntil = now + SDK_WARNING_INTERVAL_MS;
    logger.warn(`OpenTelemetry: ${message}`);
  };
  diag.setLogger(
    { error: warn, warn, info: () => undefined, debug: () => undefined, verbose: () => undefined },
    // One tracer per process, but tests and benchmarks build several in one.
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
  // A failed export is reported by the exporter; the SDK's own report would repeat it every batch.
  setGlobalErrorHandler((err) => logger.debug({ err }, 'OpenTelemetry SDK error'));
  const origin: TraceOrigin = { resource: resourceOf(config), scopeName: SCOPE_NAME };
  const batcher = new SpanBatcher(
    config.protocol === 'http/json' ? jsonBatches(origin) : protobufBatches(origin),
    otlpHttpExporter(config.endpoint, config.protocol, logger),
    config.batch,
    warn,
  );
  const sink: SpanSink = batcher;
  const sampler = samplerOf(config.sampler, config.ratio);
  observeUpstreamCalls();
  logger.info(
    { endpoint: config.endpoint, protocol: config.protocol, sampler: config.sampler, ratio: config.ratio },
    'tracing on',
  );

  /**
   * A request the sampler recorded. Its client span's sampling decision is its own: every sampler shipped decides a
   * span in a trace alike (by the trace id, or by a parent it records).
   */
  class RecordingTrace implements RequestTrace {
    readonly sampled = true;
    readonly traceId: string;
    readonly spanId: string;
    /** The upstream call's span while its request is not yet sent, and the traceparent that names it. */
    private upstream: Span | undefined;
    private upstreamTraceparent = '';

    constructor(
      private readonly span: Span,
      /** The request's method, which the upstream call is made with too. */
      private readonly method: string,
      /** performance.now() when the request's span started. */
      private readonly origin: number,
    ) {
      this.traceId = span.traceId;
      this.spanId = span.spanId;
    }

    setAttribute(name: string, value: SpanAttributeValue): void {
      this.span.set(name, value);
    }

    setAttributes(set: AttributeSet): void {
      this.span.add(set);
    }

    forward(headers: NodeJS.Dict<string | string[]>): void {
      const { span, method } = this;
      const spanId = newSpanId();
      // The client's own headers are for this hop only: ours replace them, so the upstream gets one of each. Written
      // as W3C Trace Context (version 00) spells them.
      const traceparent = `00-${span.traceId}-${spanId}-01`;
      headers.traceparent = traceparent;
      if (span.traceState !== undefined) headers.tracestate = span.traceState;
      else if (headers.tracestate !== undefined) headers.tracestate = undefined;
      const client = new Span(
        sink,
        span.traceId,
        spanId,
        span.spanId,
        span.traceState,
        method,
        SpanKind.client,
        CLIENT_FLAGS,
        span.epochMs,
        this.origin,
        performance.now() - this.origin,
        [setFor(clientMethods, method, clientMethodOf), 0],
      );
      this.upstream = client;
      this.upstreamTraceparent = traceparent;
      expectUpstream(traceparent, client);
    }

    end(request: FastifyRequest, reply: FastifyReply): void {
      const { span } = this;
      // A call that never left (refused before it was sent) ends with the request.
      if (this.upstream !== undefined && forgetUpstream(this.upstreamTraceparent)) this.upstream.finish();
      const route = matchedRouteOf(request);
      const status = reply.statusCode;
      if (route !== undefined) {
        const { template, set } = routeTemplateOf(route);
        span.name = `${request.method} ${template}`;
        span.add(set);
      }
      span.add(statusSet(status));
      // Server spans: a 4xx is the client's doing, only a 5xx is an error of this process (OpenTelemetry's HTTP conventions).
      if (status >= 500) {
        span.fail();
        span.set(ATTR_ERROR_TYPE, String(status));
      }
      span.finish();
    }
  }

  return {
    startRequest(request) {
      const headers = request.headers;
      const method = request.method as string;
      // Only a request that names a parent pays for reading it (and for a context, which a parent-based sampler reads).
      let context = ROOT_CONTEXT;
      let parent: SpanContext | undefined;
      if (headers.traceparent !== undefined) {
        context = propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
        const candidate = trace.getSpanContext(context);
        if (candidate !== undefined && isSpanContextValid(candidate)) parent = candidate;
        else context = ROOT_CONTEXT;
      }
      const traceId = parent === undefined ? newTraceId() : parent.traceId;
      const spanId = newSpanId();
      const traceState = parent?.traceState?.serialize();
      const decision = sampler.shouldSample(context, traceId, method, ApiSpanKind.SERVER, NO_ATTRIBUTES, []).decision;
      if (decision !== SamplingDecision.RECORD_AND_SAMPLED) return new UnsampledTrace(traceId, spanId, traceState);
      const url = request.url as string;
      const queryAt = url.indexOf('?');
      const attributes: AttributeList = [
        setFor(serverMethods, method, serverMethodOf),
        0,
        ATTR_URL_PATH,
        queryAt === -1 ? url : url.slice(0, queryAt),
      ];
      // The peer, as Fastify's request.ip gives it without trustProxy (neither process sets it); none once it has left.
      const peer = request.socket.remoteAddress;
      if (peer !== undefined) attributes.push(ATTR_CLIENT_ADDRESS, peer);
      const userAgent = headers['user-agent'];
      if (userAgent !== undefined) attributes.push(ATTR_USER_AGENT_ORIGINAL, userAgent);
      const epochMs = Date.now();
      const origin = performance.now();
      const flags = spanFlags(true, parent !== undefined);
      const span = new Span(
        sink,
        traceId,
        spanId,
        parent?.spanId,
        traceState,
        method,
        SpanKind.server,
        flags,
        epochMs,
        origin,
        0,
        attributes,
      );
      return new RecordingTrace(span, method, origin);
    },
    async shutdown() {
      await Promise.race([batcher.shutdown(), sleep(SHUTDOWN_FLUSH_MS, undefined, { ref: false })]);
    },
  };
}

/** A client span's flags: sampled, its parent (the gateway's server span) local. */
const CLIENT_FLAGS = spanFlags(true, false);

/**
 * A request the sampler did not record: its ids go on its log lines, and its trace is still propagated, with the
 * sampled flag off, so the services behind decide alike.
 */
class UnsampledTrace implements RequestTrace {
  readonly sampled = false;

  constructor(
    readonly traceId: string,
    readonly spanId: string,
    private readonly traceState: string | undefined,
  ) {}

  setAttribute(): void {}

  setAttributes(): void {}

  forward(headers: NodeJS.Dict<string | string[]>): void {
    headers.traceparent = `00-${this.traceId}-${newSpanId()}-00`;
    if (this.traceState !== undefined) headers.tracestate = this.traceState;
    else if (headers.tracestate !== undefined) headers.tracestate = undefined;
  }

  end(): void {}
}
