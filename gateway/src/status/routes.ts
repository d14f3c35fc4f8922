import type { FastifyInstance } from 'fastify';
import { sendError } from '@version-router/platform/errors';
import { asPage } from '../html/self-contained.js';
import { INVALID_AT, previewInstant } from '../versions/discovery.js';
import type { PolicyInForce } from '../versions/in-force.js';
import { STATUS_PAGE_CSP, consumerVersions, renderStatusPage } from './page.js';
import type { VersionUsage } from '../accounting/usage.js';
import type { ConsumerUsageReader } from '../consumers/store.js';
import type { NoticeStore } from '../notices/store.js';
import { readRegisteredConsumers } from './registered.js';
import { noticesSection, readNoticeFigures } from './notices.js';
import type { MigrationGuides } from '../changes/guides.js';
import type { Comparisons } from '../comparison/comparisons.js';
import type { RequestFieldsReader } from '../consumers/store.js';
import { readVerdicts } from './verdicts.js';
import { comparisonSection } from './comparison.js';

export interface StatusRoutesOptions {
  policies: PolicyInForce;
  usage: VersionUsage;
  /** The registered consumers' ledger and the request fields they sent, shared by every replica. */
  reader: ConsumerUsageReader & RequestFieldsReader;
  /** The host name the page names as its replica. */
  replica: string;
  /**
   * Where the page reads the deprecation notices' figures (the fleet's shared records); absent, it has no such part.
   */
  notices?: NoticeStore;
  /** Consumers holding a valid key per pinned version, fleet-wide, from memory (the key cache). */
  pinnedConsumers?: () => ReadonlyMap<number, number>;
  /** The migration guides each registered consumer's verdict for a move is judged by; absent, no verdicts. */
  guides?: MigrationGuides;
  /** This replica's comparisons of versions with `compare`; absent, no such part. */
  comparisons?: Comparisons;
}

/**
 * Admin-port routes for operators: `GET /consumers` (who still calls each deprecated or removed
 * version, by X-Client-Id or User-Agent as this replica counted, as JSON for scripts) and `GET /` (the
 * versions' lifecycle, their registered consumers from the shared store and the anonymous ones, as a page).
 */
export async function statusRoutes(
  admin: FastifyInstance,
  { policies, usage, reader, replica, notices, pinnedConsumers, guides, comparisons }: StatusRoutesOptions,
): Promise<void> {
  admin.get('/consumers', async (_request, reply) => {
    void reply.header('cache-control', 'no-store');
    const versions = consumerVersions(policies.current.policy, usage.consumers, usage.clock());
    return { versions: usage.consumers.report(versions) };
  });

  admin.get('/', async (request, reply) => {
    const { policy } = policies.current;
    const nowMs = usage.clock();
    // `?at=`: the lifecycle previewed at that instant (docs/versions.md#discovery), for today's consumers.
    const atMs = previewInstant(request.query);
    if (atMs === 'invalid') return sendError(reply, 400, 'invalid date', INVALID_AT);
    const listed = consumerVersions(policy, usage.consumers, atMs ?? nowMs);
    // Both reads at once, each bounded by the page's wait for the store: a slow store holds the page that long at most.
    const [registered, noticeFigures, verdicts] = await Promise.all([
      readRegisteredConsumers(reader, listed, policy.defaultAt(nowMs), nowMs, request.log),
      notices === undefined ? undefined : readNoticeFigures(notices, policy, nowMs, request.log),
      guides === undefined ? undefined : readVerdicts(reader, guides, policy, listed, nowMs, request),
    ]);
    // It names clients and changes every second: no shared or stale copy.
    void asPage(reply, STATUS_PAGE_CSP).header('cache-control', 'no-store');
    const noticeSections =
      noticeFigures === undefined ? undefined : noticesSection(policy, nowMs, registered, noticeFigures);
    return renderStatusPage({
      policy,
      usage,
      replica,
      registered,
      nowMs,
      noticeSections,
      pinned: pinnedConsumers?.(),
      atMs,
      verdicts,
      comparisonPart: comparisons === undefined ? undefined : comparisonSection(policy, comparisons),
    });
  });
}
