import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Logger } from 'pino';
import type { RequestTrace, Tracing } from '../tracing/types.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's server span when the process traces (docs/tracing.md), null when it does not. */
    trace: RequestTrace | null;
  }
}

/**
 * Starts the request's server span and puts its ids on every line the request logs (`trace_id`, `span_id`), the
 * `request completed` line included. Called from the log controller's incomingRequest (see http-foundation.ts),
 * ahead of every hook, so a request refused by a guard is traced too; the span ends in requestCompleted, after the
 * onResponse hooks, so the attributes they set are on it.
 */
export function startRequestTrace(tracing: Tracing, request: FastifyRequest): void {
  const trace = tracing.startRequest(request);
  request.trace = trace;
  // The request's own child logger (pino's, as every logger here): the ids go into its bindings once, not into each line.
  (request.log as Logger).setBindings({ trace_id: trace.traceId, span_id: trace.spanId });
}

/** Gives every request the trace the log controller sets when the process traces. */
const requestTracePlugin: FastifyPluginAsync = async (app) => {
  app.decorateRequest('trace', null);
};

export const requestTrace = fp(requestTracePlugin, { name: 'request-trace' });
