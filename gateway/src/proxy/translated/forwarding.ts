import type { FastifyReplyFromHooks } from '@fastify/reply-from';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from '@version-router/platform/errors';
import type { UpstreamResponse } from '../backend.js';
import { API_VERSION_REQUESTED_HEADER as VERSION_REQUESTED_HEADER } from '../owned-headers.js';
import { answerInstead, translateAnswer } from './answers.js';
import {
  createTranslationContext,
  isJsonType,
  type RouteLabels,
  type TranslationFailure,
  type TranslationLimits,
} from './context.js';
import { forwardBody } from './requests.js';
import type { CompiledTranslations, RouteTranslation, VersionTranslation } from '../../translation/compile.js';
import { TranslationRefusal } from '../../translation/refusal.js';
import { pathBelowVersion, type ResourceMatch } from '../../versions/router.js';

/**
 * Serving a version declared as changes from the version that serves it (docs/declared-versions.md "Versions declared as
 * changes", "Translation that fails closed"): the backend is told which version was asked for, at the path the
 * serving version has the resource; request headers and JSON request bodies go forward (requests.ts); answers come
 * back with this version's status, headers and links, their JSON bodies translated backward (answers.ts) or
 * refused, never passed on untranslated. The upstream's ETag, encodings, ranges and locations are made to fit the
 * bytes and the version the client gets. Every route's options are built once, when its policy is activated.
 */

/** One version's one resource, served: the labels its failures are counted under, its options, its translation. */
export interface TranslatedRoute extends RouteLabels {
  readonly translation: RouteTranslation;
  readonly options: FastifyReplyFromHooks;
}

/** By version, then resource template: the routes of a policy's versions declared as changes. */
export type TranslatedRoutes = ReadonlyMap<number, ReadonlyMap<string, TranslatedRoute>>;

export interface TranslatedForwarding {
  /** The routes of a policy's translations (called when the policy is activated). */
  prepare(translations: CompiledTranslations): TranslatedRoutes;
  /**
   * Forwards a request on `route`: calls `send` with the reply-from options to use, the request body translated when
   * the resource's bodies change, or answers the request itself when it cannot be translated.
   */
  forward(
    request: FastifyRequest,
    reply: FastifyReply,
    route: TranslatedRoute,
    send: (options: FastifyReplyFromHooks) => void,
  ): void;
}

/**
 * Where the serving version answers a request path (its query kept when given): the path form with the
 * serving version's number under the request's own prefix (`/api/v1/orders/x` → `/api/v2/orders/x`), the
 * bare path in the path form of the serving version; where a `path` change moved the resource, at its new path.
 */
export function servedTarget(match: ResourceMatch, pathAndQuery: string, translation: RouteTranslation): string {
  const queryAt = pathAndQuery.indexOf('?');
  const path = queryAt === -1 ? pathAndQuery : pathAndQuery.slice(0, queryAt);
  const query = queryAt === -1 ? '' : pathAndQuery.slice(queryAt);
  const prefix = match.route.form === 'path' ? match.route.prefix : '';
  return `${prefix}/v${translation.served}${translation.target(pathBelowVersion(match, path))}${query}`;
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

/** A status whose answer has a body to translate, pass on, or refuse. */
export const hasBody = (status: number): boolean => status >= 200 && status !== 204 && status !== 205 && status !== 304;

/**
 * The translation of a version's requests and answers. `limits` are TRANSLATION_MAX_BYTES, TRANSLATION_MAX_DEPTH
 * and the budget of TRANSLATION_MAX_INFLIGHT_BYTES; `countFailure` counts each body not translated; `baseFor` gives
 * the options a resource is forwarded with when untranslated (the OpenAPI document's are its own).
 */
export function createTranslatedForwarding({
  limits,
  countFailure,
  baseFor,
  sentBody,
}: {
  limits: TranslationLimits;
  countFailure: (failure: TranslationFailure) => void;
  baseFor: (template: string) => FastifyReplyFromHooks;
  /** Each request body read as JSON before it goes forward (the field paths an authenticated consumer sends). */
  sentBody?: (request: FastifyRequest, body: unknown) => void;
}): TranslatedForwarding {
  const context = createTranslationContext(limits, countFailure, sentBody);

  function build(version: VersionTranslation, translation: RouteTranslation): TranslatedRoute {
    const base = baseFor(translation.template);
    const requested = String(translation.version);
    const route: RouteLabels = { version: translation.version, template: translation.template };
    // Bodies that change are other bytes than the serving version's: they are read as sent, tagged as this version's.
    const bodies = translation.requestBody !== undefined || translation.answerBodies;
    const prefix = `v${requested}-${version.digest}-`;
    const baseRequestHeaders = base.rewriteRequestHeaders;
    const baseHeaders = base.rewriteHeaders;
    const baseOnResponse = base.onResponse;
    const { requestHeaders, answerHeaders, linkHeader, location } = translation;

    const options: FastifyReplyFromHooks = {
      ...base,
      rewriteRequestHeaders(request, headers) {
        const rewritten = baseRequestHeaders === undefined ? headers : baseRequestHeaders(request, headers);
        rewritten[VERSION_REQUESTED_HEADER] = requested;
        // Checked before the request was sent on (`forward`): no two headers take one name here.
        if (requestHeaders !== undefined) requestHeaders(rewritten);
        if (!bodies) return rewritten;
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
        for (const name of ['location', 'content-location']) {
          const value = rewritten[name];
          if (typeof value === 'string') rewritten[name] = location(value);
        }
        if (!bodies) return rewritten;
        if (rewritten.etag !== undefined) {
          // The upstream's tag names its own bytes: this version's are other bytes, made from them by these changes.
          const opaque = typeof rewritten.etag === 'string' ? opaqueOf(rewritten.etag) : undefined;
          if (opaque === undefined) delete rewritten.etag;
          else rewritten.etag = `W/"${prefix}${opaque}"`;
        }
        if (rewritten['accept-ranges'] !== undefined) delete rewritten['accept-ranges'];
        return rewritten;
      },
      onResponse(request, reply, raw) {
        const res = raw as unknown as UpstreamResponse;
        const ours = reply as FastifyReply;
        const plan = translation.answer(res.statusCode);
        try {
          if (plan.status !== res.statusCode) void ours.code(plan.status);
          if (answerHeaders !== undefined) renameAnswerHeaders(ours, answerHeaders);
          const upstreamLink = res.headers.link;
          if (linkHeader !== undefined && upstreamLink !== undefined) {
            // The policy's own Link (successor, deprecation) first, then the upstream's links as this version's.
            const own = ours.getHeader('link');
            const links = [String(upstreamLink)].map(linkHeader);
            void ours.header('link', own === undefined ? links.join(', ') : [String(own), ...links].join(', '));
          }
        } catch (error) {
          res.stream.destroy();
          const reason = error instanceof TranslationRefusal ? error.reason : 'collision';
          context
            .refused(request as FastifyRequest, route, 'response', reason)
            .warn(
              { version: route.version, resource: route.template, reason, details: (error as Error).message },
              'translation: the upstream answer cannot be translated',
            );
          answerInstead(request as FastifyRequest, ours, 502);
          return;
        }
        const type = res.headers['content-type'];
        const success = res.statusCode >= 200 && res.statusCode < 300;
        if (
          request.method === 'HEAD' ||
          plan.body === undefined ||
          !hasBody(res.statusCode) ||
          // Not JSON (text/csv, an image): no change names its fields, so it passes as it came.
          (type !== undefined && !isJsonType(String(type))) ||
          // An error without a type is no envelope of this API's: it passes as it came.
          (type === undefined && !success)
        ) {
          // A HEAD's length would be the serving version's body's, which this version's differs from.
          if (request.method === 'HEAD' && bodies) ours.removeHeader('content-length');
          if (baseOnResponse !== undefined) baseOnResponse(request, reply, raw);
          else void ours.send(res.stream);
          return;
        }
        translateAnswer(context, request as FastifyRequest, ours, route, res, plan.body, type !== undefined);
      },
    };
    return { ...route, translation, options };
  }

  return {
    prepare(translations) {
      const routes = new Map<number, Map<string, TranslatedRoute>>();
      for (const [version, translation] of translations.versions) {
        routes.set(
          version,
          new Map([...translation.routes].map(([template, route]) => [template, build(translation, route)])),
        );
      }
      return routes;
    },
    forward(request, reply, route, send) {
      const { translation, options } = route;
      const clash = translation.requestHeaders === undefined ? undefined : headerClash(request, translation);
      if (clash !== undefined) {
        context.refused(request, route, 'request', 'collision');
        void sendError(reply, 400, 'bad request', clash);
        return;
      }
      const body = request.body;
      const apply = translation.requestBody;
      // An empty body is no body: nothing to translate, nothing to refuse.
      if (apply === undefined || body === undefined || (Buffer.isBuffer(body) && body.length === 0)) {
        send(Buffer.isBuffer(body) ? { ...options, body, contentType: request.raw.headers['content-type'] } : options);
        return;
      }
      forwardBody(context, request, reply, route, apply, send);
    },
  };
}

/** The upstream's headers renamed as this version's on the reply; throws a collision refusal. */
function renameAnswerHeaders(reply: FastifyReply, rename: NonNullable<RouteTranslation['answerHeaders']>): void {
  const headers = reply.getHeaders() as Record<string, string | string[] | number | undefined>;
  const before = new Set(Object.keys(headers));
  rename(headers);
  for (const name of before) if (headers[name] === undefined) reply.removeHeader(name);
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !before.has(name)) void reply.header(name, value);
  }
}

/** Why a request's headers cannot be renamed as the serving version's (two take one name), or undefined. */
function headerClash(request: FastifyRequest, translation: RouteTranslation): string | undefined {
  const headers: Record<string, string | string[] | number | undefined> = { ...request.raw.headers };
  try {
    translation.requestHeaders?.(headers);
    return undefined;
  } catch (error) {
    return error instanceof TranslationRefusal ? error.message : String(error);
  }
}
