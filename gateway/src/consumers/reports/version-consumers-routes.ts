import type { FastifyInstance } from 'fastify';
import type { Clock } from '@version-router/platform/clock';
import { sendError } from '@version-router/platform/errors';
import type { PolicyInForce } from '../../versions/in-force.js';
import { versionInPath } from '../../versions/policy.js';
import type { ConsumerUsageReader } from '../store.js';
import { storeUnavailableHandler } from '../../database/unavailable.js';
import { versionConsumers, withNoticesSent, type DeliveredNotice } from './version-consumers.js';

export interface VersionConsumersRoutesOptions {
  policies: PolicyInForce;
  reader: ConsumerUsageReader;
  /** The notices about a version delivered so far, fleet-wide (the notice store's); absent, this gateway sends none. */
  noticesSentFor?: (version: number) => Promise<readonly DeliveredNotice[]>;
  clock: Clock;
}

const noneSent = async (): Promise<readonly DeliveredNotice[]> => [];

/**
 * `GET /versions/{n}/consumers` (admin port): who to reach about version n, every authenticated consumer of it
 * across the fleet with its contact, its requests in the last 30 days, its last call and the notices about
 * the version that reached it, and apart from them the consumers it turned away as closed to new consumers
 * (docs/consumers.md#who-calls-a-version). 404 `not found` for a version the policy does
 * not list; 503 while
 * the store cannot be read. It hands out people's addresses, so it is kept like the consumer registry: behind
 * ADMIN_TOKEN, and without one on a loopback admin listener only.
 */
export async function versionConsumersRoutes(
  admin: FastifyInstance,
  { policies, reader, noticesSentFor = noneSent, clock }: VersionConsumersRoutesOptions,
): Promise<void> {
  admin.setErrorHandler(storeUnavailableHandler);
  admin.get<{ Params: { version: string } }>(
    '/versions/:version/consumers',
    { config: { handsOutCredentials: true } },
    async (request, reply) => {
      const version = versionInPath(request.params.version);
      const { policy } = policies.current;
      const entry = policy.versions.find((listed) => listed.version === version);
      if (entry === undefined) return sendError(reply, 404, 'not found');
      void reply.header('cache-control', 'no-store');
      const nowMs = clock();
      const [list, delivered] = await Promise.all([
        versionConsumers(reader, entry.version, policy.defaultAt(nowMs), nowMs),
        noticesSentFor(entry.version),
      ]);
      return {
        version: entry.version,
        phase: policy.phaseOf(entry, nowMs),
        requests_since: list.requests_since,
        consumers: withNoticesSent(list.consumers, delivered),
        refused: list.refused,
      };
    },
  );
}
