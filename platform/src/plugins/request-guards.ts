import type { ServerOptions } from 'node:http';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { sendError } from '../errors.js';
import { serverLimits } from '../server-limits.js';

/** Node's own 400 for a missing Host has an empty body; the guards answer it in our shape. */
export const requestGuardsHttpOptions: Pick<ServerOptions, 'requireHostHeader'> = {
  requireHostHeader: false,
};

/**
 * Fields a proxy in front sets or replaces (the gateway does, on the way to the backend: the hop it saw, the request
 * id, and the headers it owns). They are not counted, so a request within the gateway's field limit is also within
 * the backend's.
 */
const PROXY_SET_FIELDS = new Set([
  'host',
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
  'forwarded',
  'x-real-ip',
  'x-request-id',
  'api-consumer',
  'api-version-requested',
]);

function tooManyHeaderFields(rawHeaders: readonly string[]): boolean {
  // Names and values alternate; most requests are far below the limit and need no counting.
  if (rawHeaders.length <= 2 * serverLimits.maxHeaderFields) return false;
  let counted = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (!PROXY_SET_FIELDS.has((rawHeaders[i] ?? '').toLowerCase())) counted++;
  }
  return counted > serverLimits.maxHeaderFields;
}

/**
 * Refuses a request on arrival, before routing and before its body is read: 503 while the process drains,
 * 400 without Host, 431 with too many header fields. The checks are cheap and share one onRequest hook.
 */
async function requestGuardsPlugin(app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', (request, reply, done) => {
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
      void sendError(
        reply,
        431,
        'request header fields too large',
        `more than ${serverLimits.maxHeaderFields} header fields`,
      );
      return;
    }
    done();
  });
}

export const requestGuards = fp(requestGuardsPlugin, { name: 'request-guards', dependencies: ['draining'] });
