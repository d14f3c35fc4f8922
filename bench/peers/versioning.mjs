// What every Node peer in bench/http.mjs adds, as the nginx configuration there does: the path forms
// /v1 and /v2 of the order routes with Vary (and Deprecation/Sunset/Link on v1), the header form
// /orders/{id} mapped to a path version by API-Version (406 for other values), /api/users passed through.
// The version rules are the bench's fixed copy of the gateway's policy for these routes, nothing more. The
// backend serves only v2 (the gateway presents v1 from it): a peer forwards v1 to /v2 and cannot translate
// the body, so on v1 it does less work than the gateway (bench/README.md, "Versions declared as changes").
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** v1's Sunset as the gateway sends it: the shipped policy's date, which moves (ops/versions.json). */
const shipped = JSON.parse(readFileSync(new URL('../../ops/versions.json', import.meta.url), 'utf8'));
export const SUNSET = new Date(shipped.versions.find(({ version }) => version === 1).sunset).toUTCString();
const V1 = /^\/v1\/orders\/([^/?]+)$/;
const V2 = /^\/v2\/orders\/[^/?]+$/;
const HEADER_FORM = /^\/orders\/([^/?]+)$/;

const v1Headers = (id) => ({
  vary: 'API-Version',
  deprecation: 'true',
  sunset: SUNSET,
  link: `</v2/orders/${id}>; rel="successor-version"`,
});
const V2_HEADERS = { vary: 'API-Version' };

/**
 * Where a request goes: { path, headers } (the upstream path and the response headers to add), or
 * { status } for an answer of the proxy's own.
 */
export function route(url, apiVersion) {
  if (url.startsWith('/api/users')) return { path: url, headers: {} };
  let m = V1.exec(url);
  if (m !== null)
    return apiVersion === undefined || apiVersion === '1'
      ? { path: `/v2/orders/${m[1]}`, headers: v1Headers(m[1]) }
      : { status: 400 };
  if (V2.test(url))
    return apiVersion === undefined || apiVersion === '2' ? { path: url, headers: V2_HEADERS } : { status: 400 };
  m = HEADER_FORM.exec(url);
  if (m !== null) {
    if (apiVersion === '2') return { path: `/v2${url}`, headers: V2_HEADERS };
    if (apiVersion === undefined || apiVersion === '1') return { path: `/v2${url}`, headers: v1Headers(m[1]) };
    return { status: 406 };
  }
  return { status: 404 };
}

const SANE_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** The client's X-Request-Id when sane, else a new one, as the gateway does. */
export function requestId(sent) {
  return typeof sent === 'string' && SANE_REQUEST_ID.test(sent) ? sent : randomUUID();
}

/** The line bench/harness.mjs waits for, shaped like the services' own. */
export function announce(server) {
  process.stdout.write(`${JSON.stringify({ msg: 'listening', api: `http://127.0.0.1:${server.address().port}` })}\n`);
}
