import type { FastifyInstance } from 'fastify';
import type { Clock } from '@version-router/platform/clock';
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

export interface DeprecationsRoutesOptions {
  policies: PolicyInForce;
  keys: KeyCache;
  reader: ConsumerUsageReader;
  guides: MigrationGuides;
  clock: Clock;
}

/**
 * `GET /deprecations` (API port): the calling consumer's own report, for the consumer its API-Key names
 * (docs/behaviour.md#each-consumers-deprecation-report): the deprecated or removed versions it called, each
 * operation with its all-time requests, last call and the breaking changes that touch it. JSON, or a page for
 * `Accept: text/html`. It is one consumer's and changes with every request: never stored by a cache, and
 * varied on the key. 401 without a valid key (as a versioned request is refused), 503 while the store cannot
 * be read, 502/504 while the backend's OpenAPI documents cannot be had.
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
    const nowMs = clock();
    const policy = policies.current.policy;
    const consumerId = check.consumerId;
    const outcome = await consumerReports({ consumerId, reader, guides, policy, nowMs, requestId: request.id });
    if (!outcome.ok) return sendGuideUnavailable(request, reply, outcome.status, outcome.reason);
    if (wantsHtml(request.headers.accept))
      return asPage(reply, DEPRECATIONS_PAGE_CSP).send(renderDeprecationsPage(consumerId, outcome.versions, nowMs));
    return { consumer: consumerId, pinned_version: check.pin, versions: outcome.versions };
  });
}
