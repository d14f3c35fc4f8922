import type { FastifyInstance } from 'fastify';
import { sendError } from '@version-router/platform/errors';
import type { PolicyInForce } from '../versions/in-force.js';
import { versionInPath } from '../versions/policy.js';
import type { Comparisons } from './comparisons.js';
import { declaredTranslation } from './declarations.js';

export interface ComparisonRoutesOptions {
  policies: PolicyInForce;
  comparisons: Comparisons;
  /** The host name: the figures are this replica's. */
  replica: string;
}

/**
 * `GET /versions/{n}/comparison` (admin port): what comparing version n's answers with its successor's translated
 * back found on this replica (docs/declared-versions.md#comparing-a-declaration-with-the-code-it-replaces): counts per
 * resource, each differing field path with its first and last sighting and one example, values shown only with
 * `"show_values": true`. 404 `not found` for a version the policy does not list or does not compare. Examples name
 * requests (ids in paths) and may hold values, so it is kept like the consumer registry: behind ADMIN_TOKEN, and
 * without one on a loopback admin listener only.
 */
export async function comparisonRoutes(
  admin: FastifyInstance,
  { policies, comparisons, replica }: ComparisonRoutesOptions,
): Promise<void> {
  admin.get<{ Params: { version: string } }>(
    '/versions/:version/comparison',
    { config: { handsOutCredentials: true } },
    async (request, reply) => {
      const version = versionInPath(request.params.version);
      const { policy } = policies.current;
      const entry = policy.versions.find((listed) => listed.version === version);
      if (entry === undefined) return sendError(reply, 404, 'not found');
      const settings = entry.compare;
      const figures = comparisons.figures(policy, entry.version);
      const translation = declaredTranslation(policy.declared, entry.version);
      if (settings === undefined || figures === undefined || translation === undefined)
        return sendError(
          reply,
          404,
          'not found',
          `version ${entry.version} is not compared (no "compare" in the policy)`,
        );
      void reply.header('cache-control', 'no-store');
      return {
        version: entry.version,
        successor: translation.served,
        replica,
        sample: settings.sample,
        ignore: settings.ignore,
        values: settings.show_values ? 'shown' : 'redacted',
        ...figures,
      };
    },
  );
}
