import replyFrom, { type FastifyReplyFromHooks } from '@fastify/reply-from';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Pool } from 'undici';
import { sendError } from '../../../platform/src/errors.js';
import { backendReplyOptions, dropHopByHopHeaders, replyFromOptions } from '../proxy/backend.js';
import type { VersionMetrics } from '../versions/metrics.js';
import { VARY_VALUE, VERSION_HEADER, type PathPrefix, type Resolution, type VersionPolicy } from '../versions/policy.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The policy's answer for an order request, for the metrics and the consumer log. */
    apiVersion: Resolution | null;
  }
}

export interface OrderRoutesOptions {
  policy: VersionPolicy;
  /** Epoch milliseconds; injected so tests can stand before, at and after a sunset. */
  clock: () => number;
  metrics: VersionMetrics;
  backendUrl: string;
  pool: Pool;
}

const PREFIXES: readonly PathPrefix[] = ['', '/api'];

/**
 * The gateway owns the version headers: the backend's own, if it sent any, must not contradict the
 * policy. Vary is merged, since the backend may vary on something else too.
 */
const keepPolicyHeaders: FastifyReplyFromHooks['rewriteHeaders'] = (backendHeaders, request) => {
  const headers = dropHopByHopHeaders(backendHeaders, request);
  headers.vary = headers.vary === undefined ? VARY_VALUE : `${headers.vary}, ${VARY_VALUE}`;
  if (headers.deprecation !== undefined) delete headers.deprecation;
  if (headers.sunset !== undefined) delete headers.sunset;
  if (headers.link !== undefined) delete headers.link;
  return headers;
};

const orderReplyOptions: FastifyReplyFromHooks = { ...backendReplyOptions, rewriteHeaders: keepPolicyHeaders };

/**
 * SPEC "Orders" and "Header-selected version": `{prefix}/v{n}/orders/{id}` for the policy's versions
 * (other versions are unmatched: JSON 404) and `/orders/{id}` with `API-Version`. The policy decides;
 * this only writes its answer and proxies what is to be served.
 */
export const orderRoutes: FastifyPluginAsync<OrderRoutesOptions> = async (app, { policy, clock, metrics, backendUrl, pool }) => {
  await app.register(replyFrom, replyFromOptions(backendUrl, pool));
  app.decorateRequest('apiVersion', null);

  // Handlers are synchronous (no promise per request) and so must not return the reply: Fastify would send it.
  function answer(request: FastifyRequest, reply: FastifyReply, resolution: Resolution, prefix: PathPrefix, upstreamPath?: string): void {
    request.apiVersion = resolution;
    void reply.header('vary', VARY_VALUE);
    if (resolution.deprecation) void reply.header('deprecation', 'true');
    if (resolution.sunset !== undefined) void reply.header('sunset', resolution.sunset);
    const link = resolution.successorLink(prefix, (request.params as { id: string }).id);
    if (link !== undefined) void reply.header('link', link);
    const { failure } = resolution;
    if (failure !== undefined) void sendError(reply, failure.status, failure.error, failure.details);
    else void reply.from(upstreamPath, orderReplyOptions);
  }

  const versionHeader = (request: FastifyRequest) => request.headers[VERSION_HEADER] as string | undefined;

  for (const version of policy.versions) {
    for (const prefix of PREFIXES) {
      // Forwarded as requested (undefined source = the request's own path and query), so the backend's
      // `/api` form answers its text/plain 404 as SPEC says.
      app.get(`${prefix}/v${version.version}/orders/:id`, (request, reply) => {
        answer(request, reply, policy.resolvePath(version, versionHeader(request), clock()), prefix);
      });
    }
  }

  // The header form maps to the backend's bare path form of the chosen version.
  const upstreamPrefix = new Map(policy.versions.map(({ version }) => [version, `/v${version}`]));
  app.get('/orders/:id', (request, reply) => {
    const resolution = policy.resolveHeader(versionHeader(request), clock());
    const upstream = resolution.version === undefined ? undefined : `${upstreamPrefix.get(resolution.version)}${request.url}`;
    answer(request, reply, resolution, '', upstream);
  });

  app.addHook('onResponse', (request, reply, done) => {
    const resolution = request.apiVersion;
    if (resolution !== null) {
      metrics.count(resolution, reply.statusCode);
      if (resolution.onRetiringVersion) {
        // Issue 4: names the consumers who still have to migrate (who to tell before the sunset).
        request.log.info(
          {
            version: resolution.version,
            // "default" marks clients that send no API-Version and will move when default_version does.
            selectedBy: resolution.selectedBy,
            route: request.routeOptions.url,
            status: reply.statusCode,
            userAgent: request.headers['user-agent'],
            clientId: request.headers['x-client-id'],
          },
          'deprecated api version used',
        );
      }
    }
    done();
  });
};
