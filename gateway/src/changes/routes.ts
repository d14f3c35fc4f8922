import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from '@version-router/platform/errors';
import { asPage } from '../html/self-contained.js';
import { wantsHtml } from '../html/wants-html.js';
import type { PolicyInForce } from '../versions/in-force.js';
import { versionInPath } from '../versions/policy.js';
import type { MigrationGuides } from './guides.js';
import { GUIDE_PAGE_CSP } from './page.js';

export interface ChangesRoutesOptions {
  policies: PolicyInForce;
  guides: MigrationGuides;
}

/**
 * The answer when the backend's OpenAPI documents a guide is derived from cannot be had: 502 `bad gateway`
 * (refused, broken off, not 200, not JSON) or 504 `gateway timeout` (no answer within BACKEND_TIMEOUT_MS), as
 * for a proxied request; the reason goes to the log only.
 */
export function sendGuideUnavailable(
  request: FastifyRequest,
  reply: FastifyReply,
  status: 502 | 504,
  reason: string,
): FastifyReply {
  request.log.warn({ reason }, "migration guide: the backend's OpenAPI documents are unavailable");
  return status === 504 ? sendError(reply, 504, 'gateway timeout') : sendError(reply, 502, 'bad gateway');
}

/**
 * `GET /versions/{n}/changes`: the migration guide from version n to its successor, as JSON, or as a
 * page for `Accept: text/html`. 404 for a version that is not listed or has no successor; 502 or 504 when
 * the backend's documents cannot be had.
 */
export async function changesRoutes(app: FastifyInstance, { policies, guides }: ChangesRoutesOptions): Promise<void> {
  app.get<{ Params: { version: string } }>('/versions/:version/changes', async (request, reply) => {
    const version = versionInPath(request.params.version);
    if (version === undefined) return sendError(reply, 404, 'not found');
    const outcome = await guides.get(policies.current.policy, version, request.id);
    void reply.header('vary', 'Accept');
    if (!outcome.ok) {
      if (outcome.status === 404) return sendError(reply, 404, 'not found');
      return sendGuideUnavailable(request, reply, outcome.status, outcome.reason);
    }
    if (wantsHtml(request.headers.accept)) return asPage(reply, GUIDE_PAGE_CSP).send(outcome.rendered.html);
    return reply.type('application/json; charset=utf-8').send(outcome.rendered.json);
  });
}
