import type { FastifyInstance } from 'fastify';
import type { Clock } from '@version-router/platform/clock';
import { sendError } from '@version-router/platform/errors';
import type { MigrationGuides } from '../../changes/guides.js';
import { sendGuideUnavailable } from '../../changes/routes.js';
import { asPage } from '../../html/self-contained.js';
import { wantsHtml } from '../../html/wants-html.js';
import type { PolicyInForce } from '../../versions/in-force.js';
import { checkApiKey, refuseKey } from '../authenticate.js';
import type { KeyCache } from '../key-cache.js';
import type { ConsumerUsageReader } from '../store.js';
import { storeUnavailableHandler } from '../../database/unavailable.js';
import { consumerReports } from './model.js';
import { DEPRECATIONS_PAGE_CSP, renderDeprecationsPage } from './page.js';
import { ACTIVE_WINDOW_MS } from './version-consumers.js';

export interface DeprecationsRoutesOptions {
  policies: PolicyInForce;
  keys: KeyCache;
  reader: ConsumerUsageReader;
  guides: MigrationGuides;
  clock: Clock;
}

/** `?since=`: a date (midnight UTC) or an RFC 3339 date-time with an offset, as the policy file writes instants. */
const SINCE = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2}))?$/;
const SINCE_RULE = 'since must be a date (2026-11-01) or an RFC 3339 date-time (2026-11-01T09:00:00Z)';

/** The instant `?since=` names, undefined when absent, NaN when it names none. */
function sinceOf(query: unknown): number | undefined {
  const since = (query as Record<string, unknown> | undefined)?.since;
  if (since === undefined) return undefined;
  return typeof since === 'string' && SINCE.test(since) ? Date.parse(since) : Number.NaN;
}

/**
 * `GET /deprecations` (API port): the calling consumer's own report, for the consumer its API-Key names
 * (docs/behaviour.md#each-consumers-deprecation-report): the deprecated or removed versions it called or is pinned
 * to, each with the operations it still calls (counted since `?since=`, 30 days back by default, or its last move
 * when later; activity.ts), their last call and the breaking changes that touch them, or that it is done with the
 * version. JSON, or a page for `Accept: text/html`. It is one consumer's and changes with every request: never
 * stored by a cache, and varied on the key. 401 without a valid key (as a versioned request is refused), 400 for a
 * `since` that is no instant, 503 while the store cannot be read, 502/504 while the backend's OpenAPI documents
 * cannot be had.
 */
export async function deprecationsRoutes(
  app: FastifyInstance,
  { policies, keys, reader, guides, clock }: DeprecationsRoutesOptions,
): Promise<void> {
  app.setErrorHandler(storeUnavailableHandler);
  app.get('/deprecations', async (request, reply) => {
    void reply.header('cache-control', 'no-store').header('vary', 'API-Key, Accept');
    const check = checkApiKey(request, keys);
    if (check === 'none' || check === 'invalid') return refuseKey(reply, check);
    const asked = sinceOf(request.query);
    if (Number.isNaN(asked)) return sendError(reply, 400, 'bad request', SINCE_RULE);
    const nowMs = clock();
    const sinceMs = asked ?? nowMs - ACTIVE_WINDOW_MS;
    const policy = policies.current.policy;
    const consumerId = check.consumerId;
    const outcome = await consumerReports({
      consumerId,
      reader,
      guides,
      policy,
      nowMs,
      sinceMs,
      requestId: request.id,
    });
    if (!outcome.ok) return sendGuideUnavailable(request, reply, outcome.status, outcome.reason);
    const report = {
      consumer: consumerId,
      pinned_version: outcome.pinnedVersion,
      requests_since: new Date(outcome.countedFromMs).toISOString(),
      as_of: new Date(nowMs).toISOString(),
      versions: outcome.versions,
    };
    if (wantsHtml(request.headers.accept))
      return asPage(reply, DEPRECATIONS_PAGE_CSP).send(renderDeprecationsPage(report, nowMs));
    return report;
  });
}
