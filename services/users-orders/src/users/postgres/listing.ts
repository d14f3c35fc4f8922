import { USER_ID_PREFIX } from '../user-id.js';

/** Users per batch of the whole-array listing: one short statement each, about 150 KB of JSON. */
export const LISTING_BATCH = 1_000;

/**
 * One user as the API writes it, byte for byte what `JSON.stringify` makes of the User the other routes
 * return: the same keys in the same order, and to_json's string escaping. PostgreSQL's escape_json and
 * JSON.stringify both escape `"` and `\` with a backslash, backspace, form feed, newline, carriage return and
 * tab as \b \f \n \r \t, every other character below U+0020 as \u00xx (lowercase hex), and leave every other
 * character as it is. Both work one character at a time, so they agree on every string PostgreSQL can hold
 * (the store's tests compare every Unicode scalar value but U+0000, which a text column cannot hold). The id
 * prefix is our own constant without quotes, so it can be written into the statement.
 */
const USER_JSON = `'{"id":"${USER_ID_PREFIX}' || seq || '","name":' || to_json(name) || ',"email":' || to_json(email)
  || ',"created_at":' || to_json(created_at) || ',"updated_at":' || to_json(updated_at) || '}'`;

/**
 * The statement for the batch after `afterSeq`: one row of the batch's last sequence number, its user count,
 * and its users' JSON joined by commas as UTF-8 bytes, in COPY's binary format. COPY takes no parameters, so
 * `afterSeq` (a number this code read from an earlier batch) is written in.
 */
export function listingBatchStatement(afterSeq: number): string {
  if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) throw new RangeError(`not a sequence number: ${afterSeq}`);
  return `COPY (
    SELECT max(seq), count(*)::int, convert_to(string_agg(${USER_JSON}, ',' ORDER BY seq), 'UTF8')
    FROM (SELECT * FROM users WHERE seq > ${afterSeq} ORDER BY seq LIMIT ${LISTING_BATCH}) batch
  ) TO STDOUT (FORMAT binary)`;
}

export interface ListingBatch {
  /** The sequence number the next batch starts after; undefined when the batch is empty. */
  lastSeq: number | undefined;
  count: number;
  /** The users' JSON objects joined by commas, UTF-8; empty when the batch is. */
  json: Uint8Array;
}

/** COPY's binary signature: `PGCOPY\n\377\r\n\0`. */
const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/**
 * Reads the one row of a listing batch out of COPY's binary format (PostgreSQL manual, "COPY", "Binary
 * Format"): the signature, 32-bit flags, a 32-bit header extension length and the extension; then per row a
 * 16-bit field count and each field as a 32-bit length (-1 for NULL) and its bytes; then -1.
 */
export function readListingBatch(bytes: Buffer): ListingBatch {
  if (bytes.length < 19 || !bytes.subarray(0, SIGNATURE.length).equals(SIGNATURE))
    throw new Error('listing batch: not COPY binary output');
  let at = 15 + 4 + bytes.readUInt32BE(15);
  const fieldCount = bytes.readInt16BE(at);
  at += 2;
  if (fieldCount !== 3) throw new Error(`listing batch: expected 3 fields, got ${fieldCount}`);
  const field = (): Buffer | undefined => {
    const length = bytes.readInt32BE(at);
    at += 4;
    if (length < 0) return undefined;
    at += length;
    return bytes.subarray(at - length, at);
  };
  const [last, count, json] = [field(), field(), field()];
  return {
    lastSeq: last === undefined ? undefined : Number(last.readBigInt64BE()),
    count: count === undefined ? 0 : count.readInt32BE(),
    json: json ?? new Uint8Array(0),
  };
}
