import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { traceConsumer } from '../accounting/trace.js';
import { checkApiKey, refuseKey } from '../consumers/authenticate.js';
import type { KeyCache } from '../consumers/key-cache.js';
import { backendReplyOptions } from './backend.js';
import { setUpForwarding, withRequestBody, type ForwardingOptions } from './forwarding.js';

/** The methods the users resource is forwarded with; any other gets the gateway's own 405 listing these in Allow. */
const USERS_METHODS = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'];

/**
 * `/api/users` and `/api/users/*`: no version logic; method, path, query, body, status and headers pass
 * through unchanged, through the same reply-from forwarding as the versioned resources (which refuses a
 * path that climbs out with `..` with a 400). A proxy plugin on top of it (@fastify/http-proxy) re-parsed
 * and re-encoded every URL and query, a cost every request paid (bench/README.md#tuning-history-before--after).
 * An API-Key is optional here (no version names a rule for it): a valid one tells the backend the consumer,
 * any other is a 401.
 */
export async function usersProxy(
  app: FastifyInstance,
  { keys, ...options }: ForwardingOptions & { keys: KeyCache },
): Promise<void> {
  await setUpForwarding(app, options);
  const forward = (request: FastifyRequest, reply: FastifyReply): void => {
    if (checkApiKey(request, keys) === 'invalid') {
      void refuseKey(reply, 'invalid');
      return;
    }
    if (request.trace !== null) traceConsumer(request.trace, request.consumer);
    void reply.from(undefined, withRequestBody(request, backendReplyOptions));
  };
  app.route({ method: USERS_METHODS, url: '/api/users', handler: forward });
  app.route({ method: USERS_METHODS, url: '/api/users/*', handler: forward });
}
