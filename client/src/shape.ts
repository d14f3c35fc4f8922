/** A path segment naming a version (`v1`, `v12`): part of the shape, never an id. */
const VERSION_SEGMENT = /^v[0-9]+$/;
const DIGIT = /[0-9]/;
/** Longer than any collection name an API uses: a token, hash or opaque id even without a digit. */
const LONGEST_NAME = 24;

/**
 * The shape of a request path: its segments with the ones that look like ids replaced by `{id}`, so that
 * `/v1/orders/ord-1001` and `/v1/orders/ord-1002` are one operation, `/v1/orders/{id}`. A segment is an id when it
 * contains a digit and is not a version segment (`v1`), or when it is longer than 24 characters. A name without a
 * digit (`/users/alice`) cannot be told from a collection and stays as it is. The query is no part of the shape.
 */
export function pathShape(pathAndQuery: string): string {
  const end = pathAndQuery.search(/[?#]/);
  const path = end === -1 ? pathAndQuery : pathAndQuery.slice(0, end);
  const segments = path.split('/');
  for (let i = 0; i < segments.length; i += 1) {
    const segment = segments[i] as string;
    if (segment.length > LONGEST_NAME || (DIGIT.test(segment) && !VERSION_SEGMENT.test(segment))) segments[i] = '{id}';
  }
  return segments.join('/');
}

/** The version a path names in a segment of its own (`/v1/orders/x`, `/api/v2/...`), or null. */
export function pathVersion(pathAndQuery: string): number | null {
  const match = /\/v([0-9]+)(?:[/?#]|$)/.exec(pathAndQuery);
  return match === null ? null : Number(match[1]);
}
