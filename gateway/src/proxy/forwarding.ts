import replyFrom, { type FastifyReplyFromHooks } from '@fastify/reply-from';
import type {
  FastifyBodyParser,
  FastifyContentTypeParser,
  FastifyInstance,
  FastifyRequest,
  onRequestHookHandler,
} from 'fastify';
import type { Pool } from 'undici';
import { SMALL_BODY_BYTES } from './backend.js';

export interface ForwardingOptions {
  backendUrl: string;
  /** The one keep-alive pool every forwarding context shares (backend.ts `createBackendPool`). */
  pool: Pool;
}

/**
 * What Fastify's content-type check sees; the backend still gets the client's own header from request.raw.
 * A small body (a Content-Length up to SMALL_BODY_BYTES) with a Content-Type is shown under a type of its own,
 * whose parser reads it whole; any other body under a neutral one, whose parser hands the stream on.
 */
const STREAMED_BODY: Readonly<Record<string, string>> = Object.freeze({ 'content-type': 'application/octet-stream' });
const WHOLE_BODY_TYPE = 'application/x-gateway-whole-body';
const WHOLE_BODY: Readonly<Record<string, string>> = Object.freeze({ 'content-type': WHOLE_BODY_TYPE });

/**
 * Fastify answers 415 to a malformed Content-Type (e.g. `foo`) before any parser runs, but the backend
 * decodes every body as JSON whatever its Content-Type. Showing Fastify a type of ours makes every body
 * reach one of the parsers below; the headers sent on are the client's, from request.raw, so code behind
 * this hook reads request headers there too.
 *
 * Only a body with a Content-Type is read whole: reply-from sends a body it is given under the type it is
 * given, and would JSON-encode one given without. Why read small ones first: under load, bodies forwarded as
 * streams left about 4 MiB alive at each young-generation collection, all of it promoted to the old
 * generation, where bodies read whole leave 0.1 MiB; node:http and undici alone do the same, so it is the
 * stream path, not our code (bench/README.md, "Tuning history (before → after)").
 */
const showBodyToFastify: onRequestHookHandler = (request, _reply, done) => {
  const { 'content-length': length, 'content-type': type } = request.raw.headers;
  if (type !== undefined) request.headers = Number(length) <= SMALL_BODY_BYTES ? WHOLE_BODY : STREAMED_BODY;
  done();
};

/** Any body but a small typed one: handed on as the stream it arrives as; the gateway neither parses nor limits it. */
const streamBody: FastifyContentTypeParser = (_request, payload, done) => {
  done(null, payload);
};

/** A small typed body, read whole by Fastify's own reader (`parseAs: 'buffer'`), handed on as those bytes. */
const wholeBody: FastifyBodyParser<Buffer> = (_request, body, done) => {
  done(null, body);
};

/**
 * The reply.from options for this request: a body read whole goes as the client's bytes under the client's
 * own Content-Type (reply-from would re-encode a JSON one and drop its parameters), a streamed one as it is.
 */
export function withRequestBody(request: FastifyRequest, options: FastifyReplyFromHooks): FastifyReplyFromHooks {
  const body = request.body;
  return Buffer.isBuffer(body) ? { ...options, body, contentType: request.raw.headers['content-type'] } : options;
}

/**
 * Makes `reply.from` forward to the backend in the calling plugin's context: the shared pool, no
 * per-request log lines of reply-from's own (one line per request is enough), and request bodies handed
 * on unparsed whatever their Content-Type (small typed ones read whole first, as above). Every route family
 * that proxies calls this once.
 */
export async function setUpForwarding(app: FastifyInstance, { backendUrl, pool }: ForwardingOptions): Promise<void> {
  await app.register(replyFrom, { base: backendUrl, undici: pool, disableRequestLogging: true });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', streamBody);
  app.addContentTypeParser(WHOLE_BODY_TYPE, { parseAs: 'buffer' }, wholeBody);
  app.addHook('onRequest', showBodyToFastify);
}
