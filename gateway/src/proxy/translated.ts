import type { FastifyReplyFromHooks } from '@fastify/reply-from';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isUtf8 } from 'node:buffer';
import type { Readable } from 'node:stream';
import { sendError } from '@version-router/platform/errors';
import type { UpstreamResponse } from './backend.js';
import { discardRest, holdFor, readWhole, type HeldBytes, type Hold, type ReadOutcome } from './translation-bytes.js';
import { TURN_BYTES, createTurns } from './translation-turns.js';
import type { ResourceTranslation, VersionTranslation } from '../translation/engine.js';
import { readJson, writeJson } from '../translation/json-text.js';
import { TranslationRefusal, type RefusalReason } from '../translation/refusal.js';
import { POLICY_HEADERS } from '../versions/headers.js';
import type { ResourceMatch } from '../versions/router.js';

/**
 * Serving a version declared as changes from the version that serves it (docs/behaviour.md "Versions declared as
 * changes", "Translation that fails closed"): the backend is told which version was asked for; on a resource whose
 * bodies change, JSON request bodies go forward and 2xx JSON answers are read whole and go backward, or are
 * refused (400 and 413/415/503 for a request, 502 or 503 for an answer), never passed on untranslated. The
 * upstream's ETag, encodings, ranges and locations are made to fit the bytes and the version the client gets.
 * Every other answer passes as the base options do.
 */

/** The version the client asked for, for a behaviour no presentation can express. */
const VERSION_REQUESTED_HEADER = 'api-version-requested';

/** `application/json` and every `application/*+json` (hal+json, problem+json, vnd.api+json), parameters allowed. */
const JSON_TYPE = /^\s*application\/(?:[\w.!#$%&'*^`|~-]+\+)?json\s*(?:;|$)/i;
const ACCEPTED_TYPES = 'application/json or application/*+json';

/** Headers a 502 or 503 in place of an upstream answer keeps: the version policy's, and the request id. */
const GATEWAY_HEADERS: ReadonlySet<string> = new Set<string>([...POLICY_HEADERS, 'x-request-id']);

/** Headers naming the upstream's bytes, not the translated ones. */
const UPSTREAM_BYTES_HEADERS = ['content-length', 'transfer-encoding', 'content-encoding', 'content-md5', 'digest'];
const UPSTREAM_DIGEST_HEADERS = ['content-digest', 'repr-digest'];

/** Seconds a 503 for a full translation budget asks the client to wait. */
const BUSY_RETRY_AFTER_SECONDS = '1';

export interface TranslationLimits {
  /** TRANSLATION_MAX_BYTES: the largest body read whole to be translated. */
  maxBytes: number;
  /** TRANSLATION_MAX_DEPTH: the deepest nesting of a body translated. */
  maxDepth: number;
  /** TRANSLATION_MAX_INFLIGHT_BYTES: the bytes all translations in progress hold together. */
  held: HeldBytes;
}

/** One body the gateway would not translate, for `translation_failures_total`. */
export interface TranslationFailure {
  version: number;
  resource: string;
  direction: 'request' | 'response';
  reason: RefusalReason;
}

export interface TranslatedForwarding {
  /**
   * Forwards a request for `version` (served as `translation` says) on `template`: calls `send` with the reply-from
   * options to use, the request body translated when the resource's bodies change, or answers the request itself
   * when its body cannot be translated.
   */
  forward(
    request: FastifyRequest,
    reply: FastifyReply,
    translation: VersionTranslation,
    version: number,
    template: string,
    base: FastifyReplyFromHooks,
    send: (options: FastifyReplyFromHooks) => void,
  ): void;
}

/**
 * Where the serving version answers a request path (its query kept when given): the path form with the
 * serving version's number under the request's own prefix (`/api/v1/orders/x` → `/api/v2/orders/x`), the
 * bare path in the path form of the serving version.
 */
export function servedTarget(match: ResourceMatch, pathAndQuery: string, served: number): string {
  const { route, versionLabel } = match;
  if (route.form !== 'path') return `/v${served}${pathAndQuery}`;
  return `${route.prefix}/v${served}${pathAndQuery.slice(route.prefix.length + 2 + versionLabel.length)}`;
}

/** `"abc"` or `W/"abc"` → `abc`; undefined for anything else. */
function opaqueOf(tag: string): string | undefined {
  const match = /^(?:W\/)?"([^"]*)"$/.exec(tag.trim());
  return match?.[1];
}

/**
 * A conditional request's tags as the upstream knows them: ours (`W/"v1-<changes>-<upstream>"`) turned back into
 * the upstream's, `*` kept. Any other tag names no bytes this version sent: If-None-Match drops it (a 304 would
 * confirm bytes the client never had), If-Match keeps it as it came (dropping it would make the write
 * unconditional), so the upstream refuses it as it refuses any tag it does not know.
 */
function upstreamTags(value: string, prefix: string, others: 'drop' | 'keep'): string | undefined {
  if (value.trim() === '*') return '*';
  const tags: string[] = [];
  for (const tag of value.split(',')) {
    const opaque = opaqueOf(tag);
    if (opaque?.startsWith(prefix) === true) tags.push(`"${opaque.slice(prefix.length)}"`);
    else if (others === 'keep' && tag.trim() !== '') tags.push(tag.trim());
  }
  return tags.length === 0 ? undefined : tags.join(', ');
}

type ResponseHeaders = Parameters<NonNullable<FastifyReplyFromHooks['rewriteHeaders']>>[0];

/** A request's 2xx answer that carries a body to translate, pass on, or refuse. */
const hasTranslatableStatus = (status: number): boolean =>
  status >= 200 && status < 300 && status !== 204 && status !== 205;

/**
 * The translation of a version's requests and answers. `limits` are TRANSLATION_MAX_BYTES, TRANSLATION_MAX_DEPTH
 * and the budget of TRANSLATION_MAX_INFLIGHT_BYTES; `countFailure` counts each body not translated.
 */
export function createTranslatedForwarding({
  limits,
  countFailure,
}: {
  limits: TranslationLimits;
  countFailure: (failure: TranslationFailure) => void;
}): TranslatedForwarding {
  const { maxBytes, maxDepth, held } = limits;

  /** The requested version and resource template of a translated route, as its failures are counted. */
  interface RouteLabels {
    readonly version: number;
    readonly template: string;
  }
  /** What one version's requests on one resource template are forwarded with, built on its first request. */
  interface Route extends RouteLabels {
    readonly options: FastifyReplyFromHooks;
    /** Undefined on a resource whose bodies do not change: it is only forwarded. */
    readonly bodies: ResourceTranslation | undefined;
  }
  const cache = new WeakMap<VersionTranslation, Map<string, Route>>();
  const turns = createTurns();
  /** A large body waits for its turn; a small one is translated at once. */
  const inTurn = (bytes: Buffer, translate: () => void): void => {
    if (bytes.length < TURN_BYTES) translate();
    else turns(translate);
  };

  function failed(
    request: FastifyRequest,
    route: RouteLabels,
    direction: TranslationFailure['direction'],
    reason: RefusalReason,
  ) {
    countFailure({ version: route.version, resource: route.template, direction, reason });
    return request.log;
  }

  /** Location and Content-Location of the serving version named as the requested one (`/v2/…` → `/v1/…`). */
  function locationRewriter(served: number, requested: number): (headers: ResponseHeaders) => void {
    const servedPath = new RegExp(`^((?:[A-Za-z][A-Za-z0-9+.-]*:)?//[^/?#]*)?(/api)?/v${served}(?=[/?#]|$)`);
    const requestedPath = `$1$2/v${requested}`;
    return (headers) => {
      for (const name of ['location', 'content-location']) {
        const value = headers[name];
        if (typeof value === 'string') headers[name] = value.replace(servedPath, requestedPath);
      }
    };
  }

  function build(
    translation: VersionTranslation,
    version: number,
    template: string,
    base: FastifyReplyFromHooks,
  ): Route {
    const requested = String(version);
    const bodies = translation.resources.get(template);
    const baseRequestHeaders = base.rewriteRequestHeaders;
    const baseHeaders = base.rewriteHeaders;
    const locations = locationRewriter(translation.served, version);
    if (bodies === undefined) {
      // Same bytes as the serving version's: the backend is told what was asked for, the client is sent its version.
      const options: FastifyReplyFromHooks = {
        ...base,
        rewriteRequestHeaders(request, headers) {
          const rewritten = baseRequestHeaders === undefined ? headers : baseRequestHeaders(request, headers);
          rewritten[VERSION_REQUESTED_HEADER] = requested;
          return rewritten;
        },
        rewriteHeaders(headers, request) {
          const rewritten = baseHeaders === undefined ? headers : baseHeaders(headers, request);
          locations(rewritten);
          return rewritten;
        },
      };
      return { version, template, options, bodies };
    }
    const route: RouteLabels = { version, template };
    const prefix = `v${requested}-${translation.digest}-`;
    const baseOnResponse = base.onResponse;
    const options: FastifyReplyFromHooks = {
      ...base,
      rewriteRequestHeaders(request, headers) {
        const rewritten = baseRequestHeaders === undefined ? headers : baseRequestHeaders(request, headers);
        rewritten[VERSION_REQUESTED_HEADER] = requested;
        // Bytes the gateway did not decode cannot be parsed: the upstream sends them as they are.
        rewritten['accept-encoding'] = 'identity';
        // A chunked body read whole and translated goes with the Content-Length reply-from gives it.
        if (rewritten['transfer-encoding'] !== undefined && rewritten['content-length'] !== undefined) {
          rewritten['transfer-encoding'] = undefined;
        }
        const ifNoneMatch = rewritten['if-none-match'];
        if (ifNoneMatch !== undefined) rewritten['if-none-match'] = upstreamTags(String(ifNoneMatch), prefix, 'drop');
        const ifMatch = rewritten['if-match'];
        if (ifMatch !== undefined) rewritten['if-match'] = upstreamTags(String(ifMatch), prefix, 'keep');
        // A range of the successor's bytes is no range of this version's: the whole body is asked for.
        if (rewritten.range !== undefined) rewritten.range = undefined;
        if (rewritten['if-range'] !== undefined) rewritten['if-range'] = undefined;
        return rewritten;
      },
      rewriteHeaders(headers, request) {
        const rewritten = baseHeaders === undefined ? headers : baseHeaders(headers, request);
        if (rewritten.etag !== undefined) {
          // The upstream's tag names its own bytes: this version's are other bytes, made from them by these changes.
          const opaque = typeof rewritten.etag === 'string' ? opaqueOf(rewritten.etag) : undefined;
          if (opaque === undefined) delete rewritten.etag;
          else rewritten.etag = `W/"${prefix}${opaque}"`;
        }
        if (rewritten['accept-ranges'] !== undefined) delete rewritten['accept-ranges'];
        locations(rewritten);
        return rewritten;
      },
      onResponse(request, reply, raw) {
        const res = raw as unknown as UpstreamResponse;
        const ours = reply as FastifyReply;
        if (request.method === 'HEAD' || !hasTranslatableStatus(res.statusCode)) {
          // A HEAD's length would be the serving version's body's, which this version's differs from.
          if (request.method === 'HEAD') ours.removeHeader('content-length');
          if (baseOnResponse !== undefined) baseOnResponse(request, reply, raw);
          else void ours.send(res.stream);
          return;
        }
        const type = res.headers['content-type'];
        if (type !== undefined && !JSON_TYPE.test(String(type))) {
          // Not JSON (text/csv, an image): no change names its fields, so it passes as it came.
          if (baseOnResponse !== undefined) baseOnResponse(request, reply, raw);
          else void ours.send(res.stream);
          return;
        }
        // Untyped: read too, as only its end tells whether a chunked answer has a body.
        sendTranslated(request as FastifyRequest, ours, route, res, bodies, type !== undefined);
      },
    };
    return { ...route, options, bodies };
  }

  /**
   * The gateway's own 502 or 503 in place of an upstream answer: its headers start from nothing but the version
   * policy's and the request id (none of the upstream's caching, entity or cookie headers), and nothing caches it.
   */
  function answerInstead(request: FastifyRequest, reply: FastifyReply, status: 502 | 503, details = ''): void {
    for (const name of Object.keys(reply.getHeaders())) if (!GATEWAY_HEADERS.has(name)) reply.removeHeader(name);
    void reply.header('x-request-id', request.id).header('cache-control', 'no-store');
    const vary = request.apiVersion?.vary ?? '';
    if (vary !== '') void reply.header('vary', vary);
    if (status === 503) void reply.header('retry-after', BUSY_RETRY_AFTER_SECONDS);
    void sendError(reply, status, status === 502 ? 'bad gateway' : 'service unavailable', details);
  }

  function busyDetails(): string {
    return 'the gateway holds as many bodies for translation as it may; retry shortly';
  }

  function warnBusy(request: FastifyRequest, route: RouteLabels, direction: TranslationFailure['direction']): void {
    failed(request, route, direction, 'busy').warn(
      { version: route.version, resource: route.template, direction, limitBytes: held.limit },
      `translation: TRANSLATION_MAX_INFLIGHT_BYTES (${held.limit} bytes) are held by translations in progress`,
    );
  }

  function refuseAnswer(
    request: FastifyRequest,
    reply: FastifyReply,
    route: RouteLabels,
    res: UpstreamResponse,
    reason: RefusalReason,
    message: string,
    fields: Record<string, unknown> = {},
  ): void {
    res.stream.destroy();
    failed(request, route, 'response', reason).warn(
      { version: route.version, resource: route.template, reason, ...fields },
      `translation: ${message}`,
    );
    answerInstead(request, reply, 502);
  }

  function sendTranslated(
    request: FastifyRequest,
    reply: FastifyReply,
    route: RouteLabels,
    res: UpstreamResponse,
    bodies: ResourceTranslation,
    typed: boolean,
  ): void {
    const encoding = res.headers['content-encoding'];
    if (encoding !== undefined && encoding !== 'identity') {
      const message = 'the upstream sent an encoded body, which cannot be translated';
      refuseAnswer(request, reply, route, res, 'encoded', message, { contentEncoding: encoding });
      return;
    }
    const length = res.headers['content-length'] === undefined ? undefined : Number(res.headers['content-length']);
    if (!typed && length !== undefined && length > 0) {
      refuseUntyped(request, reply, route, res);
      return;
    }
    if (length !== undefined && length > maxBytes) {
      refuseTooLarge(request, reply, route, res);
      return;
    }
    const hold = holdFor(held);
    if (length !== undefined && !hold.take(length)) {
      res.stream.destroy();
      warnBusy(request, route, 'response');
      answerInstead(request, reply, 503, busyDetails());
      return;
    }
    readWhole(res.stream, { maxBytes, hold, reserved: length !== undefined, drain: false }, (outcome) => {
      // Held until the body is translated and handed to the socket; every other way out gives it back now.
      if (outcome.kind !== 'body' || !typed) hold.release();
      switch (outcome.kind) {
        case 'failed':
          // Nothing of the body was sent yet: a failed upstream is a 502 as any other.
          answerInstead(request, reply, 502);
          return;
        case 'too_large':
          refuseTooLarge(request, reply, route, res);
          return;
        case 'busy':
          warnBusy(request, route, 'response');
          answerInstead(request, reply, 503, busyDetails());
          return;
        case 'body':
          if (typed) {
            inTurn(outcome.bytes, () => {
              answerTranslated(request, reply, route, res, bodies, outcome.bytes);
              hold.release();
            });
          } else if (outcome.bytes.length > 0) refuseUntyped(request, reply, route, res);
          else void reply.send(outcome.bytes);
      }
    });
  }

  function refuseUntyped(
    request: FastifyRequest,
    reply: FastifyReply,
    route: RouteLabels,
    res: UpstreamResponse,
  ): void {
    refuseAnswer(request, reply, route, res, 'untyped', 'the upstream sent a body without a Content-Type');
  }

  function refuseTooLarge(
    request: FastifyRequest,
    reply: FastifyReply,
    route: RouteLabels,
    res: UpstreamResponse,
  ): void {
    const message = `the upstream body is larger than TRANSLATION_MAX_BYTES (${maxBytes} bytes)`;
    refuseAnswer(request, reply, route, res, 'too_large', message, { limitBytes: maxBytes });
  }

  /** The upstream's body as this version's, or the gateway's 502; nothing here may throw out of the stream's end. */
  function answerTranslated(
    request: FastifyRequest,
    reply: FastifyReply,
    route: RouteLabels,
    res: UpstreamResponse,
    bodies: ResourceTranslation,
    bytes: Buffer,
  ): void {
    let out: Buffer;
    try {
      const read = isUtf8(bytes) ? readJson(bytes.toString('utf8'), maxDepth) : undefined;
      if (read === undefined) {
        const message = 'the upstream body is not valid JSON, though its Content-Type says so';
        refuseAnswer(request, reply, route, res, 'invalid_json', message);
        return;
      }
      const translated = bodies.backward(read.value);
      // Nothing changed: the upstream's own bytes are this version's.
      out = translated === read.value ? bytes : Buffer.from(writeJson(translated));
    } catch (error) {
      if (!(error instanceof TranslationRefusal)) {
        answerUnexpected(request, reply, error);
        return;
      }
      const message = 'the upstream body cannot be translated';
      refuseAnswer(request, reply, route, res, error.reason, message, { details: error.details });
      return;
    }
    for (const name of UPSTREAM_BYTES_HEADERS) reply.removeHeader(name);
    for (const name of UPSTREAM_DIGEST_HEADERS) if (reply.hasHeader(name)) reply.removeHeader(name);
    // A Buffer keeps the upstream's Content-Type as it came (a string would get Fastify's charset appended).
    void reply.send(out);
  }

  /** A failure no rule here expected: the request's own error handling answers it (500) and logs it. */
  function answerUnexpected(request: FastifyRequest, reply: FastifyReply, error: unknown): void {
    request.log.error({ err: error }, 'translation failed unexpectedly');
    if (!reply.sent) void sendError(reply, 500, 'internal error');
  }

  /** A request the gateway answers itself, once the body the client is still sending has arrived. */
  function answerRequest(reply: FastifyReply, body: unknown, answer: () => void): void {
    if (Buffer.isBuffer(body) || body === undefined) {
      answer();
      return;
    }
    discardRest(body as Readable, (drained) => {
      // Past the drain bound: the connection is given up on once this answer is out.
      if (!drained) void reply.header('connection', 'close');
      answer();
    });
  }

  function refuseRequest(
    request: FastifyRequest,
    reply: FastifyReply,
    route: RouteLabels,
    reason: RefusalReason,
    status: 400 | 413 | 415 | 503,
    details: string,
  ): void {
    const log = failed(request, route, 'request', reason);
    if (status === 400) {
      log.warn(
        { version: route.version, resource: route.template, reason, details },
        'translation: the request body cannot be translated',
      );
    } else if (status === 503) warnBusy(request, route, 'request');
    const error = {
      400: 'invalid request body',
      413: 'payload too large',
      415: 'unsupported media type',
      503: 'service unavailable',
    }[status];
    if (status === 503) void reply.header('retry-after', BUSY_RETRY_AFTER_SECONDS);
    void sendError(reply, status, error, details);
  }

  /** The bytes of a request body as the serving version's, handed to `send`, or the request refused; then released. */
  function translateRequest(
    request: FastifyRequest,
    reply: FastifyReply,
    route: Route,
    bodies: ResourceTranslation,
    bytes: Buffer,
    hold: Hold,
    send: (options: FastifyReplyFromHooks) => void,
  ): void {
    const contentType = request.raw.headers['content-type'];
    let body: Buffer | string;
    // Handed on or refused, the body is no longer the gateway's to hold: the answer's body takes its own share.
    try {
      const read = isUtf8(bytes) ? readJson(bytes.toString('utf8'), maxDepth) : undefined;
      if (read === undefined)
        body = bytes; // Not JSON: sent as it came, for the backend's own 400.
      else {
        const translated = bodies.forward(read.value);
        body = translated === read.value ? bytes : writeJson(translated);
      }
    } catch (error) {
      if (error instanceof TranslationRefusal) refuseRequest(request, reply, route, error.reason, 400, error.details);
      else answerUnexpected(request, reply, error);
      return;
    } finally {
      hold.release();
    }
    send({ ...route.options, body, contentType });
  }

  /** The media type refusal of a request body the gateway would have to translate. */
  function mediaTypeRefusal(route: RouteLabels, request: FastifyRequest): string | undefined {
    const { 'content-type': type, 'content-encoding': encoding } = request.raw.headers;
    const bodies = `version ${route.version} translates request bodies on ${route.template}`;
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      return `${bodies}: send them without Content-Encoding`;
    }
    if (type === undefined || !JSON_TYPE.test(type)) return `${bodies}: send them as ${ACCEPTED_TYPES}`;
    return undefined;
  }

  function forwardBody(
    request: FastifyRequest,
    reply: FastifyReply,
    route: Route,
    bodies: ResourceTranslation,
    send: (options: FastifyReplyFromHooks) => void,
  ): void {
    const body = request.body;
    const mediaType = mediaTypeRefusal(route, request);
    if (mediaType !== undefined) {
      answerRequest(reply, body, () => refuseRequest(request, reply, route, 'media_type', 415, mediaType));
      return;
    }
    const tooLarge = `a translated request body is read whole, up to ${maxBytes} bytes`;
    if (Buffer.isBuffer(body)) {
      // Read whole already (a small body): within TRANSLATION_MAX_BYTES and the budget, or refused.
      const hold = holdFor(held);
      if (body.length > maxBytes) refuseRequest(request, reply, route, 'too_large', 413, tooLarge);
      else if (!hold.take(body.length)) refuseRequest(request, reply, route, 'busy', 503, busyDetails());
      else translateRequest(request, reply, route, bodies, body, hold, send);
      return;
    }
    const stream = body as Readable;
    const declared = request.raw.headers['content-length'];
    const length = declared === undefined ? undefined : Number(declared);
    if (length !== undefined && length > maxBytes) {
      answerRequest(reply, body, () => refuseRequest(request, reply, route, 'too_large', 413, tooLarge));
      return;
    }
    const hold = holdFor(held);
    if (length !== undefined && !hold.take(length)) {
      answerRequest(reply, body, () => refuseRequest(request, reply, route, 'busy', 503, busyDetails()));
      return;
    }
    readWhole(stream, { maxBytes, hold, reserved: length !== undefined, drain: true }, (outcome: ReadOutcome) => {
      if (outcome.kind !== 'body') hold.release();
      switch (outcome.kind) {
        case 'failed':
          return; // A client that went away: nothing to answer.
        case 'too_large':
        case 'busy':
          if (!outcome.drained) void reply.header('connection', 'close');
          if (outcome.kind === 'too_large') refuseRequest(request, reply, route, 'too_large', 413, tooLarge);
          else refuseRequest(request, reply, route, 'busy', 503, busyDetails());
          return;
        case 'body':
          inTurn(outcome.bytes, () => translateRequest(request, reply, route, bodies, outcome.bytes, hold, send));
      }
    });
  }

  return {
    forward(request, reply, translation, version, template, base, send) {
      let byTemplate = cache.get(translation);
      if (byTemplate === undefined) cache.set(translation, (byTemplate = new Map<string, Route>()));
      let route = byTemplate.get(template);
      if (route === undefined) byTemplate.set(template, (route = build(translation, version, template, base)));
      const body = request.body;
      const { bodies } = route;
      // An empty body is no body: nothing to translate, nothing to refuse.
      if (bodies === undefined || body === undefined || (Buffer.isBuffer(body) && body.length === 0)) {
        send(
          Buffer.isBuffer(body)
            ? { ...route.options, body, contentType: request.raw.headers['content-type'] }
            : route.options,
        );
        return;
      }
      forwardBody(request, reply, route, bodies, send);
    },
  };
}
