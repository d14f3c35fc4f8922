import type { FastifyReplyFromHooks } from '@fastify/reply-from';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Pool } from 'undici';
import type { Clock } from '@version-router/platform/clock';
import { sendError } from '@version-router/platform/errors';
import { checkApiKey, refuseKey, refusedByConsumerRules } from '../consumers/authenticate.js';
import type { KeyCache } from '../consumers/key-cache.js';
import type { Ledger } from '../consumers/ledger.js';
import { withPin } from '../consumers/pins.js';
import { backendReplyOptions, copyEndToEndHeaders } from '../proxy/backend.js';
import { setUpForwarding, withRequestBody } from '../proxy/forwarding.js';
import { POLICY_HEADERS, VERSION_REQUEST_HEADER } from '../versions/headers.js';
import { OPENAPI_RESOURCE, openApiReplyOptions } from './openapi.js';
import type { PolicyInForce } from '../versions/in-force.js';
import { successorPath } from '../versions/router.js';
import { servedTarget, type TranslatedForwarding, type TranslatedRoutes } from '../proxy/translated/forwarding.js';
import { isJsonType } from '../proxy/translated/context.js';
import { traceServed, traceVersion } from '../accounting/trace.js';
import type { Comparisons } from '../comparison/comparisons.js';
import type { RouteTranslation } from '../translation/compile.js';
import { recordsFieldsOf, type RequestFields } from '../consumers/request-fields.js';

export interface VersionedResourcesOptions {
  policies: PolicyInForce<TranslatedRoutes>;
  /** Injected so tests can stand before, at and after any lifecycle instant. */
  clock: Clock;
  backendUrl: string;
  pool: Pool;
  /** The consumers' keys, checked from memory on every request. */
  keys: KeyCache;
  /** First uses of each version, for closed_to_new. */
  ledger: Ledger;
  /** How a version declared as changes is served (proxy/translated/forwarding.ts). */
  translated: TranslatedForwarding;
  /** The comparison of compared versions' answers with their successors' (comparison/comparisons.ts). */
  comparisons: Comparisons;
  /** The field paths of authenticated requests' JSON bodies, per consumer and operation. */
  requestFields: RequestFields;
}

const BACKEND_HEADERS_NOT_PASSED: ReadonlySet<string> = new Set(POLICY_HEADERS);

/**
 * The policy owns its headers on a versioned response: the backend's copies are removed, so they can
 * never contradict it. Vary is merged, since the backend may vary on something else too.
 */
const keepPolicyHeaders: FastifyReplyFromHooks['rewriteHeaders'] = (backendHeaders, request) => {
  const headers = copyEndToEndHeaders(backendHeaders, BACKEND_HEADERS_NOT_PASSED);
  const vary = (request as FastifyRequest).apiVersion?.vary ?? '';
  if (vary !== '') headers.vary = headers.vary === undefined ? vary : `${headers.vary}, ${vary}`;
  return headers;
};

const versionedReplyOptions: FastifyReplyFromHooks = { ...backendReplyOptions, rewriteHeaders: keepPolicyHeaders };

/** A path with a query (`kept`, no "?"), or the path alone when nothing is kept. */
const withQuery = (path: string, kept: string): string => (kept === '' ? path : `${path}?${kept}`);
const documentReplyOptions = openApiReplyOptions(versionedReplyOptions);

/** The options a resource is forwarded with: the OpenAPI document's are its own (annotated, derived). */
export const replyOptionsFor = (template: string): FastifyReplyFromHooks =>
  template === OPENAPI_RESOURCE ? documentReplyOptions : versionedReplyOptions;

/**
 * The query without the version parameter (`kept`, no "?"), given to reply-from as is: it would otherwise
 * put the request's own query back when the target has none, and pass a target's query through URL
 * parsing, which re-encodes some bytes. Built only for requests that use the query scheme.
 */
const keepingQuery = (options: FastifyReplyFromHooks, kept: string): FastifyReplyFromHooks => ({
  ...options,
  queryString: () => kept,
});

/**
 * Every resource the policy lists, in each of its forms: `/v{n}{resource}` and `/api/v{n}{resource}`
 * forwarded as requested, and `{resource}` (named by `API-Version`, a query parameter or a media type,
 * docs/versions.md#version-schemes) forwarded to `/v{chosen}{resource}`.
 * One catch-all route matches them by pattern against the policy in force, so a reload can add a
 * version or a resource. Every method is forwarded; the backend's own 404/405 come back with the
 * version headers. Paths that are no versioned resource get the ordinary 404/405.
 * An API-Key that is no valid key is a 401 before anything else; the version's own refusals (400, 406, 410)
 * come next, then its consumer rules (docs/consumers.md#consumers-and-api-keys); every answer carries the
 * version's headers.
 */
export async function versionedResources(
  app: FastifyInstance,
  {
    policies,
    clock,
    backendUrl,
    pool,
    keys,
    ledger,
    translated,
    comparisons,
    requestFields,
  }: VersionedResourcesOptions,
): Promise<void> {
  await setUpForwarding(app, { backendUrl, pool });
  comparisons.register(app);

  // Synchronous (no promise per request), so it must not return the reply: Fastify would send it.
  app.all('/*', (request: FastifyRequest, reply: FastifyReply): void => {
    const { policy, router, translatedRoutes } = policies.current;
    const url = request.url;
    const queryAt = url.indexOf('?');
    const path = queryAt === -1 ? url : url.slice(0, queryAt);
    const match = router.match(path);
    if (match === null) {
      reply.callNotFound();
      return;
    }
    // What the request names in each enabled scheme; a scheme that is off is not even read.
    const { schemes } = policy;
    const rawHeaders = request.raw.headers;
    const header = schemes.header ? (rawHeaders[VERSION_REQUEST_HEADER] as string | undefined) : undefined;
    const query = schemes.query && queryAt !== -1 ? schemes.queryVersion(url, queryAt) : undefined;
    const mediaType = schemes.mediaType ? schemes.mediaTypeVersion(rawHeaders.accept) : undefined;
    const nowMs = clock();
    const pathVersion = match.route.form === 'path' ? match.versionLabel : undefined;
    const named = policy.resolve(pathVersion, header, query, mediaType, nowMs);
    if (named === undefined) {
      // A path version the policy does not list (`/v9/…`).
      reply.callNotFound();
      return;
    }
    const check = checkApiKey(request, keys);
    const answer = withPin(policy, named, check, nowMs);
    if (answer.version !== null && !match.route.servedIn(answer.version)) {
      // A resource the policy lists for other versions only (`resources`): no path of this one.
      reply.callNotFound();
      return;
    }
    request.apiVersion = answer;
    request.routeLabel = match.route.labels.get(match.versionLabel) ?? null;
    const trace = request.trace;
    if (trace !== null) traceVersion(trace, answer, request.consumer);
    const { headers } = answer;
    for (let i = 0; i < headers.length; i++) {
      const [name, value] = headers[i] as readonly [string, string];
      void reply.header(name, value);
    }
    if (answer.successor !== null) {
      void reply.header(
        'link',
        `<${successorPath(match, path, answer.version as number, answer.successor)}>; rel="successor-version"` +
          answer.extraLinks,
      );
    }
    if (check === 'invalid') {
      void refuseKey(reply, check);
      return;
    }
    if (answer.failure !== null) {
      void sendError(reply, answer.failure.status, answer.failure.error, answer.failure.details);
      return;
    }
    if (refusedByConsumerRules(request, reply, answer, check, ledger)) return;
    const translatedRoute =
      translatedRoutes.size === 0
        ? undefined
        : translatedRoutes.get(answer.version as number)?.get(match.route.template);
    if (trace !== null) traceServed(trace, answer.version as number, translatedRoute?.translation);
    // An authenticated request's JSON body held whole: its field paths, unless its translation reads them. Only on a
    // version with a successor, checked first: the others pay nothing (docs/consumers.md#upgrade-preview).
    if (recordsFieldsOf(answer)) {
      const body = request.body;
      if (
        request.consumer !== null &&
        Buffer.isBuffer(body) &&
        translatedRoute?.translation.requestBody === undefined
      ) {
        const type = request.raw.headers['content-type'];
        if (type !== undefined && isJsonType(type)) requestFields.sentBytes(request, body);
      }
    }
    if (translatedRoute !== undefined) {
      // A version declared as changes: its serving version answers (docs/declared-versions.md#versions-declared-as-changes).
      const target = servedTarget(match, query === undefined ? url : path, translatedRoute.translation);
      const kept = query === undefined ? undefined : schemes.queryWithoutVersion(url, queryAt);
      translated.forward(request, reply, translatedRoute, (options) => {
        void reply.from(target, kept === undefined ? options : keepingQuery(options, kept));
      });
      return;
    }
    const base = replyOptionsFor(match.route.template);
    let options = withRequestBody(request, base);
    if (base === versionedReplyOptions) {
      // Where a translated route would forward the request for the version serving it, the query as kept.
      const successorTarget = (route: RouteTranslation): string =>
        query === undefined
          ? servedTarget(match, url, route)
          : withQuery(servedTarget(match, path, route), schemes.queryWithoutVersion(url, queryAt));
      const version = answer.version as number;
      options = comparisons.watch(request, policy, version, match.route.template, options, successorTarget);
    }
    // The path form goes on as requested (undefined: the request's own path and query), so the
    // backend's `/api` form answers its own text/plain 404; the bare path maps to the path form.
    // A version query parameter is the gateway's: it is taken out, the rest of the query kept as sent.
    if (query !== undefined) {
      void reply.from(
        match.route.form === 'path' ? path : `/v${answer.version}${path}`,
        keepingQuery(options, schemes.queryWithoutVersion(url, queryAt)),
      );
      return;
    }
    void reply.from(match.route.form === 'path' ? undefined : `/v${answer.version}${url}`, options);
  });
}
