import { encodeCursor } from './cursor.js';
import type { PageQuery } from './query.js';

/** The PageResponse envelope: next_cursor omitted when empty, has_more always present. */
export interface PageResponse<Item> {
  items: Item[];
  next_cursor?: string;
  has_more: boolean;
}

/**
 * Fetch limit + 1 items: more than `limit` means another page exists, and the cursor is the
 * last returned item's id.
 */
export async function buildPage<Item extends { id: string }>(
  query: PageQuery,
  fetch: (afterSeq: number, count: number) => Item[] | Promise<Item[]>,
): Promise<PageResponse<Item>> {
  const found = await fetch(query.afterSeq, query.limit + 1);
  const last = found[query.limit - 1];
  if (found.length <= query.limit || last === undefined) return { items: found, has_more: false };
  return { items: found.slice(0, query.limit), next_cursor: encodeCursor(last.id), has_more: true };
}
