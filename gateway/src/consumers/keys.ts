import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * An API key: `vr_<key id>_<secret>`. The key id (12 base64url characters from 9 random bytes) names the key
 * in the registry and in memory; the secret is 256 random bits (43 base64url characters). Only the key id
 * and the SHA-256 of the whole key are stored, so a leaked database hands out no key.
 */
const PREFIX = 'vr_';
const KEY_ID_LENGTH = 12;
const SECRET_LENGTH = 43;
const KEY_LENGTH = PREFIX.length + KEY_ID_LENGTH + 1 + SECRET_LENGTH;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export interface NewKey {
  keyId: string;
  /** Shown to the caller once, never stored. */
  key: string;
  digest: Buffer;
}

/**
 * SHA-256 of the whole key. The one-shot `hash` makes no hash object per request, and asked for hex it takes
 * its fast path: with a 'buffer' output it costs about twice as much on Node 20 and 24, more than the hex's
 * decoding (bench/README.md "Consumer keys").
 */
export const digestOf = (key: string): Buffer => Buffer.from(hash('sha256', key, 'hex'), 'hex');

export function generateKey(): NewKey {
  const keyId = randomBytes(9).toString('base64url');
  const key = `${PREFIX}${keyId}_${randomBytes(32).toString('base64url')}`;
  return { keyId, key, digest: digestOf(key) };
}

/** The key id of a well-formed key, else undefined. Base64url holds `_` too, so the parts are cut by position. */
export function keyIdOf(key: string): string | undefined {
  if (key.length !== KEY_LENGTH || !key.startsWith(PREFIX) || key[PREFIX.length + KEY_ID_LENGTH] !== '_')
    return undefined;
  if (!BASE64URL.test(key)) return undefined;
  return key.slice(PREFIX.length, PREFIX.length + KEY_ID_LENGTH);
}

/** Whether `key` is the key whose SHA-256 is `digest`, in constant time (digests are of equal length). */
export function keyMatches(key: string, digest: Buffer): boolean {
  return timingSafeEqual(digestOf(key), digest);
}
