import type { FastifyInstance } from 'fastify';
import { asPage } from '../html/self-contained.js';
import type { PolicyInForce } from '../versions/in-force.js';
import { STATUS_PAGE_CSP, consumerVersions, renderStatusPage } from './page.js';
import type { VersionUsage } from '../accounting/usage.js';
import { noticesSection, type NoticesStatusSources } from './notices.js';

export interface StatusRoutesOptions {
  policies: PolicyInForce;
  usage: VersionUsage;
  /** The host name the page names as its replica. */
  replica: string;
  /** Where the page reads the deprecation notices' figures; absent, it has no such part. */
  notices?: NoticesStatusSources;
}

/**
 * Admin-port routes for operators: `GET /consumers` (who still calls each deprecated or removed
 * version, as JSON for scripts) and `GET /` (the same and the versions' lifecycle, as a page).
 */
export async function statusRoutes(admin: FastifyInstance, { policies, usage, replica, notices }: StatusRoutesOptions): Promise<void> {
  admin.get('/consumers', async (_request, reply) => {
    void reply.header('cache-control', 'no-store');
    const versions = consumerVersions(policies.current.policy, usage.consumers, usage.clock());
    return { versions: usage.consumers.report(versions) };
  });

  admin.get('/', async (_request, reply) => {
    // It names clients and changes every second: no shared or stale copy.
    void asPage(reply, STATUS_PAGE_CSP).header('cache-control', 'no-store');
    const policy = policies.current.policy;
    return renderStatusPage(policy, usage, replica, notices === undefined ? '' : await noticesSection(policy, usage.clock(), notices));
  });
}
