/**
 * The one spelling of a user id: `user-` and a decimal sequence number that grows by one per created user
 * and is never reused. Both stores, the listing SQL, the page cursor and the API schema take it from here.
 */

/** What every user id starts with; the sequence number follows. */
export const USER_ID_PREFIX = 'user-';

/** A well-formed id, as the API documents it: the prefix and a sequence number without leading zeros. */
export const USER_ID_PATTERN = new RegExp(`^${USER_ID_PREFIX}[1-9][0-9]*$`);

export function formatUserId(seq: number): string {
  return `${USER_ID_PREFIX}${seq}`;
}

/** The sequence number of a well-formed user id, or undefined for anything this service never assigns. */
export function parseUserId(id: string): number | undefined {
  if (!USER_ID_PATTERN.test(id)) return undefined;
  const seq = Number(id.slice(USER_ID_PREFIX.length));
  return Number.isSafeInteger(seq) ? seq : undefined;
}
