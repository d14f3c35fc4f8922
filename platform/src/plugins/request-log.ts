import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { redactQueryKeys, type QueryKeyNames } from '../query-keys.js';
import { routeLabelOf } from './route-label.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * What a process adds to this request's `request completed` line (the gateway: the deprecated version
     * used and who used it); set by an onResponse hook, null for a plain line.
     */
    completionLogFields: Record<string, unknown> | null;
  }
}

/**
 * The one log line per request, written when its response has finished. Called from the log controller's
 * requestCompleted (see http-foundation.ts), which Fastify calls after the onResponse hooks, so the fields
 * those hooks set are on the line; the URL without the values of the query parameters that may hold a key
 * (`queryKeys`). One line, not one more per fact: a second line per request on a deprecated
 * version cost the gateway measurably more CPU per request (bench/README.md#tuning-history-before--after).
 */
export function logRequestCompleted(request: FastifyRequest, reply: FastifyReply, queryKeys: QueryKeyNames): void {
  const line: Record<string, unknown> = {
    method: request.method,
    // Credentials never reach the log: a key a client put in the query string is shown as [redacted].
    url: redactQueryKeys(request.url, queryKeys),
    route: routeLabelOf(request),
    statusCode: reply.statusCode,
    responseTimeMs: Math.round(reply.elapsedTime * 100) / 100,
  };
  if (request.completionLogFields !== null) Object.assign(line, request.completionLogFields);
  request.log.info(line, 'request completed');
}

/** Gives every request the completionLogFields an onResponse hook may set. */
async function requestLogPlugin(app: FastifyInstance): Promise<void> {
  app.decorateRequest('completionLogFields', null);
}

export const requestLog = fp(requestLogPlugin, { name: 'request-log' });
