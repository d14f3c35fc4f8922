import type { FastifyInstance } from 'fastify';
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

/** A registry per app instance, so tests can build many apps in one process. */
export function createRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

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
  const duration = new Histogram({
    name: httpMetricNames.duration,
    help: 'Time from request arrival to response end, by method, route pattern and status code.',
    labelNames: LABELS,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  app.addHook('onResponse', (request, reply, done) => {
    const labels = {
      method: request.method,
      route: routeLabelOf(request),
      status_code: String(reply.statusCode),
    };
    duration.observe(labels, reply.elapsedTime / 1000);
    done();
  });
}

export const httpMetrics = fp(httpMetricsPlugin, { name: 'http-metrics' });
