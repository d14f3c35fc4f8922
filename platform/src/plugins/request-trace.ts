import type { IncomingMessage, Server } from 'node:http';
import type { FastifyHttpOptions, FastifyPluginAsync, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Logger } from 'pino';
import type { RequestTrace, Tracing } from '../tracing/types.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's server span when the process traces (docs/tracing.md), null when it does not. */
    trace: RequestTrace | null;
  }
}

/** Fastify's option (its type is not exported by name). */
type ChildLoggerFactory = NonNullable<FastifyHttpOptions<Server>['childLoggerFactory']>;

/**
 * Each request's server span, started where Fastify creates the request's logger (its childLoggerFactory, before
 * any hook runs), so the span's ids are bindings of that logger from the start: every line the request logs carries
 * `trace_id` and `span_id`, the `request completed` line included, and a request refused by a guard is traced too.
 * Fastify then builds the request and calls the log controller's incomingRequest (http-foundation.ts), one after the
 * other for the same request, where the span is given to the request; it ends in requestCompleted, after the
 * onResponse hooks, so the attributes they set are on it.
 */
export class RequestTraces {
  /** The request whose logger was built last, and its span, until incomingRequest takes them. */
  private raw: IncomingMessage | undefined;
  private started: RequestTrace | undefined;

  constructor(private readonly tracing: Tracing) {}

  readonly childLoggerFactory: ChildLoggerFactory = (logger, bindings, options, raw) => {
    const trace = this.tracing.startRequest(raw);
    this.raw = raw;
    this.started = trace;
    return logger.child({ ...bindings, trace_id: trace.traceId, span_id: trace.spanId }, options);
  };

  /** Gives the request the span its logger was built with. */
  attach(request: FastifyRequest): void {
    let trace = this.started;
    if (trace === undefined || this.raw !== request.raw) {
      // Not the request whose logger was built last, which Fastify never does: a span of its own all the same.
      trace = this.tracing.startRequest(request.raw);
      (request.log as Logger).setBindings({ trace_id: trace.traceId, span_id: trace.spanId });
    }
    this.raw = undefined;
    this.started = undefined;
    request.trace = trace;
  }
}

/** Gives every request the trace the log controller sets when the process traces. */
const requestTracePlugin: FastifyPluginAsync = async (app) => {
  app.decorateRequest('trace', null);
};

export const requestTrace = fp(requestTracePlugin, { name: 'request-trace' });
