import type { FastifyInstance } from 'fastify';
import type { Clock } from '@version-router/platform/clock';
import type { PolicyInForce } from './in-force.js';

/** Where the Atom changelog of the policy's lifecycle events is served (gateway/src/changelog/), on both ports. */
export const CHANGELOG_PATH = '/changelog';
export const ATOM_MEDIA_TYPE = 'application/atom+xml';

export interface DiscoveryOptions {
  policies: PolicyInForce;
  /** Each version's phase is the one at the time of the request. */
  clock: Clock;
}

/**
 * `GET /versions` on the public port: every listed version with its phase now, announcement, sunset,
 * successor and brownout windows (RFC 3339 UTC, milliseconds), so a client can find out before it breaks;
 * `policy_sha256` names the policy file content this replica serves (docs/behaviour.md#which-policy-is-served).
 * The changelog is linked twice: a `changelog` field for clients that read the body, and a `Link` header
 * (`rel="alternate"`, the Atom media type) for those that discover feeds by header.
 */
export async function discoveryRoutes(app: FastifyInstance, { policies, clock }: DiscoveryOptions): Promise<void> {
  app.get('/versions', async (_request, reply) => {
    const { policy, sha256 } = policies.current;
    void reply.header('link', `<${CHANGELOG_PATH}>; rel="alternate"; type="${ATOM_MEDIA_TYPE}"`);
    return { ...policy.describe(clock()), changelog: CHANGELOG_PATH, policy_sha256: sha256 };
  });
}
