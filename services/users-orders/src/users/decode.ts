import { HttpError } from '@version-router/platform/errors';
import { oversizedDetails, type ReceivedBody } from './body-reader.js';
import type { UserFields } from './store.js';

const FIELDS: readonly (keyof UserFields)[] = ['name', 'email'];
const JSON_WHITESPACE_ONLY = /^[ \t\n\r]*$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

function undecodable(details: string): HttpError {
  return new HttpError(400, 'invalid JSON', details);
}

/**
 * Strict decoding of CreateUserRequest / UpdateUserRequest (docs/backend.md#users-api); anything else is 400 `invalid
 * JSON`:
 * one JSON object, nothing after it but whitespace, only `name` and `email`, each a string when present.
 * Absent fields stay absent, so a PUT leaves them unchanged. Duplicate keys: the last one wins, as with
 * JSON.parse and Go's encoding/json.
 */
export function decodeUserFields(body: ReceivedBody | undefined): Partial<UserFields> {
  if (body === undefined) throw undecodable('body is empty');
  if (body.kind === 'oversized') throw undecodable(oversizedDetails);
  let text: string;
  try {
    text = utf8.decode(body.bytes);
  } catch {
    throw undecodable('body is not valid UTF-8');
  }
  if (JSON_WHITESPACE_ONLY.test(text)) throw undecodable('body is empty');
  let value: unknown;
  try {
    // JSON.parse rejects anything but whitespace after the first value: extra data makes a body undecodable.
    value = JSON.parse(text);
  } catch (err) {
    throw undecodable((err as SyntaxError).message);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw undecodable('body must be a JSON object');
  const fields: Partial<UserFields> = {};
  for (const [key, field] of Object.entries(value)) {
    if (!(FIELDS as readonly string[]).includes(key)) throw undecodable(`unknown field ${JSON.stringify(key)}`);
    if (typeof field !== 'string') throw undecodable(`field "${key}" must be a string`);
    fields[key as keyof UserFields] = field;
  }
  return fields;
}
