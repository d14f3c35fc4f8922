import type { FastifyInstance } from 'fastify';
import type { Clock } from '@version-router/platform/clock';
import { sendError } from '@version-router/platform/errors';
import type { PolicyInForce } from './in-force.js';
import { instant, instantRule } from './policy-file.js';

/** Where the Atom changelog of the policy's lifecycle events is served (gateway/src/changelog/), on both ports. */
export const CHANGELOG_PATH = '/changelog';
export const ATOM_MEDIA_TYPE = 'application/atom+xml';

export interface DiscoveryOptions {
  policies: PolicyInForce;
  /** Each version's phase is the one at the time of the request. */
  clock: Clock;
}

/**
 * The instant a preview asks for (`?at=`, a date or an RFC 3339 date-time, as the policy writes them): undefined when
 * it asks for none, 'invalid' when `at` is no such instant (or is given twice).
 */
export function previewInstant(query: unknown): number | undefined | 'invalid' {
  const at = (query as Record<string, unknown> | undefined)?.at;
  if (at === undefined) return undefined;
  const parsed = instant.safeParse(at);
  return parsed.success ? parsed.data : 'invalid';
}

/** What a 400 of a preview says about its `at`. */
export const INVALID_AT = `at ${instantRule}`;

/**
 * `GET /versions` on the public port: every listed version with its phase now, announcement, sunset,
 * successor and brownout windows (RFC 3339 UTC, milliseconds), so a client can find out before it breaks;
 * `policy_sha256` names the policy file content this replica serves (docs/replicas.md#which-policy-is-served).
 * `?at=<date>` previews the policy in force at another instant, read-only (docs/versions.md#discovery): the phases
 * and key rules then, and `at` echoed as RFC 3339.
 * The changelog is linked twice: a `changelog` field for clients that read the body, and a `Link` header
 * (`rel="alternate"`, the Atom media type) for those that discover feeds by header.
 */
export async function discoveryRoutes(app: FastifyInstance, { policies, clock }: DiscoveryOptions): Promise<void> {
  app.get('/versions', async (request, reply) => {
    const { policy, sha256 } = policies.current;
    void reply.header('link', `<${CHANGELOG_PATH}>; rel="alternate"; type="${ATOM_MEDIA_TYPE}"`);
    const atMs = previewInstant(request.query);
    if (atMs === 'invalid') return sendError(reply, 400, 'invalid date', INVALID_AT);
    const preview = atMs === undefined ? {} : { at: new Date(atMs).toISOString() };
    return { ...policy.describe(atMs ?? clock()), ...preview, changelog: CHANGELOG_PATH, policy_sha256: sha256 };
  });
}
