import type { FastifyInstance } from 'fastify';
import type { Clock } from '@version-router/platform/clock';
import type { PolicyInForce } from './in-force.js';

export interface DiscoveryOptions {
  policies: PolicyInForce;
  /** Each version's phase is the one at the time of the request. */
  clock: Clock;
}

/**
 * `GET /versions` on the public port: every listed version with its phase now, announcement, sunset,
 * successor and brownout windows (RFC 3339 UTC, milliseconds), so a client can find out before it breaks;
 * `policy_sha256` names the policy file content this replica serves (docs/behaviour.md#which-policy-is-served).
 */
export async function discoveryRoutes(app: FastifyInstance, { policies, clock }: DiscoveryOptions): Promise<void> {
  app.get('/versions', async () => {
    const { policy, sha256 } = policies.current;
    return { ...policy.describe(clock()), policy_sha256: sha256 };
  });
}
