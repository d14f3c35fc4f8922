import fastifyEtag from '@fastify/etag';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '@version-router/platform/clock';
import { sendError } from '@version-router/platform/errors';
import { ATOM_MEDIA_TYPE, CHANGELOG_PATH } from '../versions/discovery.js';
import type { PolicyInForce } from '../versions/in-force.js';
import { renderChangelog } from './feed.js';

export interface ChangelogRoutesOptions {
  policies: PolicyInForce;
  /** An event is listed once its instant has come. */
  clock: Clock;
}

/** A reader or cache reuses the feed this long at most: a reload can change it at any time. */
const MAX_AGE_SECONDS = 300;

/**
 * A host name or bracketed IPv6 address and an optional port: the links are built from the Host header, so
 * anything else (quotes, a path, user info) is refused rather than written into the feed.
 */
const HOST_HEADER = /^(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

/**
 * `GET /changelog`: the Atom feed of the policy's lifecycle events (docs/client-documents.md#changelog). It carries a
 * strong ETag of its bytes and answers 304 to a reader that sends it back in If-None-Match; no Last-Modified,
 * since a reload can change an entry's text without changing any date in the feed.
 */
export async function changelogRoutes(
  app: FastifyInstance,
  { policies, clock }: ChangelogRoutesOptions,
): Promise<void> {
  // Registered inside this plugin, so only the changelog's answers get an ETag.
  await app.register(fastifyEtag);
  app.get(CHANGELOG_PATH, async (request, reply) => {
    const host = request.host ?? '';
    if (!HOST_HEADER.test(host)) return sendError(reply, 400, 'bad request', 'invalid Host header');
    const nowMs = clock();
    const { xml, nextChangeAt } = renderChangelog(policies.current.policy, nowMs, `${request.protocol}://${host}`);
    // Never cached past the instant the next event comes due.
    const maxAge =
      nextChangeAt === undefined
        ? MAX_AGE_SECONDS
        : Math.min(MAX_AGE_SECONDS, Math.floor((nextChangeAt - nowMs) / 1000));
    return reply
      .type(`${ATOM_MEDIA_TYPE}; charset=utf-8`)
      .header('cache-control', `public, max-age=${maxAge}`)
      .send(xml);
  });
}
