import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { INVALID_KEY_ERROR, KEY_REQUIRED_ERROR } from '@version-router/platform/api-document';
import { sendError } from '@version-router/platform/errors';
import { imfFixdate } from '../versions/headers.js';
import type { VersionAnswer } from '../versions/policy.js';
import type { KeyCache } from './key-cache.js';
import type { KeyEntry } from './store.js';
import type { Ledger } from './ledger.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The consumer whose valid API-Key the request carries; null without one. */
    consumer: string | null;
    /** The consumer was refused the version (closed to new consumers): logged, and counted as a refusal, not a use. */
    consumerRefused: boolean;
  }
  interface FastifyInstance {
    /** CONSUMER_KEYS_URL: where a client learns how to get an API key, named by every 401; undefined: not said. */
    consumerKeysUrl: string | undefined;
  }
}

/** The request header a consumer's key arrives in (lower case, as Node delivers it). */
export const API_KEY_HEADER = 'api-key';

/**
 * What the request's key says: no key, a key that is malformed, unknown or revoked, or the key cache's entry
 * of the key (its consumer and that consumer's pin).
 */
export type KeyCheck = 'none' | 'invalid' | KeyEntry;

const NO_KEY = 'none';
const INVALID = 'invalid';

/**
 * Checks the request's API-Key against the keys in memory and sets `request.consumer` when it is valid. More
 * than one API-Key header is no valid key.
 */
export function checkApiKey(request: FastifyRequest, keys: KeyCache): KeyCheck {
  const key = request.raw.headers[API_KEY_HEADER];
  if (key === undefined) return NO_KEY;
  const entry = typeof key === 'string' ? keys.entryOf(key, request.raw.socket) : undefined;
  if (entry === undefined) return INVALID;
  request.consumer = entry.consumerId;
  return entry;
}

/**
 * 401 for a request without the key its version requires, or with a key that is no valid one. With
 * CONSUMER_KEYS_URL, the answer says where keys come from: in `details`, and as a `rel="help"` Link beside the
 * version's own links.
 */
export function refuseKey(reply: FastifyReply, check: 'none' | 'invalid'): FastifyReply {
  void reply.header('www-authenticate', 'API-Key');
  // The texts the API documents list for the 401 (@version-router/platform/api-document).
  const error = check === INVALID ? INVALID_KEY_ERROR : KEY_REQUIRED_ERROR;
  const keysUrl = reply.server.consumerKeysUrl;
  if (keysUrl === undefined) return sendError(reply, 401, error);
  const links = reply.getHeader('link');
  void reply.header('link', `${links === undefined ? '' : `${String(links)}, `}<${keysUrl}>; rel="help"`);
  const what =
    check === INVALID
      ? 'the API-Key header holds no valid key (malformed, unknown or revoked)'
      : 'send your key in the API-Key header';
  return sendError(reply, 401, error, `${what}; how to get one: ${keysUrl}`);
}

/**
 * The consumer rules of a request a version would serve, once its policy headers are set: 401 without the
 * key the version requires, 403 for a consumer new to a version that is closed to new consumers (no use of
 * it before `closed_to_new`, as far as every replica has told this one). Answers whether it refused.
 */
export function refusedByConsumerRules(
  request: FastifyRequest,
  reply: FastifyReply,
  answer: VersionAnswer,
  check: KeyCheck,
  ledger: Ledger,
): boolean {
  if (check === NO_KEY) {
    if (!answer.keyRequired) return false;
    refuseKey(reply, NO_KEY);
    return true;
  }
  const closedSince = answer.closedToNew;
  if (closedSince === null || check === INVALID) return false;
  const firstUse = ledger.firstUseOf(check.consumerId, answer.version as number);
  if (firstUse !== undefined && firstUse < closedSince) return false;
  // A refused newcomer made no use of the version: the ledger counts it as a refusal, the log names it.
  request.consumerRefused = true;
  void sendError(
    reply,
    403,
    'version closed to new consumers',
    `version ${answer.version} takes no new consumers since ${imfFixdate(closedSince)}; use version ` +
      `${answer.successor}`,
  );
  return true;
}

async function consumerRequestPlugin(
  app: FastifyInstance,
  { consumerKeysUrl }: { consumerKeysUrl?: string },
): Promise<void> {
  app.decorateRequest('consumer', null);
  app.decorateRequest('consumerRefused', false);
  app.decorate('consumerKeysUrl', consumerKeysUrl);
}

/** Declares `request.consumer` at the root, so every route family and the request accounting see it. */
export const consumerRequest = fp(consumerRequestPlugin, { name: 'consumer-request' });
