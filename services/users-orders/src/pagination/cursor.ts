import { formatUserId, parseUserId } from '../users/user-id.js';

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** The cursor is the last returned id, base64url-encoded so clients treat it as opaque (they must not parse it). */
export function encodeCursor(lastId: string): string {
  return Buffer.from(lastId, 'utf8').toString('base64url');
}

/**
 * The sequence number a cursor points after, or undefined when this service would not have issued it
 * (answered 400 `invalid cursor`). Re-encoding must give the same text back, which rejects padding,
 * non-canonical trailing bits and ids in any other spelling.
 */
export function decodeCursor(cursor: string): number | undefined {
  if (!BASE64URL.test(cursor)) return undefined;
  const seq = parseUserId(Buffer.from(cursor, 'base64url').toString('utf8'));
  return seq !== undefined && encodeCursor(formatUserId(seq)) === cursor ? seq : undefined;
}
