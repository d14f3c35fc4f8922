import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { HttpError } from '@version-router/platform/errors';
import type { User, UserFields } from '../schemas.js';

/**
 * How long a key is remembered after the create it was first sent with (docs/backend.md#retries-and-idempotency-key).
 */
export const KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;

const MAX_KEY_LENGTH = 255;
/**
 * Visible ASCII but `"` and `\`: a UUID, a ULID or base64 fits, a space (two keys joined by a comma) or a control
 * character does not.
 */
const KEY_CHARACTERS = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

export const invalidKeyDetails =
  `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} visible ASCII characters other ` +
  `than " and \\, optionally in double quotes`;

/** A create sent with an Idempotency-Key: what the store remembers the key by. */
export interface KeyedCreate {
  key: string;
  /** Identifies the request payload: the same fingerprint is the same request (see `fingerprintOf`). */
  fingerprint: string;
  fields: UserFields;
}

/**
 * What a keyed create came to: a new user; the user the key's first request created (its answer again); the key
 * already used with another payload; or the key's first request still running.
 */
export type KeyedOutcome =
  { kind: 'created'; user: User } | { kind: 'replayed'; user: User } | { kind: 'reused' } | { kind: 'in-progress' };

/**
 * The request's Idempotency-Key, or undefined without one. The IETF draft spells the key as a quoted string
 * (`"8e03978e-…"`) and most clients send it bare: both name the same key. A repeated header arrives joined by
 * ", ", which the character rule refuses, so a request carries at most one key.
 */
export function idempotencyKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const value = headers['idempotency-key'];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new HttpError(400, 'invalid idempotency key', invalidKeyDetails);
  const key = value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
  if (key.length > MAX_KEY_LENGTH || !KEY_CHARACTERS.test(key))
    throw new HttpError(400, 'invalid idempotency key', invalidKeyDetails);
  return key;
}

/**
 * The payload a key is bound to: the decoded name and email, so whitespace, field order or a JSON escape
 * (`\u0041` for `A`) make no difference, while any change of either value does.
 */
export function fingerprintOf(fields: UserFields): string {
  return createHash('sha256')
    .update(JSON.stringify([fields.name, fields.email]))
    .digest('hex');
}
