import type { FastifyReply, FastifyRequest } from 'fastify';
import { isUtf8 } from 'node:buffer';
import { sendError } from '@version-router/platform/errors';
import { keepsItsTypeAsText, type UpstreamResponse } from '../backend.js';
import { BUSY_DETAILS, BUSY_RETRY_AFTER_SECONDS, type RouteLabels, type TranslationContext } from './context.js';
import { readWhole } from './held-bytes.js';
import type { Apply } from '../../translation/body-plan.js';
import { readJson, writeJson } from '../../translation/json-text.js';
import { TranslationRefusal, type RefusalReason } from '../../translation/refusal.js';
import { POLICY_HEADERS } from '../../versions/headers.js';

/**
 * A translated route's answer whose body changes (a 2xx, or an error envelope; docs/declared-versions.md "Translation that
 * fails closed"): read whole within TRANSLATION_MAX_BYTES and the held-bytes budget, translated backward, and sent
 * with its own length; or replaced by the gateway's own 502 (or 503), never passed on untranslated.
 */

/** Headers a 502 or 503 in place of an upstream answer keeps: the version policy's, and the request id. */
const GATEWAY_HEADERS: ReadonlySet<string> = new Set<string>([...POLICY_HEADERS, 'x-request-id']);

/**
 * Headers naming the upstream's bytes, not the translated ones. Content-Length is not among them: Fastify sets it
 * to the length of what is sent whenever it differs, and overwriting a header is cheaper than deleting one.
 */
const UPSTREAM_BYTES_HEADERS = [
  'transfer-encoding',
  'content-encoding',
  'content-md5',
  'digest',
  'content-digest',
  'repr-digest',
];

/**
 * The gateway's own 502 or 503 in place of an upstream answer: its headers start from nothing but the version
 * policy's and the request id (none of the upstream's caching, entity or cookie headers), and nothing caches it.
 */
export function answerInstead(request: FastifyRequest, reply: FastifyReply, status: 502 | 503, details = ''): void {
  for (const name of Object.keys(reply.getHeaders())) if (!GATEWAY_HEADERS.has(name)) reply.removeHeader(name);
  void reply.header('x-request-id', request.id).header('cache-control', 'no-store');
  const vary = request.apiVersion?.vary ?? '';
  if (vary !== '') void reply.header('vary', vary);
  if (status === 503) void reply.header('retry-after', BUSY_RETRY_AFTER_SECONDS);
  void sendError(reply, status, status === 502 ? 'bad gateway' : 'service unavailable', details);
}

/** One answer of one route: what refusing it needs. */
interface Answer {
  readonly context: TranslationContext;
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  readonly route: RouteLabels;
  readonly res: UpstreamResponse;
}

/** The upstream's answer refused: its stream dropped, one warn line and a count, the gateway's own 502. */
function refuse(
  { context, request, reply, route, res }: Answer,
  reason: RefusalReason,
  message: string,
  fields: Record<string, unknown> = {},
): void {
  res.stream.destroy();
  context
    .refused(request, route, 'response', reason)
    .warn({ version: route.version, resource: route.template, reason, ...fields }, `translation: ${message}`);
  answerInstead(request, reply, 502);
}

function refuseBusy({ context, request, reply, route }: Answer): void {
  context.warnBusy(request, route, 'response');
  answerInstead(request, reply, 503, BUSY_DETAILS);
}

const refuseUntyped = (answer: Answer): void =>
  refuse(answer, 'untyped', 'the upstream sent a body without a Content-Type');

function refuseTooLarge(answer: Answer): void {
  const { maxBytes } = answer.context.limits;
  const message = `the upstream body is larger than TRANSLATION_MAX_BYTES (${maxBytes} bytes)`;
  refuse(answer, 'too_large', message, { limitBytes: maxBytes });
}

/**
 * An answer with a JSON type (`typed`) or none, its headers already on the reply: translated by `apply`, or refused.
 * An untyped one is read too, as only its end tells whether a chunked answer has a body.
 */
export function translateAnswer(
  context: TranslationContext,
  request: FastifyRequest,
  reply: FastifyReply,
  route: RouteLabels,
  res: UpstreamResponse,
  apply: Apply,
  typed: boolean,
): void {
  const answer: Answer = { context, request, reply, route, res };
  const { maxBytes, held } = context.limits;
  const encoding = res.headers['content-encoding'];
  if (encoding !== undefined && encoding !== 'identity') {
    const message = 'the upstream sent an encoded body, which cannot be translated';
    refuse(answer, 'encoded', message, { contentEncoding: encoding });
    return;
  }
  const declared = res.headers['content-length'];
  const length = declared === undefined ? undefined : Number(declared);
  if (!typed && length !== undefined && length > 0) {
    refuseUntyped(answer);
    return;
  }
  if (length !== undefined && length > maxBytes) {
    refuseTooLarge(answer);
    return;
  }
  const hold = held.hold();
  if (length !== undefined && !hold.take(length)) {
    res.stream.destroy();
    refuseBusy(answer);
    return;
  }
  readWhole(res.stream, { maxBytes, hold, reserved: length !== undefined, drain: false }, (outcome) => {
    // Held until the body is translated and handed to the socket; every other way out gives it back now.
    if (outcome.kind !== 'body' || !typed || outcome.bytes.length === 0) hold.release();
    switch (outcome.kind) {
      case 'failed':
        // Nothing of the body was sent yet: a failed upstream is a 502 as any other.
        answerInstead(request, reply, 502);
        return;
      case 'too_large':
        refuseTooLarge(answer);
        return;
      case 'busy':
        refuseBusy(answer);
        return;
      case 'body':
        // No bytes, no fields under any version's names: sent as it came, typed or not.
        if (outcome.bytes.length === 0) void reply.send(outcome.bytes);
        else if (!typed) refuseUntyped(answer);
        else {
          context.inTurn(outcome.bytes, () => {
            sendTranslated(answer, apply, outcome.bytes);
            hold.release();
          });
        }
    }
  });
}

/** The upstream's body as this version's, or the gateway's 502; nothing here may throw out of the stream's end. */
function sendTranslated(answer: Answer, apply: Apply, bytes: Buffer): void {
  const { context, request, reply } = answer;
  try {
    const read = isUtf8(bytes) ? readJson(bytes.toString('utf8'), context.limits.maxDepth) : undefined;
    if (read === undefined) {
      refuse(answer, 'invalid_json', 'the upstream body is not valid JSON, though its Content-Type says so');
      return;
    }
    const translated = apply(read.value);
    for (const name of UPSTREAM_BYTES_HEADERS) if (reply.hasHeader(name)) reply.removeHeader(name);
    // Nothing changed: the upstream's own bytes are this version's.
    if (translated === read.value) {
      void reply.send(bytes);
      return;
    }
    // Node writes a string body and the response head in one write(2), a Buffer beside the head in a writev(2),
    // the dearer path (bench/README.md). A string is sent as UTF-8 whatever it holds, but gets Fastify's charset
    // appended to a JSON type that names none: such an answer goes as bytes, its Content-Type as it came.
    const text = writeJson(translated);
    void reply.send(keepsItsTypeAsText(String(reply.getHeader('content-type'))) ? text : Buffer.from(text));
  } catch (error) {
    if (error instanceof TranslationRefusal) {
      refuse(answer, error.reason, 'the upstream body cannot be translated', { details: error.details });
    } else {
      // No rule expected it: logged as the error it is, and the answer is the gateway's own 502 as for any other.
      request.log.error({ err: error }, 'translation failed unexpectedly');
      if (!reply.sent) answerInstead(request, reply, 502);
    }
  }
}
