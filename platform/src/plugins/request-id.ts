import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { FastifyBaseLogger, FastifyHttpOptions, FastifyReply, FastifyRequest } from 'fastify';

const SANE_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** Keeps a client's X-Request-Id when it is short visible ASCII, so it can be logged and forwarded safely. */
export function requestIdFor(req: IncomingMessage): string {
  const sent = req.headers['x-request-id'];
  return typeof sent === 'string' && SANE_REQUEST_ID.test(sent) ? sent : randomUUID();
}

/** Every request's id comes from requestIdFor: Fastify's own header option would keep any value the client sent. */
export const requestIdOptions: Pick<FastifyHttpOptions<Server, FastifyBaseLogger>, 'requestIdHeader' | 'genReqId'> = {
  requestIdHeader: false,
  genReqId: requestIdFor,
};

/**
 * Every response carries its request's id, refused and failed ones included. Called where Fastify creates
 * the reply (the log controller's incomingRequest, see http-foundation.ts), ahead of every hook.
 */
export function echoRequestId(request: FastifyRequest, reply: FastifyReply): void {
  void reply.header('x-request-id', request.id);
}
