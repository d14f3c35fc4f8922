import replyFrom from '@fastify/reply-from';
import type { FastifyContentTypeParser, FastifyInstance, onRequestHookHandler } from 'fastify';
import type { Pool } from 'undici';

export interface ForwardingOptions {
  backendUrl: string;
  /** The one keep-alive pool every forwarding context shares (backend.ts `createBackendPool`). */
  pool: Pool;
}

/** What Fastify's content-type check sees; the backend still gets the client's own header from request.raw. */
const OPAQUE_BODY: Readonly<Record<string, string>> = Object.freeze({ 'content-type': 'application/octet-stream' });

/**
 * Fastify answers 415 to a malformed Content-Type (e.g. `foo`) before any parser runs, but the backend
 * decodes every body as JSON whatever its Content-Type. Showing Fastify a neutral type makes the body
 * reach a pass-through parser as a stream; the headers sent on are the client's, from request.raw, so
 * code behind this hook reads request headers there too.
 */
const streamBodyWhateverItsType: onRequestHookHandler = (request, _reply, done) => {
  if (request.raw.headers['content-type'] !== undefined) request.headers = OPAQUE_BODY;
  done();
};

/** Hands the body on unread, as a stream: the gateway neither parses nor limits what it forwards. */
const passThroughBody: FastifyContentTypeParser = (_request, payload, done) => {
  done(null, payload);
};

/**
 * Makes `reply.from` forward to the backend in the calling plugin's context: the shared pool, no
 * per-request log lines of reply-from's own (one line per request is enough), and request bodies handed
 * on unread whatever their Content-Type. Every route family that proxies calls this once.
 */
export async function setUpForwarding(app: FastifyInstance, { backendUrl, pool }: ForwardingOptions): Promise<void> {
  await app.register(replyFrom, { base: backendUrl, undici: pool, disableRequestLogging: true });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', passThroughBody);
  app.addHook('onRequest', streamBodyWhateverItsType);
}
