import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyInstance, FastifyHttpOptions, FastifyError, FastifyRequest } from 'fastify';
import type { Server } from 'node:http';
import { LogController } from 'fastify';
import fp from 'fastify-plugin';
import FindMyWay from 'find-my-way';
import type { Logger } from 'pino';
import { HttpError, errorJson, sendError } from './errors.js';
import { serverLimits } from './server-limits.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Set once shutdown begins; readiness and new requests consult it. */
    lifecycle: { draining: boolean };
  }
  interface FastifyRequest {
    /**
     * The pattern a catch-all route matched on its own (the gateway's versioned resources), for
     * metrics and the log line; null where Fastify's router chose the route.
     */
    routeLabel: string | null;
  }
}

const SANE_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** Keeps a client's X-Request-Id when it is short visible ASCII, so it can be logged and forwarded safely. */
export function requestIdFor(req: IncomingMessage): string {
  const sent = req.headers['x-request-id'];
  return typeof sent === 'string' && SANE_REQUEST_ID.test(sent) ? sent : randomUUID();
}

/** The response Node is writing on a connection; undocumented but what Node's own clientError default checks. */
type HttpSocket = Socket & { _httpMessage?: { headersSent: boolean } | null };

/**
 * Node writes its own bodies for errors outside a handler (read timeout, bad header syntax); give them our
 * shape. Once a response has started on the connection, bytes written now would corrupt it: only close.
 */
function answerClientError(this: FastifyInstance, err: NodeJS.ErrnoException, socket: HttpSocket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [code, error] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'request timeout']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'request header fields too large']
        : [400, 'bad request'];
  this.log.debug({ err }, 'client error');
  if (socket.writable && socket._httpMessage?.headersSent !== true) {
    const body = errorJson(code, error);
    socket.write(
      `HTTP/1.1 ${code} ${error}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/**
 * Fields a proxy in front sets or replaces (the gateway does, on the way to the backend). They are not
 * counted, so a request within the gateway's field limit is also within the backend's.
 */
const PROXY_SET_FIELDS = new Set(['host', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'x-request-id']);

function tooManyHeaderFields(rawHeaders: readonly string[]): boolean {
  // Names and values alternate; most requests are far below the limit and need no counting.
  if (rawHeaders.length <= 2 * serverLimits.maxHeaderFields) return false;
  let counted = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (!PROXY_SET_FIELDS.has((rawHeaders[i] ?? '').toLowerCase())) counted++;
  }
  return counted > serverLimits.maxHeaderFields;
}

/** Fastify options both processes share: server limits, request ids, error shapes of the framework's own answers. */
export function baseServerOptions(logger: Logger): FastifyHttpOptions<Server, FastifyBaseLogger> {
  return {
    loggerInstance: logger,
    // One line per request is written at completion (see httpFoundation); Fastify's two lines cost throughput.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: requestIdFor,
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
      // Node's own 400 for a missing Host has an empty body; httpFoundation answers it in our shape.
      requireHostHeader: false,
    },
    // Fastify's 503 body is not an ErrorResponse; httpFoundation answers it instead.
    return503OnClosing: false,
    clientErrorHandler: answerClientError,
    frameworkErrors: (err, _request, reply) => {
      void sendError(reply, 400, 'bad request', err.code === 'FST_ERR_BAD_URL' ? 'malformed URL' : '');
    },
  };
}

export const UNMATCHED_ROUTE = 'unmatched';

/** The route pattern a request is counted and logged under: never the raw URL, which would explode cardinality. */
export function routeLabelOf(request: FastifyRequest): string {
  return request.routeLabel ?? request.routeOptions.url ?? UNMATCHED_ROUTE;
}

/**
 * Root hooks and handlers both processes need: 503 while draining, request-id echo, the write timeout,
 * one log line per request, ErrorResponse bodies for 404/405/500, and 405 + Allow from the route table.
 * Register before any route so the route table is complete.
 */
export const httpFoundation = fp(
  async (app: FastifyInstance) => {
    app.decorate('lifecycle', { draining: false });
    app.decorateRequest('routeLabel', null);
    app.addHook('preClose', async () => {
      app.lifecycle.draining = true;
    });

    // A mirror of the route table answers "which methods does this path allow?" for 405 responses.
    const routePaths = FindMyWay<FindMyWay.HTTPVersion.V1>();
    const methodsByUrl = new Map<string, string[]>();
    app.addHook('onRoute', (route) => {
      // A catch-all answers every path, so it says nothing about which methods a path allows.
      if (route.url === '/*') return;
      const methods = methodsByUrl.get(route.url);
      const added = ([] as string[]).concat(route.method);
      if (methods === undefined) {
        methodsByUrl.set(route.url, added);
        routePaths.on('GET', route.url, () => undefined, { url: route.url });
      } else {
        for (const method of added) if (!methods.includes(method)) methods.push(method);
      }
    });

    app.addHook('onRequest', (request, reply, done) => {
      void reply.header('x-request-id', request.id);
      if (app.lifecycle.draining) {
        void sendError(reply, 503, 'service unavailable', 'shutting down');
        return;
      }
      // HTTP/1.1 requires Host (RFC 9112 §3.2); HTTP/1.0 clients may omit it.
      if (request.raw.headers.host === undefined && request.raw.httpVersion === '1.1') {
        void reply.header('connection', 'close');
        void sendError(reply, 400, 'bad request', 'missing Host header');
        return;
      }
      if (tooManyHeaderFields(request.raw.rawHeaders)) {
        void reply.header('connection', 'close');
        void sendError(reply, 431, 'request header fields too large', `more than ${serverLimits.maxHeaderFields} header fields`);
        return;
      }
      // Go-style write deadline: a response not finished 10 s after the headers arrived loses its connection.
      const deadline = setTimeout(() => {
        request.log.warn('write timeout exceeded, closing connection');
        request.raw.socket.destroy();
      }, serverLimits.writeTimeoutMs);
      reply.raw.once('close', () => clearTimeout(deadline));
      done();
    });

    // A request that was in flight when shutdown began must not leave its keep-alive connection open:
    // close() would then wait for the client (up to the grace period) although nothing is in flight.
    app.addHook('onSend', (_request, reply, payload, done) => {
      if (app.lifecycle.draining) void reply.header('connection', 'close');
      done(null, payload);
    });

    app.addHook('onResponse', (request, reply, done) => {
      request.log.info(
        {
          method: request.method,
          url: request.url,
          route: routeLabelOf(request),
          statusCode: reply.statusCode,
          responseTimeMs: Math.round(reply.elapsedTime * 100) / 100,
        },
        'request completed',
      );
      done();
    });

    app.setNotFoundHandler((request, reply) => {
      const path = request.url.split('?', 1)[0] ?? '/';
      const match = routePaths.find('GET', path) as { store: { url: string } } | null;
      const allowed = match === null ? undefined : methodsByUrl.get(match.store.url);
      if (allowed !== undefined) {
        void reply.header('allow', allowed.join(', '));
        return sendError(reply, 405, 'method not allowed');
      }
      return sendError(reply, 404, 'not found');
    });

    app.setErrorHandler((err: FastifyError | HttpError, request, reply) => {
      if (err instanceof HttpError) return sendError(reply, err.statusCode, err.error, err.details);
      if (!request.raw.complete && request.raw.socket.destroyed) {
        // The client closed the connection before its request was complete (it gave up or was timed out):
        // nothing failed on this side. The reply is still completed, though nobody is left to read it.
        request.log.info({ reason: err.message }, 'client closed the connection before the request was complete');
        return sendError(reply, 400, 'bad request', 'request aborted');
      }
      const status = err.statusCode ?? 500;
      if (status >= 400 && status < 500) {
        // Framework-detected client errors (e.g. a malformed header) keep their status, in our shape.
        return sendError(reply, status, (STATUS_CODES[status] ?? 'bad request').toLowerCase(), err.message);
      }
      request.log.error({ err }, 'unhandled error');
      return sendError(reply, 500, 'internal error');
    });
  },
  { name: 'http-foundation' },
);
