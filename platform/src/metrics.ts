import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { routeLabelOf } from './plugins/route-label.js';

/** Metric names are an interface: ops/ rules and dashboards query them. */
const httpMetricNames = {
  requests: 'http_requests_total',
  duration: 'http_request_duration_seconds',
} as const;

const LABELS = ['method', 'route', 'status_code'] as const;

/** The histogram's series that counts its observations. */
const DURATION_COUNT = `${httpMetricNames.duration}_count`;

/**
 * A registry per app instance, so tests can build many apps in one process. With `exemplars` (a process that traces)
 * it speaks OpenMetrics, the only format prom-client writes exemplars in: `/metrics` then links latency buckets to
 * traces (docs/tracing.md#exemplars); without, it keeps Prometheus's text format.
 */
export function createRegistry({ exemplars = false }: { exemplars?: boolean } = {}): Registry {
  const registry = new Registry();
  // prom-client's typings name the format in a type parameter; both formats have the same methods, so the one
  // Registry type every module takes serves both.
  if (exemplars) registry.setContentType(OPENMETRICS as typeof Registry.PROMETHEUS_CONTENT_TYPE);
  collectDefaultMetrics({ register: registry });
  return registry;
}

const OPENMETRICS: string = Registry.OPENMETRICS_CONTENT_TYPE;

export interface HttpMetricsOptions {
  registry: Registry;
}

/** Counts and times every response by route pattern (never the raw URL, which would explode cardinality). */
async function httpMetricsPlugin(app: FastifyInstance, { registry }: HttpMetricsOptions): Promise<void> {
  // Every response is observed by the histogram, whose count per series is this counter's value: read from it
  // at scrape time rather than counted a second time per request. prom-client checks and hashes the labels on
  // every inc, a measurable share of a proxied request's CPU (bench/README.md#tuning-history-before--after).
  new Counter({
    name: httpMetricNames.requests,
    help: 'HTTP responses sent, by method, route pattern and status code.',
    labelNames: LABELS,
    registers: [registry],
    async collect() {
      const { values } = await duration.get();
      this.reset();
      for (const { metricName, labels, value } of values) if (metricName === DURATION_COUNT) this.inc(labels, value);
    },
  });
  const exemplars = registry.contentType === OPENMETRICS;
  const duration = new Histogram({
    name: httpMetricNames.duration,
    help: 'Time from request arrival to response end, by method, route pattern and status code.',
    labelNames: LABELS,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
    enableExemplars: exemplars,
  });
  const labelsOf = (request: FastifyRequest, reply: FastifyReply) => ({
    method: request.method,
    route: routeLabelOf(request),
    status_code: String(reply.statusCode),
  });
  // One hook or the other, chosen once: a process that does not trace observes as it always did.
  if (!exemplars) {
    app.addHook('onResponse', (request, reply, done) => {
      duration.observe(labelsOf(request, reply), reply.elapsedTime / 1000);
      done();
    });
    return;
  }
  // Each bucket keeps the latest sampled request's trace id: the trace of a slow request is one click from its bucket.
  app.addHook('onResponse', (request, reply, done) => {
    const trace = request.trace;
    duration.observe({
      labels: labelsOf(request, reply),
      value: reply.elapsedTime / 1000,
      exemplarLabels: trace !== null && trace.sampled ? { trace_id: trace.traceId } : NO_EXEMPLAR,
    });
    done();
  });
}

/** prom-client skips the exemplar of an observation whose exemplar labels are empty. */
const NO_EXEMPLAR: Record<string, string> = {};

export const httpMetrics = fp(httpMetricsPlugin, { name: 'http-metrics' });
