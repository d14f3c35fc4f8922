import type { Server } from 'node:http';
import {
  type FastifyBaseLogger,
  type FastifyHttpOptions,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import fp from 'fastify-plugin';
import type { Logger } from 'pino';
import { DEFAULT_QUERY_KEY_PARAMETERS, queryKeyNames, type QueryKeyNames } from './query-keys.js';
import { serverLimits } from './server-limits.js';
import { reportClientAbort } from './plugins/client-abort.js';
import { draining, drainingOptions } from './plugins/draining.js';
import { errorHandler, errorServerOptions } from './plugins/error-handler.js';
import { methodNotAllowed } from './plugins/method-not-allowed.js';
import { echoRequestId, requestIdOptions } from './plugins/request-id.js';
import { requestGuards, requestGuardsHttpOptions } from './plugins/request-guards.js';
import { logRequestCompleted, requestLog } from './plugins/request-log.js';
import { routeLabel } from './plugins/route-label.js';
import { RequestTraces, requestTrace } from './plugins/request-trace.js';
import { writeDeadline } from './plugins/write-deadline.js';
import type { Tracing } from './tracing/types.js';

// Kept in the compiled types of this entry, so its importers see the decorations they declare (app.lifecycle,
// request.completionLogFields, request.trace).
import './plugins/draining.js';
import './plugins/request-log.js';
import './plugins/request-trace.js';

export { cutResponse } from './plugins/client-abort.js';
export { DEFAULT_QUERY_KEY_PARAMETERS, queryKeyNames, queryKeyParameter, type QueryKeyNames } from './query-keys.js';
export { routeLabelOf } from './plugins/route-label.js';

/**
 * Fastify calls its log controller once per request where it creates the reply (before any hook) and once
 * when the response has finished (after the onResponse hooks). The X-Request-Id echo, the watch for a client
 * that leaves early (499), the server span of a process that traces and the log line go there, so they cost no
 * hook of their own. Fastify's own request log lines stay off.
 */
class FoundationLogController extends LogController {
  constructor(
    private readonly queryKeys: QueryKeyNames,
    private readonly traces: RequestTraces | undefined,
  ) {
    super({ disableRequestLogging: true });
  }

  override incomingRequest(request: FastifyRequest, reply: FastifyReply): void {
    echoRequestId(request, reply);
    reportClientAbort(reply);
    if (this.traces !== undefined) this.traces.attach(request);
  }

  override requestCompleted(_error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    logRequestCompleted(request, reply, this.queryKeys);
    const trace = request.trace;
    if (trace !== null) trace.end(request, reply);
  }
}

export interface BaseServerOptions {
  /** QUERY_KEY_PARAMETERS: query parameters whose values the log line never shows (default: query-keys.ts). */
  queryKeyParameters?: readonly string[];
  /**
   * A server span per request when given (the admin listeners are built without: probes and scrapes are no part of
   * a caller's trace).
   */
  tracing?: Tracing | undefined;
}

/** Fastify options both processes share: server limits, request ids, error shapes of the framework's own answers. */
export function baseServerOptions(
  logger: Logger,
  { queryKeyParameters = DEFAULT_QUERY_KEY_PARAMETERS, tracing }: BaseServerOptions = {},
): FastifyHttpOptions<Server, FastifyBaseLogger> {
  const traces = tracing === undefined ? undefined : new RequestTraces(tracing);
  return {
    loggerInstance: logger,
    logController: new FoundationLogController(queryKeyNames(queryKeyParameters), traces),
    ...(traces === undefined ? {} : { childLoggerFactory: traces.childLoggerFactory }),
    ...requestIdOptions,
    ...drainingOptions,
    ...errorServerOptions,
    bodyLimit: serverLimits.bodyLimitBytes,
    keepAliveTimeout: serverLimits.idleTimeoutMs,
    // The read timeout for the whole request, body included. Fastify assigns this to the Node server after
    // creating it, overwriting any `http.requestTimeout` (its default, 0, leaves bodies unbounded).
    requestTimeout: serverLimits.readTimeoutMs,
    // Passed to http.createServer: Fastify has no headersTimeout option, and the checking interval is fixed
    // when the server is created. Node 20 cuts a stalled body only once headersTimeout has passed as well
    // (seen in test/hostile), so both timeouts are the read timeout.
    http: {
      headersTimeout: serverLimits.readTimeoutMs,
      connectionsCheckingInterval: serverLimits.timeoutCheckIntervalMs,
      keepAliveTimeout: serverLimits.idleTimeoutMs,
      ...requestGuardsHttpOptions,
    },
  };
}

/**
 * What both processes (and their admin listeners) run on every request, one plugin per rule; see
 * src/plugins/README.md. Register it first, before any route, on a server built from baseServerOptions.
 */
async function httpFoundationPlugin(app: FastifyInstance): Promise<void> {
  await app.register(draining);
  await app.register(routeLabel);
  await app.register(requestLog);
  await app.register(requestTrace);
  // The guards' onRequest hook runs first, so a refused request never arms a write deadline.
  await app.register(requestGuards);
  await app.register(writeDeadline);
  await app.register(methodNotAllowed);
  await app.register(errorHandler);
}

export const httpFoundation = fp(httpFoundationPlugin, { name: 'http-foundation' });
