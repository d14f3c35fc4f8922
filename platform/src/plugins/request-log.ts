import type { FastifyReply, FastifyRequest } from 'fastify';
import { routeLabelOf } from './route-label.js';

/**
 * The one log line per request, written when its response has finished. Called from the log controller's
 * requestCompleted (see http-foundation.ts), which Fastify calls after the onResponse hooks.
 */
export function logRequestCompleted(request: FastifyRequest, reply: FastifyReply): void {
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
}
