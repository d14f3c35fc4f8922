import { subscribe } from 'node:diagnostics_channel';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_FULL,
} from '@opentelemetry/semantic-conventions';
import { AttributeSet, setFor } from './attribute-set.js';
import type { Span } from './span.js';

/**
 * The end of an upstream call's client span, read from undici's diagnostics channels: the request as sent (its
 * URL), the response's status, the end of its body or the failure. Only observed: the traceparent was written by
 * the proxy's own header rewrite (RequestTrace.forward), and nothing here adds a header. undici's OpenTelemetry
 * instrumentation injects its own on `undici:request:create` by appending, which in a proxy that forwards the
 * client's headers sends two (docs/decisions.md#traces-spans-of-our-own-the-sdks-transport).
 *
 * A call is recognised by the traceparent it carries, which names its client span: the span waits here from the
 * header rewrite until undici creates the request, then follows the request object. undici creates the request
 * within the proxy's call that rewrote the headers (reply-from → undici's request), so the call waiting is nearly
 * always the one just forwarded: it waits in one slot, and moves to a map only when another call is forwarded
 * before its request is created (a retry after a delay).
 */

/** What undici publishes of a request (lib/core/request.js): headers as a flat [name, value, …] array. */
interface UndiciRequest {
  origin: string;
  path: string;
  headers: unknown;
}

/** The call forwarded last while undici has not created its request: its traceparent and client span. */
let waitingTraceparent: string | undefined;
let waitingSpan: Span | undefined;
/** Client spans of calls forwarded before the waiting one and not yet created, by traceparent. */
const expected = new Map<string, Span>();
/** Client spans of requests undici has created, until their response has ended or failed. */
const inFlight = new WeakMap<object, Span>();

/** The upstream request carrying `traceparent` belongs to `span`. */
export function expectUpstream(traceparent: string, span: Span): void {
  if (waitingSpan !== undefined) expected.set(waitingTraceparent as string, waitingSpan);
  waitingTraceparent = traceparent;
  waitingSpan = span;
}

/** The span of the call carrying `traceparent` while undici has not created its request, no longer waiting. */
function takeExpected(traceparent: string): Span | undefined {
  if (traceparent === waitingTraceparent) {
    const span = waitingSpan;
    waitingTraceparent = waitingSpan = undefined;
    return span;
  }
  const span = expected.get(traceparent);
  if (span !== undefined) expected.delete(traceparent);
  return span;
}

/** Forgets a call undici never created; true when it was still waiting (its span is the caller's to end). */
export function forgetUpstream(traceparent: string): boolean {
  return takeExpected(traceparent) !== undefined;
}

function traceparentOf(headers: unknown): string | undefined {
  if (!Array.isArray(headers)) return undefined;
  for (let i = 0; i < headers.length; i += 2) if (headers[i] === 'traceparent') return headers[i + 1] as string;
  return undefined;
}

function onCreate(message: unknown): void {
  if (waitingSpan === undefined && expected.size === 0) return;
  const request = (message as { request: UndiciRequest }).request;
  const traceparent = traceparentOf(request.headers);
  const span = traceparent === undefined ? undefined : takeExpected(traceparent);
  if (span === undefined) return;
  inFlight.set(request, span);
  span.set(ATTR_URL_FULL, `${request.origin}${request.path}`);
  span.add(setFor(servers, request.origin, serverOf));
}

/** server.address and server.port of each upstream origin, parsed once: a proxy has one or a few. */
const servers = new Map<string, AttributeSet>();

function serverOf(origin: string): AttributeSet {
  const url = new URL(origin);
  return new AttributeSet({
    [ATTR_SERVER_ADDRESS]: url.hostname,
    [ATTR_SERVER_PORT]: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
  });
}

/** http.response.status_code, one set per status: client and server spans alike. */
const statuses = new Map<number, AttributeSet>();

const statusSetOf = (status: number): AttributeSet => new AttributeSet({ [ATTR_HTTP_RESPONSE_STATUS_CODE]: status });

export function statusSet(status: number): AttributeSet {
  return setFor(statuses, status, statusSetOf);
}

function onHeaders(message: unknown): void {
  const { request, response } = message as { request: object; response: { statusCode: number } };
  const span = inFlight.get(request);
  if (span === undefined) return;
  span.add(statusSet(response.statusCode));
  // Client spans: any status of 400 and above failed the call (OpenTelemetry's HTTP conventions).
  if (response.statusCode >= 400) {
    span.fail();
    span.set(ATTR_ERROR_TYPE, String(response.statusCode));
  }
}

function onTrailers(message: unknown): void {
  const { request } = message as { request: object };
  const span = inFlight.get(request);
  if (span === undefined) return;
  inFlight.delete(request);
  span.finish();
}

function onError(message: unknown): void {
  const { request, error } = message as { request: object; error: Error & { code?: string } };
  const span = inFlight.get(request);
  if (span === undefined) return;
  inFlight.delete(request);
  span.fail(error.message);
  span.set(ATTR_ERROR_TYPE, error.code ?? error.name);
  span.finish();
}

let observing = false;

/** Subscribes to undici's request channels, once per process (only a process that traces ever does). */
export function observeUpstreamCalls(): void {
  if (observing) return;
  observing = true;
  subscribe('undici:request:create', onCreate);
  subscribe('undici:request:headers', onHeaders);
  subscribe('undici:request:trailers', onTrailers);
  subscribe('undici:request:error', onError);
}
