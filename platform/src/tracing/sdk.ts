import { setTimeout as sleep } from 'node:timers/promises';
import {
  DiagLogLevel,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  defaultTextMapGetter,
  diag,
  trace,
  type Attributes,
  type Span,
} from '@opentelemetry/api';
import {
  ExportResultCode,
  W3CTraceContextPropagator,
  parseKeyPairsIntoRecord,
  setGlobalErrorHandler,
} from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVICE_NAME,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from '@opentelemetry/semantic-conventions';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { matchedRouteOf } from '../plugins/route-label.js';
import type { SamplerName, TracingConfig } from './config.js';
import type { RequestTrace, SpanAttributeValue, Tracing } from './types.js';
import { expectUpstream, forgetUpstream, observeUpstreamCalls } from './upstream.js';

/** The longest a stopping process waits for its last spans to reach the collector. */
const SHUTDOWN_FLUSH_MS = 3_000;
/** The SDK's own warnings are logged at most this often. */
const SDK_WARNING_INTERVAL_MS = 60_000;

const propagator = new W3CTraceContextPropagator();

function samplerOf(name: SamplerName, ratio: number): Sampler {
  const root = name.endsWith('always_off')
    ? new AlwaysOffSampler()
    : name.endsWith('traceidratio')
      ? new TraceIdRatioBasedSampler(ratio)
      : new AlwaysOnSampler();
  return name.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root;
}

/**
 * The exporter, telling the log when spans stop reaching the collector and when they reach it again: one line
 * each, not one per failed batch (every few seconds while a collector is down).
 */
function reportingExporter(exporter: SpanExporter, logger: Logger, endpoint: string): SpanExporter {
  let failing = false;
  return {
    export(spans, done) {
      exporter.export(spans, (result) => {
        if (result.code !== ExportResultCode.SUCCESS && !failing) {
          failing = true;
          logger.warn(
            { err: result.error, endpoint },
            'trace export failed; spans are dropped until the collector answers',
          );
        } else if (result.code === ExportResultCode.SUCCESS && failing) {
          failing = false;
          logger.info({ endpoint }, 'trace export works again');
        }
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}

/**
 * `/v1/orders/:id` → `/v1/orders/{id}`: the route template as OpenTelemetry's HTTP conventions write it. Route
 * patterns are few (the route table's and the policy's), so each is converted once.
 */
function templateCache(): (route: string) => string {
  const templates = new Map<string, string>();
  return (route) => {
    let template = templates.get(route);
    if (template === undefined) templates.set(route, (template = route.replace(/:([A-Za-z0-9_]+)/g, '{$1}')));
    return template;
  };
}

/** The tracer of a process: the OpenTelemetry SDK, W3C Trace Context, OTLP over HTTP (docs/tracing.md). */
export function createTracing(config: TracingConfig, logger: Logger): Tracing {
  // The SDK's own warnings (a full queue, an invalid exporter setting), at most one line a minute: a queue that
  // overflows under load warns each time it has room again, many times a second.
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
  // A failed export is reported by reportingExporter; the SDK's own report would repeat it every batch.
  setGlobalErrorHandler((err) => logger.debug({ err }, 'OpenTelemetry SDK error'));
  const resourceAttributes: Attributes = {
    [ATTR_SERVICE_NAME]: config.processName,
    ...parseKeyPairsIntoRecord(config.resourceAttributes),
    ...(config.serviceName === undefined ? {} : { [ATTR_SERVICE_NAME]: config.serviceName }),
  };
  const Exporter = config.protocol === 'http/json' ? JsonExporter : ProtobufExporter;
  // Headers, timeout, compression and certificates: the exporter reads OTEL_EXPORTER_OTLP_* itself.
  const exporter = reportingExporter(new Exporter({ url: config.endpoint }), logger, config.endpoint);
  const provider = new TracerProvider({
    resource: defaultResource().merge(resourceFromAttributes(resourceAttributes)),
    sampler: samplerOf(config.sampler, config.ratio),
    spanProcessors: [new BatchSpanProcessor({ exporter, ...config.batch })],
  });
  const tracer = provider.getTracer('@version-router/platform');
  const templateOf = templateCache();
  observeUpstreamCalls();
  logger.info(
    { endpoint: config.endpoint, protocol: config.protocol, sampler: config.sampler, ratio: config.ratio },
    'tracing on',
  );

  class ServerSpan implements RequestTrace {
    readonly traceId: string;
    readonly spanId: string;
    readonly sampled: boolean;
    /** The upstream call's span while its request is not yet sent, and the traceparent that names it. */
    private upstream: { span: Span; traceparent: string } | undefined;

    constructor(
      private readonly span: Span,
      /** The request's method, which the upstream call is made with too. */
      private readonly method: string,
    ) {
      const context = span.spanContext();
      this.traceId = context.traceId;
      this.spanId = context.spanId;
      this.sampled = (context.traceFlags & TraceFlags.SAMPLED) !== 0;
    }

    setAttribute(name: string, value: SpanAttributeValue): void {
      this.span.setAttribute(name, value);
    }

    forward(headers: NodeJS.Dict<string | string[]>): void {
      const client = tracer.startSpan(
        this.method,
        { kind: SpanKind.CLIENT, attributes: { [ATTR_HTTP_REQUEST_METHOD]: this.method } },
        trace.setSpan(ROOT_CONTEXT, this.span),
      );
      // The client's own headers are for this hop only: ours replace them, so the upstream gets one of each. Written
      // as W3C Trace Context (version 00) spells them, as the propagator would, without a context per request.
      const { traceId, spanId, traceFlags, traceState } = client.spanContext();
      const traceparent = `00-${traceId}-${spanId}-${(traceFlags & TraceFlags.SAMPLED) === 0 ? '00' : '01'}`;
      headers.traceparent = traceparent;
      if (traceState !== undefined) headers.tracestate = traceState.serialize();
      else if (headers.tracestate !== undefined) headers.tracestate = undefined;
      if (!client.isRecording()) return;
      this.upstream = { span: client, traceparent };
      expectUpstream(traceparent, client);
    }

    end(request: FastifyRequest, reply: FastifyReply): void {
      const { span } = this;
      // A call that never left (refused before it was sent) ends with the request.
      if (this.upstream !== undefined && forgetUpstream(this.upstream.traceparent)) this.upstream.span.end();
      if (!this.sampled) return;
      const route = matchedRouteOf(request);
      const status = reply.statusCode;
      if (route !== undefined) {
        const template = templateOf(route);
        span.updateName(`${request.method} ${template}`);
        span.setAttribute(ATTR_HTTP_ROUTE, template);
      }
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      // Server spans: a 4xx is the client's doing, only a 5xx is an error of this process (OpenTelemetry's HTTP conventions).
      if (status >= 500) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.setAttribute(ATTR_ERROR_TYPE, String(status));
      }
      span.end();
    }
  }

  return {
    startRequest(request) {
      const raw = request.raw;
      const { url, method } = request;
      const queryAt = url.indexOf('?');
      const attributes: Attributes = {
        [ATTR_HTTP_REQUEST_METHOD]: method,
        [ATTR_URL_PATH]: queryAt === -1 ? url : url.slice(0, queryAt),
        [ATTR_URL_SCHEME]: 'http',
        [ATTR_CLIENT_ADDRESS]: request.ip,
      };
      const userAgent = raw.headers['user-agent'];
      if (userAgent !== undefined) attributes[ATTR_USER_AGENT_ORIGINAL] = userAgent;
      const parent = propagator.extract(ROOT_CONTEXT, raw.headers, defaultTextMapGetter);
      return new ServerSpan(tracer.startSpan(method, { kind: SpanKind.SERVER, attributes }, parent), method);
    },
    async shutdown() {
      await Promise.race([provider.shutdown(), sleep(SHUTDOWN_FLUSH_MS, undefined, { ref: false })]);
    },
  };
}
