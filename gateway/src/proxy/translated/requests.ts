import type { FastifyReplyFromHooks } from '@fastify/reply-from';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isUtf8 } from 'node:buffer';
import type { Readable } from 'node:stream';
import { sendError } from '@version-router/platform/errors';
import {
  BUSY_DETAILS,
  BUSY_RETRY_AFTER_SECONDS,
  isJsonType,
  type RouteLabels,
  type TranslationContext,
} from './context.js';
import { discardRest, readWhole, type Hold } from './held-bytes.js';
import type { Apply } from '../../translation/body-plan.js';
import { readJson, writeJson } from '../../translation/json-text.js';
import { TranslationRefusal, type RefusalReason } from '../../translation/refusal.js';

/**
 * A request body to a resource whose bodies change (docs/declared-versions.md "Translation that fails closed"): JSON only,
 * unencoded, read whole within TRANSLATION_MAX_BYTES and the held-bytes budget, translated forward and handed to
 * reply-from; or refused with 400, 413, 415 or 503, answered once the rest of the upload has arrived.
 */

const ERRORS = {
  400: 'invalid request body',
  413: 'payload too large',
  415: 'unsupported media type',
  503: 'service unavailable',
} as const;

/** One request of one route: what refusing or forwarding it needs. */
interface Forwarding {
  readonly context: TranslationContext;
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  readonly route: RouteLabels;
  /** reply-from's options of the route, which the translated body is added to. */
  readonly options: FastifyReplyFromHooks;
  readonly send: (options: FastifyReplyFromHooks) => void;
}

function refuse(
  { context, request, reply, route }: Forwarding,
  reason: RefusalReason,
  status: keyof typeof ERRORS,
  details: string,
): void {
  const log = context.refused(request, route, 'request', reason);
  if (status === 400) {
    log.warn(
      { version: route.version, resource: route.template, reason, details },
      'translation: the request body cannot be translated',
    );
  }
  void sendError(reply, status, ERRORS[status], details);
}

function refuseBusy(forwarding: Forwarding): void {
  const { context, request, reply, route } = forwarding;
  context.warnBusy(request, route, 'request');
  void sendError(reply.header('retry-after', BUSY_RETRY_AFTER_SECONDS), 503, ERRORS[503], BUSY_DETAILS);
}

/** A request the gateway answers itself, once the body the client is still sending has arrived (or its bound). */
function afterTheUpload(reply: FastifyReply, body: unknown, answer: () => void): void {
  if (Buffer.isBuffer(body)) {
    answer();
    return;
  }
  discardRest(body as Readable, (drained) => {
    // Past the drain bound: the connection is given up on once this answer is out.
    if (!drained) void reply.header('connection', 'close');
    answer();
  });
}

/** A failure no rule of the translation expected: logged, and answered 500 as the error handler would. */
function answerUnexpected(request: FastifyRequest, reply: FastifyReply, error: unknown): void {
  request.log.error({ err: error }, 'translation failed unexpectedly');
  if (!reply.sent) void sendError(reply, 500, 'internal error');
}

/** Why a body on this route is no body the gateway can translate (415), or undefined. */
function mediaTypeRefusal({ request, route }: Forwarding): string | undefined {
  const { 'content-type': type, 'content-encoding': encoding } = request.raw.headers;
  const bodies = `version ${route.version} translates request bodies on ${route.template}`;
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    return `${bodies}: send them without Content-Encoding`;
  }
  if (type === undefined || !isJsonType(type)) return `${bodies}: send them as application/json or application/*+json`;
  return undefined;
}

/** The bytes of a request body as the serving version's, handed to reply-from, or the request refused. */
function translate(forwarding: Forwarding, apply: Apply, bytes: Buffer, hold: Hold): void {
  const { context, request, reply, options, send } = forwarding;
  try {
    const read = isUtf8(bytes) ? readJson(bytes.toString('utf8'), context.limits.maxDepth) : undefined;
    let body: Buffer | string = bytes; // Not JSON: sent as it came, for the backend's own 400.
    if (read !== undefined) {
      context.sentBody(request, read.value);
      const translated = apply(read.value);
      if (translated !== read.value) body = writeJson(translated);
    }
    // Handed on, the body is no longer the gateway's to hold: the answer's body takes its own share.
    hold.release();
    send({ ...options, body, contentType: request.raw.headers['content-type'] });
  } catch (error) {
    if (error instanceof TranslationRefusal) refuse(forwarding, error.reason, 400, error.details);
    else answerUnexpected(request, reply, error);
  } finally {
    hold.release();
  }
}

/**
 * Forwards a request with a body (a Buffer read whole by Fastify, or the stream of a larger or untyped one) to a
 * resource whose bodies change: `send` gets the options with the translated body, or the request is refused.
 */
export function forwardBody(
  context: TranslationContext,
  request: FastifyRequest,
  reply: FastifyReply,
  route: RouteLabels & { readonly options: FastifyReplyFromHooks },
  apply: Apply,
  send: (options: FastifyReplyFromHooks) => void,
): void {
  const forwarding: Forwarding = { context, request, reply, route, options: route.options, send };
  const { maxBytes, held } = context.limits;
  const body = request.body;
  const mediaType = mediaTypeRefusal(forwarding);
  if (mediaType !== undefined) {
    afterTheUpload(reply, body, () => refuse(forwarding, 'media_type', 415, mediaType));
    return;
  }
  const tooLarge = `a translated request body is read whole, up to ${maxBytes} bytes`;
  const hold = held.hold();
  if (Buffer.isBuffer(body)) {
    // Read whole already (a small body): within TRANSLATION_MAX_BYTES and the budget, or refused.
    if (body.length > maxBytes) refuse(forwarding, 'too_large', 413, tooLarge);
    else if (!hold.take(body.length)) refuseBusy(forwarding);
    else translate(forwarding, apply, body, hold);
    return;
  }
  const declared = request.raw.headers['content-length'];
  const length = declared === undefined ? undefined : Number(declared);
  if (length !== undefined && length > maxBytes) {
    afterTheUpload(reply, body, () => refuse(forwarding, 'too_large', 413, tooLarge));
    return;
  }
  if (length !== undefined && !hold.take(length)) {
    afterTheUpload(reply, body, () => refuseBusy(forwarding));
    return;
  }
  readWhole(body as Readable, { maxBytes, hold, reserved: length !== undefined, drain: true }, (outcome) => {
    if (outcome.kind !== 'body') hold.release();
    switch (outcome.kind) {
      case 'failed':
        return; // A client that went away: nothing to answer.
      case 'too_large':
      case 'busy':
        if (!outcome.drained) void reply.header('connection', 'close');
        if (outcome.kind === 'too_large') refuse(forwarding, 'too_large', 413, tooLarge);
        else refuseBusy(forwarding);
        return;
      case 'body':
        context.inTurn(outcome.bytes, () => translate(forwarding, apply, outcome.bytes, hold));
    }
  });
}
