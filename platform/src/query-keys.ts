/**
 * Query parameters that may hold a credential (docs/consumers.md#api-keys-in-the-query-string). Their values never
 * reach the log: the request log line shows them as `[redacted]`. The gateway also refuses a request whose such
 * parameter holds an API key.
 */

/** QUERY_KEY_PARAMETERS when unset: the names clients commonly put a key or token under. */
export const DEFAULT_QUERY_KEY_PARAMETERS: readonly string[] = ['api_key', 'apiKey', 'key', 'token'];

/** What a redacted value reads as in the log; the same word pino's redaction of headers writes. */
const REDACTED = '[redacted]';

/**
 * The names compared without regard to case (a client may write `API_KEY` or `apikey`): each as given, under its
 * lower-case form.
 */
export type QueryKeyNames = ReadonlyMap<string, string>;

export function queryKeyNames(names: readonly string[]): QueryKeyNames {
  return new Map(names.map((name) => [name.toLowerCase(), name]));
}

/** A query component decoded as a form does (`+` is a space); as it came when its percent-encoding is broken. */
function decoded(component: string): string {
  const spaced = component.includes('+') ? component.replaceAll('+', ' ') : component;
  if (!spaced.includes('%')) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}

/**
 * Calls `visit` for each parameter of the query of `url` whose name is one of `names`, with its name as `names`
 * gives it, its value decoded, and where the value starts and ends in `url`; stops at the first `visit` that
 * answers true.
 */
function eachKeyParameter(
  url: string,
  names: QueryKeyNames,
  visit: (name: string, value: string, start: number, end: number) => boolean,
): void {
  let at = url.indexOf('?');
  if (at === -1) return;
  while (at < url.length) {
    const start = at + 1;
    let end = url.indexOf('&', start);
    if (end === -1) end = url.length;
    const equals = url.indexOf('=', start);
    const nameEnd = equals === -1 || equals > end ? end : equals;
    const name = names.get(decoded(url.slice(start, nameEnd)).toLowerCase());
    if (name !== undefined && nameEnd < end) {
      if (visit(name, decoded(url.slice(nameEnd + 1, end)), nameEnd + 1, end)) return;
    }
    at = end;
  }
}

/** `url` with the value of every parameter `names` lists replaced by `[redacted]`; the rest byte for byte. */
export function redactQueryKeys(url: string, names: QueryKeyNames): string {
  let redacted = '';
  let copied = 0;
  eachKeyParameter(url, names, (_name, value, start, end) => {
    if (value === '') return false;
    redacted += `${url.slice(copied, start)}${REDACTED}`;
    copied = end;
    return false;
  });
  return copied === 0 ? url : `${redacted}${url.slice(copied)}`;
}

/** The name (as `names` gives it) of the first parameter `names` lists whose value passes `test`; else undefined. */
export function queryKeyParameter(
  url: string,
  names: QueryKeyNames,
  test: (value: string) => boolean,
): string | undefined {
  let found: string | undefined;
  eachKeyParameter(url, names, (name, value) => {
    if (!test(value)) return false;
    found = name;
    return true;
  });
  return found;
}
