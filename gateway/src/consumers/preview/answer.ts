import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '@version-router/platform/clock';
import { sendError } from '@version-router/platform/errors';
import type { MigrationGuides } from '../../changes/guides.js';
import { sendGuideUnavailable } from '../../changes/routes.js';
import type { PolicyInForce } from '../../versions/in-force.js';
import type { ConsumerUsageReader, RequestFieldsReader } from '../store.js';
import { upgradePreview, type UpgradePreview } from './model.js';

/** What both preview routes (the consumer's own, the platform team's) answer with. */
export interface PreviewSources {
  policies: PolicyInForce;
  reader: ConsumerUsageReader & RequestFieldsReader;
  guides: MigrationGuides;
  clock: Clock;
}

/** `?to=`: a version number (the decimal alone, as in paths), undefined when it is none. */
function targetOf(query: unknown): number | undefined {
  const to = (query as Record<string, unknown> | undefined)?.to;
  return typeof to === 'string' && /^[1-9][0-9]{0,8}$/.test(to) ? Number(to) : undefined;
}

/**
 * The upgrade preview of `consumerId` to `?to=` (docs/consumers.md#upgrade-preview), or the reply refusing it: 400
 * `bad request` for a `to` that is no version number; 404 `consumer not found` (`onUnknown` answers it, for the
 * consumer's own route a 401); 422 `unsupported version` for a version the preview cannot go to from the consumer's
 * (the details name those it can); 502/504 while the backend's documents cannot be had. Never stored by a cache.
 */
export async function answerPreview(
  request: FastifyRequest,
  reply: FastifyReply,
  consumerId: string,
  { policies, reader, guides, clock }: PreviewSources,
  onUnknown: () => FastifyReply,
): Promise<UpgradePreview | FastifyReply> {
  void reply.header('cache-control', 'no-store');
  const to = targetOf(request.query);
  if (to === undefined) return sendError(reply, 400, 'bad request', 'to must be a version number: ?to=2');
  const outcome = await upgradePreview({
    consumerId,
    reader,
    guides,
    policy: policies.current.policy,
    to,
    nowMs: clock(),
    requestId: request.id,
  });
  if (outcome.ok) return outcome.preview;
  switch (outcome.status) {
    case 404:
      return onUnknown();
    case 422:
      return sendError(reply, 422, 'unsupported version', outcome.reason);
    default:
      return sendGuideUnavailable(request, reply, outcome.status, outcome.reason);
  }
}
