import type { FastifyReplyFromHooks } from '@fastify/reply-from';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { UpstreamResponse } from '../backend.js';
import { API_VERSION_REQUESTED_HEADER as VERSION_REQUESTED_HEADER } from '../owned-headers.js';
import { translateAnswer } from './answers.js';
import {
  createTranslationContext,
  isJsonType,
  type RouteLabels,
  type TranslationFailure,
  type TranslationLimits,
} from './context.js';
import { forwardBody } from './requests.js';
import type { ResourceTranslation, VersionTranslation } from '../../translation/engine.js';
import type { ResourceMatch } from '../../versions/router.js';

/**
 * Serving a version declared as changes from the version that serves it (docs/behaviour.md "Versions declared as
 * changes", "Translation that fails closed"): the backend is told which version was asked for; on a resource whose
 * bodies change, JSON request bodies go forward (requests.ts) and 2xx JSON answers go backward (answers.ts), or
 * are refused, never passed on untranslated. The upstream's ETag, encodings, ranges and locations are made to fit
 * the bytes and the version the client gets. Every other answer passes as the base options do.
 */

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

/** A request's 2xx answer that carries a body to translate, pass on, or refuse. */
const hasTranslatableStatus = (status: number): boolean =>
  status >= 200 && status < 300 && status !== 204 && status !== 205;

/** What one version's requests on one resource template are forwarded with, built on its first request. */
interface Route extends RouteLabels {
  readonly options: FastifyReplyFromHooks;
  /** Undefined on a resource whose bodies do not change: it is only forwarded. */
  readonly bodies: ResourceTranslation | undefined;
}

/**
 * The translation of a version's requests and answers. `limits` are TRANSLATION_MAX_BYTES, TRANSLATION_MAX_DEPTH
 * and the budget of TRANSLATION_MAX_INFLIGHT_BYTES; `countFailure` counts each body not translated.
 */
export function createTranslatedForwarding({
  limits,
  countFailure,
  sentBody,
}: {
  limits: TranslationLimits;
  countFailure: (failure: TranslationFailure) => void;
  /** Each request body read as JSON before it goes forward (the field paths an authenticated consumer sends). */
  sentBody?: (request: FastifyRequest, body: unknown) => void;
}): TranslatedForwarding {
  const context = createTranslationContext(limits, countFailure, sentBody);
  const cache = new WeakMap<VersionTranslation, Map<string, Route>>();

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
        const type = res.headers['content-type'];
        if (
          request.method === 'HEAD' ||
          !hasTranslatableStatus(res.statusCode) ||
          // Not JSON (text/csv, an image): no change names its fields, so it passes as it came.
          (type !== undefined && !isJsonType(String(type)))
        ) {
          // A HEAD's length would be the serving version's body's, which this version's differs from.
          if (request.method === 'HEAD') ours.removeHeader('content-length');
          if (baseOnResponse !== undefined) baseOnResponse(request, reply, raw);
          else void ours.send(res.stream);
          return;
        }
        translateAnswer(context, request as FastifyRequest, ours, route, res, bodies, type !== undefined);
      },
    };
    return { ...route, options, bodies };
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
      forwardBody(context, request, reply, route, bodies, send);
    },
  };
}
