import { HttpError } from '@version-router/platform/errors';
import { decodeCursor } from './cursor.js';

export const pageLimits = { default: 20, min: 1, max: 100 } as const;

/** The position and size of one page request. */
export interface PageQuery {
  afterSeq: number;
  limit: number;
}

/**
 * A limit that is not an integer or is outside 1..100 is silently replaced by 20 (as are repeated ones), never refused.
 */
function parseLimit(raw: unknown): number {
  if (typeof raw !== 'string' || !/^[0-9]+$/.test(raw)) return pageLimits.default;
  const limit = Number(raw);
  return limit >= pageLimits.min && limit <= pageLimits.max ? limit : pageLimits.default;
}

/** An absent or empty cursor is the first page; anything else must be a cursor this service issued. */
export function parsePageQuery(query: { cursor?: unknown; limit?: unknown }): PageQuery {
  const limit = parseLimit(query.limit);
  if (query.cursor === undefined || query.cursor === '') return { afterSeq: 0, limit };
  const afterSeq = typeof query.cursor === 'string' ? decodeCursor(query.cursor) : undefined;
  if (afterSeq === undefined) throw new HttpError(400, 'invalid cursor');
  return { afterSeq, limit };
}
