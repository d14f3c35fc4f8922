import type { FastifyContentTypeParser, onRequestHookHandler } from 'fastify';

/** What Fastify's content-type check sees; the backend still gets the client's own header from request.raw. */
const OPAQUE_BODY: Readonly<Record<string, string>> = Object.freeze({ 'content-type': 'application/octet-stream' });

/**
 * Fastify answers 415 to a malformed Content-Type (e.g. `foo`) before any parser runs, but the backend
 * decodes every body as JSON whatever its Content-Type. Showing Fastify a neutral type makes the body
 * reach a pass-through parser as a stream; the headers sent on are the client's, from request.raw, so
 * code behind this hook reads request headers there too.
 */
export const streamBodyWhateverItsType: onRequestHookHandler = (request, _reply, done) => {
  if (request.raw.headers['content-type'] !== undefined) request.headers = OPAQUE_BODY;
  done();
};

/** Hands the body on unread, as a stream: the gateway neither parses nor limits what it forwards. */
export const passThroughBody: FastifyContentTypeParser = (_request, payload, done) => {
  done(null, payload);
};
