import { STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyError, FastifyHttpOptions, FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { HttpError, errorJson, sendError } from '../errors.js';

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
      `HTTP/1.1 ${code} ${error}\r\nContent-Type: application/json\r\nContent-Length: ` +
        `${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/**
 * The errors raised before Fastify routes a request: Node's parser and timeouts, and the router's own (a malformed
 * URL).
 */
export const errorServerOptions: Pick<
  FastifyHttpOptions<Server, FastifyBaseLogger>,
  'clientErrorHandler' | 'frameworkErrors'
> = {
  clientErrorHandler: answerClientError,
  frameworkErrors: (err, _request, reply) => {
    void sendError(reply, 400, 'bad request', err.code === 'FST_ERR_BAD_URL' ? 'malformed URL' : '');
  },
};

/**
 * Every error a route or hook raises, answered as an ErrorResponse: an HttpError as it says, a framework
 * client error with its status, anything else 500 `internal error` with its text in the log only.
 */
async function errorHandlerPlugin(app: FastifyInstance): Promise<void> {
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
}

export const errorHandler = fp(errorHandlerPlugin, { name: 'error-handler' });
