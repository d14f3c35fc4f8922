import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
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
  }
}

/** The request header a consumer's key arrives in (lower case, as Node delivers it). */
export const API_KEY_HEADER = 'api-key';
/** The request header the backend learns the authenticated consumer from; never taken from the client. */
export const API_CONSUMER_HEADER = 'api-consumer';

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

/** 401 for a request without the key its version requires, or with a key that is no valid one. */
export function refuseKey(reply: FastifyReply, check: 'none' | 'invalid'): FastifyReply {
  void reply.header('www-authenticate', 'API-Key');
  return sendError(reply, 401, check === INVALID ? 'invalid API key' : 'API key required');
}

/**
 * The consumer rules of a request a version would serve, once its policy headers are set: 401 without the
 * key the version requires, 403 for a consumer new to a version that is closed to new consumers (no use of
 * it before `closed_to_new`, as far as every replica has told this one). Answers whether it refused.
 */
export function refusedByConsumerRules(request: FastifyRequest, reply: FastifyReply, answer: VersionAnswer, check: KeyCheck, ledger: Ledger): boolean {
  if (check === NO_KEY) {
    if (!answer.keyRequired) return false;
    refuseKey(reply, NO_KEY);
    return true;
  }
  const closedSince = answer.closedToNew;
  if (closedSince === null || check === INVALID) return false;
  const firstUse = ledger.firstUseOf(check.consumerId, answer.version as number);
  if (firstUse !== undefined && firstUse < closedSince) return false;
  // A refused newcomer made no use of the version: the ledger does not count it.
  request.consumer = null;
  void sendError(
    reply,
    403,
    'version closed to new consumers',
    `version ${answer.version} takes no new consumers since ${imfFixdate(closedSince)}; use version ${answer.successor}`,
  );
  return true;
}

async function consumerRequestPlugin(app: FastifyInstance): Promise<void> {
  app.decorateRequest('consumer', null);
}

/** Declares `request.consumer` at the root, so every route family and the request accounting see it. */
export const consumerRequest = fp(consumerRequestPlugin, { name: 'consumer-request' });
