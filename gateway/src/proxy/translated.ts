import type { FastifyReplyFromHooks } from '@fastify/reply-from';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { sendError } from '@version-router/platform/errors';
import type { UpstreamResponse } from './backend.js';
import { API_VERSION_REQUESTED_HEADER as VERSION_REQUESTED_HEADER } from './owned-headers.js';
import type { ResourceMatch } from '../versions/router.js';
import type { ResourceTranslation, VersionTranslation } from '../translation/engine.js';

/**
 * Serving a version declared as changes from the version that serves it (docs/behaviour.md "Versions
 * declared as changes"): the backend is told which version was asked for; on a resource whose bodies change,
 * JSON request bodies go forward, 2xx JSON responses are read whole and go backward, and the upstream's ETag
 * and encodings are made to fit the bytes the client gets. Every other answer passes as the base options do.
 */

const JSON_TYPE = /^application\/json\s*(?:;|$)/i;
/** The backend decodes a body as JSON whatever its type; the gateway translates one that says it is JSON. */
const JSON_REQUEST_TYPE = /json/i;
const METHODS_WITH_BODIES: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH']);

export interface TranslatedForwarding {
  /** reply.from options for a request to `version`, served as `translation` says, on `template`. */
  optionsFor(
    translation: VersionTranslation,
    version: number,
    template: string,
    base: FastifyReplyFromHooks,
  ): FastifyReplyFromHooks;
  /**
   * Calls `forward` with the options to use: with the request body translated when it is JSON on a resource whose
   * bodies change (read whole first when it came as a stream), else with the body as it came.
   */
  withRequestBody(
    request: FastifyRequest,
    reply: FastifyReply,
    options: FastifyReplyFromHooks,
    translation: VersionTranslation,
    template: string,
    forward: (options: FastifyReplyFromHooks) => void,
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
 * If-None-Match as the upstream knows its tags: ours (`W/"v1-<changes>-<upstream>"`) turned back into the
 * upstream's, any other dropped, since it names no bytes this version ever sent; `*` kept.
 */
function upstreamIfNoneMatch(value: string, prefix: string): string | undefined {
  if (value.trim() === '*') return '*';
  const tags = value
    .split(',')
    .map(opaqueOf)
    .filter((opaque): opaque is string => opaque?.startsWith(prefix) === true)
    .map((opaque) => `"${opaque.slice(prefix.length)}"`);
  return tags.length === 0 ? undefined : tags.join(', ');
}

/** Reads a stream whole up to `limit` bytes; `undefined` when it is longer (the stream is then destroyed). */
function readUpTo(stream: Readable, limit: number, done: (body: Buffer | undefined, failed: boolean) => void): void {
  const chunks: Buffer[] = [];
  let received = 0;
  let finished = false;
  const finish = (body: Buffer | undefined, failed: boolean) => {
    if (finished) return;
    finished = true;
    done(body, failed);
  };
  stream.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (received > limit) {
      stream.destroy();
      finish(undefined, false);
      return;
    }
    chunks.push(chunk);
  });
  stream.once('end', () => finish(Buffer.concat(chunks, received), false));
  stream.once('error', () => finish(undefined, true));
}

/** Parses JSON, or undefined when the bytes are none. */
function parsed(bytes: Buffer): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(bytes.toString('utf8')) as unknown };
  } catch {
    return undefined;
  }
}

/** Our 502 in place of an upstream answer whose headers are already on the reply. */
function badGateway(reply: FastifyReply): void {
  for (const name of ['content-length', 'transfer-encoding', 'content-encoding', 'etag']) reply.removeHeader(name);
  void sendError(reply, 502, 'bad gateway');
}

/** The translation of a version's answers and requests; `maxBytes` is TRANSLATION_MAX_BYTES. */
export function createTranslatedForwarding({ maxBytes }: { maxBytes: number }): TranslatedForwarding {
  const cache = new WeakMap<VersionTranslation, Map<string, FastifyReplyFromHooks>>();

  function build(
    translation: VersionTranslation,
    version: number,
    template: string,
    base: FastifyReplyFromHooks,
  ): FastifyReplyFromHooks {
    const requested = String(version);
    const bodies = translation.resources.get(template);
    const baseRequestHeaders = base.rewriteRequestHeaders;
    if (bodies === undefined) {
      // Same bytes as the serving version's: only the backend is told what was asked for.
      return {
        ...base,
        rewriteRequestHeaders(request, headers) {
          const rewritten = baseRequestHeaders === undefined ? headers : baseRequestHeaders(request, headers);
          rewritten[VERSION_REQUESTED_HEADER] = requested;
          return rewritten;
        },
      };
    }
    const prefix = `v${requested}-${translation.digest}-`;
    const baseHeaders = base.rewriteHeaders;
    const baseOnResponse = base.onResponse;
    return {
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
        const conditional = rewritten['if-none-match'];
        if (conditional !== undefined) rewritten['if-none-match'] = upstreamIfNoneMatch(String(conditional), prefix);
        return rewritten;
      },
      rewriteHeaders(headers, request) {
        const rewritten = baseHeaders === undefined ? headers : baseHeaders(headers, request);
        const opaque = typeof rewritten.etag === 'string' ? opaqueOf(rewritten.etag) : undefined;
        // The upstream's tag names its own bytes: this version's are other bytes, made from them by these changes.
        if (rewritten.etag !== undefined) rewritten.etag = opaque === undefined ? undefined : `W/"${prefix}${opaque}"`;
        return rewritten;
      },
      onResponse(request, reply, raw) {
        const res = raw as unknown as UpstreamResponse;
        const type = res.headers['content-type'];
        const translated =
          res.statusCode >= 200 &&
          res.statusCode < 300 &&
          res.statusCode !== 204 &&
          request.method !== 'HEAD' &&
          typeof type === 'string' &&
          JSON_TYPE.test(type);
        if (!translated) {
          // A HEAD's length would be the serving version's body's, which this version's differs from.
          if (request.method === 'HEAD') (reply as FastifyReply).removeHeader('content-length');
          if (baseOnResponse !== undefined) baseOnResponse(request, reply, raw);
          else void reply.send(res.stream);
          return;
        }
        sendTranslated(request as FastifyRequest, reply as FastifyReply, res, bodies);
      },
    };
  }

  function sendTranslated(
    request: FastifyRequest,
    reply: FastifyReply,
    res: UpstreamResponse,
    bodies: ResourceTranslation,
  ): void {
    const encoding = res.headers['content-encoding'];
    if (encoding !== undefined && encoding !== 'identity') {
      res.stream.destroy();
      const message = 'translation: the upstream sent an encoded body, which cannot be translated';
      request.log.warn({ contentEncoding: encoding }, message);
      badGateway(reply);
      return;
    }
    if (Number(res.headers['content-length']) > maxBytes) {
      res.stream.destroy();
      warnTooLarge(request);
      badGateway(reply);
      return;
    }
    readUpTo(res.stream, maxBytes, (bytes, failed) => {
      if (failed) {
        // Nothing of the body was sent yet: a failed upstream is a 502 as any other.
        badGateway(reply);
        return;
      }
      if (bytes === undefined) {
        warnTooLarge(request);
        badGateway(reply);
        return;
      }
      const body = parsed(bytes);
      if (body === undefined) {
        request.log.warn('translation: the upstream body is not valid JSON, though its Content-Type says so');
        badGateway(reply);
        return;
      }
      bodies.backward(body.value);
      reply.removeHeader('content-length').removeHeader('transfer-encoding').removeHeader('content-encoding');
      // A Buffer keeps the upstream's Content-Type as it came (a string would get Fastify's charset appended).
      void reply.send(Buffer.from(JSON.stringify(body.value)));
    });
  }

  function warnTooLarge(request: FastifyRequest): void {
    const message = `translation: the upstream body is larger than TRANSLATION_MAX_BYTES (${maxBytes} bytes)`;
    request.log.warn({ limitBytes: maxBytes }, message);
  }

  return {
    optionsFor(translation, version, template, base) {
      let byTemplate = cache.get(translation);
      if (byTemplate === undefined) cache.set(translation, (byTemplate = new Map<string, FastifyReplyFromHooks>()));
      let options = byTemplate.get(template);
      if (options === undefined) byTemplate.set(template, (options = build(translation, version, template, base)));
      return options;
    },
    withRequestBody(request, reply, options, translation, template, forward) {
      const bodies = translation.resources.get(template);
      const type = request.raw.headers['content-type'];
      const body = request.body;
      const json = type !== undefined && JSON_REQUEST_TYPE.test(type);
      if (bodies === undefined || !METHODS_WITH_BODIES.has(request.method) || !json) {
        forward(Buffer.isBuffer(body) ? { ...options, body, contentType: type } : options);
        return;
      }
      const translate = (bytes: Buffer) => {
        const value = parsed(bytes);
        // Not JSON: sent as it came, for the backend's own 400.
        if (value !== undefined) bodies.forward(value.value);
        forward({ ...options, body: value === undefined ? bytes : JSON.stringify(value.value), contentType: type });
      };
      if (Buffer.isBuffer(body)) {
        translate(body);
        return;
      }
      readUpTo(body as Readable, maxBytes, (bytes, failed) => {
        // A client that went away: nothing to answer.
        if (failed) return;
        if (bytes === undefined) {
          const details = `a translated request body is read whole, up to ${maxBytes} bytes`;
          void sendError(reply, 413, 'payload too large', details);
          return;
        }
        translate(bytes);
      });
    },
  };
}
