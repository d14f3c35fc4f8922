/**
 * Request headers the gateway owns (docs/routing.md#headers-the-gateway-owns): the backend learns facts from them
 * that only the gateway can vouch for, so a client's own copy never reaches it, on any route. The base forwarding
 * options (backend.ts) remove every one of them from each forwarded request; the gateway then sets its own where it
 * has one: the authenticated consumer, the version a translated request asked for.
 */

/** The consumer whose valid API-Key the request carried; absent without one. */
export const API_CONSUMER_HEADER = 'api-consumer';
/** The version the client asked for, where a version declared as changes is served by its successor. */
export const API_VERSION_REQUESTED_HEADER = 'api-version-requested';

/** Every request header the gateway owns, lower case as Node and undici name them. */
export const GATEWAY_OWNED_REQUEST_HEADERS: readonly string[] = [API_CONSUMER_HEADER, API_VERSION_REQUESTED_HEADER];

/** RFC 9110 token characters: a value made of them needs no quotes in a Forwarded pair. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A Forwarded pair's value: as it is when a token, else an RFC 9110 quoted-string. */
function forwardedValue(value: string): string {
  return TOKEN.test(value) ? value : `"${value.replace(/["\\]/g, '\\$&')}"`;
}

/** The element each connection's requests were last given, with the Host it was built for. */
const hopElements = new WeakMap<object, { host: string | undefined; element: string }>();

/**
 * forwardedElement for a request on `connection`, built once per connection: its peer never changes, and a client
 * sends the same Host on every request of a keep-alive connection. Building the element (quoting a Host with a
 * port) cost several times the rest of the request-header rewrite (bench/README.md, "Headers the gateway owns").
 */
export function hopElement(connection: object, peer: string, host: string | undefined): string {
  const known = hopElements.get(connection);
  if (known !== undefined && known.host === host) return known.element;
  const element = forwardedElement(peer, host);
  hopElements.set(connection, { host, element });
  return element;
}

/**
 * The Forwarded element (RFC 7239) for the hop the gateway saw: the peer address (an IPv6 one in brackets and
 * quotes, as §6 asks), the protocol, and the Host the client asked for when it sent one.
 */
export function forwardedElement(peer: string, host: string | undefined): string {
  const node = peer.includes(':') ? `"[${peer}]"` : peer;
  return host === undefined ? `for=${node};proto=http` : `for=${node};proto=http;host=${forwardedValue(host)}`;
}

const SPACE = 0x20;
const TAB = 0x09;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Which ASCII codes are token characters, looked up per character by the scan below. */
const TOKEN_CHARS = Uint8Array.from({ length: 0x80 }, (_, code) => (TOKEN.test(String.fromCharCode(code)) ? 1 : 0));
const isTokenChar = (code: number): boolean => TOKEN_CHARS[code] === 1;

/**
 * Whether a Forwarded field value is RFC 7239 syntax: elements separated by commas, each of `name=value` pairs
 * separated by semicolons (empty ones allowed, whitespace around the separators let pass), a value a token or a
 * quoted-string. A scan, not a regular expression: one over these optional, repeated parts backtracks
 * quadratically on a crafted value of 16 KB of spaces.
 */
function isForwardedSyntax(value: string): boolean {
  const end = value.length;
  let at = 0;
  const skipSpace = (): void => {
    while (at < end && (value.charCodeAt(at) === SPACE || value.charCodeAt(at) === TAB)) at++;
  };
  const skipToken = (): boolean => {
    const start = at;
    while (at < end && isTokenChar(value.charCodeAt(at))) at++;
    return at > start;
  };
  skipSpace();
  while (at < end) {
    if (isTokenChar(value.charCodeAt(at))) {
      skipToken();
      if (value.charCodeAt(at) !== 0x3d /* = */) return false;
      at++;
      if (value.charCodeAt(at) === QUOTE) {
        at++;
        for (;;) {
          if (at >= end) return false;
          const code = value.charCodeAt(at);
          if (code === QUOTE) break;
          if ((code < SPACE && code !== TAB) || code === 0x7f) return false;
          at += code === BACKSLASH ? 2 : 1;
        }
        at++;
      } else if (!skipToken()) return false;
    }
    skipSpace();
    if (at === end) return true;
    const separator = value.charCodeAt(at);
    if (separator !== 0x3b /* ; */ && separator !== 0x2c /* , */) return false;
    at++;
    skipSpace();
  }
  return true;
}

/**
 * What the backend gets as Forwarded: the client's value with the gateway's element appended, as each proxy on the
 * way appends its own (and as X-Forwarded-For is treated), so the last element is always the gateway's. A value that
 * is not RFC 7239 syntax is dropped rather than appended to: an unclosed quote in it would swallow the gateway's
 * element, and the backend would read the client's claim as the last hop.
 */
export function forwardedHeader(sent: string | string[] | undefined, element: string): string {
  if (sent === undefined) return element;
  const value = Array.isArray(sent) ? sent.join(', ') : sent;
  return isForwardedSyntax(value) ? `${value}, ${element}` : element;
}
