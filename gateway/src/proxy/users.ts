import type { FastifyPluginAsync, onRequestHookHandler } from 'fastify';
import httpProxy from '@fastify/http-proxy';
import type { Pool } from 'undici';
import { backendReplyOptions, replyFromOptions } from './backend.js';

export interface UsersProxyOptions {
  backendUrl: string;
  pool: Pool;
}

/** What Fastify's content-type check sees; the backend still gets the client's own header from request.raw. */
const OPAQUE_BODY: Readonly<Record<string, string>> = Object.freeze({ 'content-type': 'application/octet-stream' });

/**
 * Fastify answers 415 to a malformed Content-Type (e.g. `foo`) before any parser runs, but DESIGN has the
 * backend decode every body as JSON whatever its Content-Type. Showing Fastify a neutral type makes the
 * body reach http-proxy's pass-through parser as a stream; the header sent on is the client's, untouched.
 */
const streamBodyWhateverItsType: onRequestHookHandler = (request, _reply, done) => {
  if (request.raw.headers['content-type'] !== undefined) request.headers = OPAQUE_BODY;
  done();
};

/** `/api/users` and `/api/users/*`: no version logic, method, path, query, body, status and headers pass through. */
export const usersProxy: FastifyPluginAsync<UsersProxyOptions> = async (app, { backendUrl, pool }) => {
  app.addHook('onRequest', streamBodyWhateverItsType);
  await app.register(httpProxy, {
    ...replyFromOptions(backendUrl, pool),
    upstream: backendUrl,
    prefix: '/api/users',
    rewritePrefix: '/api/users',
    replyOptions: backendReplyOptions,
  });
};
