import type { FastifyPluginAsync } from 'fastify';
import httpProxy from '@fastify/http-proxy';
import type { Pool } from 'undici';
import { backendReplyOptions, replyFromOptions } from './backend.js';
import { streamBodyWhateverItsType } from './pass-through-body.js';

export interface UsersProxyOptions {
  backendUrl: string;
  pool: Pool;
}

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
