import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AttributeSet } from './attribute-set.js';

/** A span attribute's value, as OpenTelemetry takes it. */
export type SpanAttributeValue = string | number | boolean | readonly string[];

/**
 * One request's place in its trace: this process's server span, continuing the caller's trace when the request
 * carries a valid `traceparent` (docs/tracing.md).
 */
export interface RequestTrace {
  /** The W3C trace id (32 hex digits), the caller's when it sent one. */
  readonly traceId: string;
  /** This process's server span (16 hex digits). */
  readonly spanId: string;
  /** The sampler records the span and it is exported; an unsampled request is still given ids and propagated. */
  readonly sampled: boolean;
  /** Sets an attribute of the server span (the span is only named when the response is complete). */
  setAttribute(name: string, value: SpanAttributeValue): void;
  /** Adds a set of attributes built once for many requests (a version answer's) to the server span. */
  setAttributes(set: AttributeSet): void;
  /**
   * Starts the client span of the request's one upstream call and puts its `traceparent` (and the caller's
   * `tracestate`) into the upstream request's headers, replacing whatever the client sent: exactly one of each.
   */
  forward(headers: NodeJS.Dict<string | string[]>): void;
  /** Ends the server span with the response's route and status; the foundation calls it once the response is complete. */
  end(request: FastifyRequest, reply: FastifyReply): void;
}

/** A process's tracer, built by startTracing when tracing is on. */
export interface Tracing {
  /** The server span of a request that has just arrived (called before any hook runs, before its logger exists). */
  startRequest(request: IncomingMessage): RequestTrace;
  /** Sends the spans still held and stops, waiting at most a few seconds for the collector. */
  shutdown(): Promise<void>;
}
