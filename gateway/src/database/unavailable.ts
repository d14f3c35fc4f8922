import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from '@version-router/platform/errors';
import { StorageUnavailableError } from '@version-router/platform/postgres';

/**
 * The error handler of the routes that read or write the consumer store: a store that cannot be reached in
 * time is 503 `storage unavailable` with Retry-After: 1 (no details: its reason names hosts); anything else
 * goes on to the root handler.
 */
export function storeUnavailableHandler(
  err: FastifyError,
  _request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  if (err instanceof StorageUnavailableError)
    return sendError(reply.header('retry-after', '1'), 503, 'storage unavailable');
  throw err;
}
