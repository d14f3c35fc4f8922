import type { FastifyInstance } from 'fastify';
import { sendError } from '@version-router/platform/errors';
import { asPage } from '../html/self-contained.js';
import type { PolicyInForce } from '../versions/in-force.js';
import type { MigrationGuides } from './guides.js';
import { GUIDE_PAGE_CSP } from './page.js';

export interface ChangesRoutesOptions {
  policies: PolicyInForce;
  guides: MigrationGuides;
}

/** The quality a media range gets in Accept (0 when absent); `type` is matched exactly. */
function qualityOf(accept: string, type: string): number {
  let best = 0;
  for (const range of accept.split(',')) {
    const [name, ...parameters] = range.split(';');
    if (name?.trim().toLowerCase() !== type) continue;
    const q = parameters.map((parameter) => /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(parameter)?.[1]).find((value) => value !== undefined);
    best = Math.max(best, q === undefined ? 1 : Number(q) || 0);
  }
  return best;
}

/** HTML only for a client that asks for it by name and prefers it to JSON: browsers do; `*\/*` gets JSON. */
function wantsHtml(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  const html = qualityOf(accept, 'text/html');
  return html > 0 && html > qualityOf(accept, 'application/json');
}

/**
 * `GET /versions/{n}/changes`: the migration guide from version n to its successor, as JSON, or as a
 * page for `Accept: text/html`. 404 for a version that is not listed or has no successor; when the
 * backend's documents cannot be had, 502 `bad gateway` (refused, broken off, not 200, not JSON) or
 * 504 `gateway timeout` (no answer within BACKEND_TIMEOUT_MS), as for a proxied request.
 */
export async function changesRoutes(app: FastifyInstance, { policies, guides }: ChangesRoutesOptions): Promise<void> {
  app.get<{ Params: { version: string } }>('/versions/:version/changes', async (request, reply) => {
    const label = request.params.version;
    // Only the decimal of a version names it (`01`, `1.0`, `x` name none).
    if (!/^[1-9][0-9]{0,8}$/.test(label)) return sendError(reply, 404, 'not found');
    const outcome = await guides.get(policies.current.policy, Number(label), request.id);
    void reply.header('vary', 'Accept');
    if (!outcome.ok) {
      if (outcome.status === 404) return sendError(reply, 404, 'not found');
      request.log.warn({ reason: outcome.reason }, 'migration guide: the backend\'s OpenAPI documents are unavailable');
      return outcome.status === 504 ? sendError(reply, 504, 'gateway timeout') : sendError(reply, 502, 'bad gateway');
    }
    if (wantsHtml(request.headers.accept)) return asPage(reply, GUIDE_PAGE_CSP).send(outcome.guide.html);
    return reply.type('application/json; charset=utf-8').send(outcome.guide.json);
  });
}
