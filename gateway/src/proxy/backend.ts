import type { FastifyReplyFromHooks } from '@fastify/reply-from';
import type { FastifyReply } from 'fastify';
import { isAscii } from 'node:buffer';
import type { Readable } from 'node:stream';
import { Pool } from 'undici';
import { sendError } from '@version-router/platform/errors';
import { cutResponse } from '@version-router/platform/http-foundation';
import { API_KEY_HEADER } from '../consumers/authenticate.js';
import { API_CONSUMER_HEADER, GATEWAY_OWNED_REQUEST_HEADERS, forwardedHeader, hopElement } from './owned-headers.js';

/** Connecting is bounded separately and tighter: on a private network a backend that takes longer is down. */
const CONNECT_TIMEOUT_CAP_MS = 2_000;

/**
 * One keep-alive pool to the backend, shared by every proxied route. undici's defaults wait 300 s for
 * headers and body; the client gets a 504 after BACKEND_TIMEOUT_MS instead, below the 10 s write deadline.
 */
export function createBackendPool(backendUrl: string, timeoutMs: number): Pool {
  return new Pool(backendUrl, {
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connect: { timeout: Math.min(timeoutMs, CONNECT_TIMEOUT_CAP_MS) },
    // Bounded so a burst cannot open unbounded sockets to the backend.
    connections: 128,
  });
}

/**
 * Headers the backend gets: the gateway's request id (the client's own when it is sane); the hop as the gateway saw
 * it, appended to X-Forwarded-For and to Forwarded (RFC 7239), and as X-Forwarded-Proto, X-Forwarded-Host and
 * X-Real-IP in place of the client's; the authenticated consumer as API-Consumer (never the key); none of the headers
 * the gateway owns as the client sent them (owned-headers.ts); and none that undici refuses to send. undici throws on
 * `Expect` (curl sends `Expect: 100-continue` for larger bodies; Node already answered 100 to the client), on
 * `Keep-Alive` and on `Upgrade`, which would turn an ordinary request into a 502. Options that add a header of the
 * gateway's own (translated.ts) call this first, then set it.
 */
const rewriteRequestHeaders: FastifyReplyFromHooks['rewriteRequestHeaders'] = (request, headers) => {
  const raw = request.raw.headers;
  const clientIp = request.ip;
  const forwardedFor = raw['x-forwarded-for'];
  headers['x-request-id'] = request.id;
  // Tracing: the upstream's parent is the gateway's client span, in place of the client's traceparent (docs/tracing.md).
  if (request.trace !== null) request.trace.forward(headers);
  headers['x-forwarded-for'] = forwardedFor === undefined ? clientIp : `${String(forwardedFor)}, ${clientIp}`;
  headers['x-forwarded-proto'] = 'http';
  headers['x-forwarded-host'] = raw.host;
  const hop = hopElement(request.raw.socket, clientIp, raw.host);
  headers.forwarded = raw.forwarded === undefined ? hop : forwardedHeader(raw.forwarded, hop);
  headers['x-real-ip'] = clientIp;
  // Written only when present: most requests carry none of these, and each added key is one more for undici to walk.
  if (headers.expect !== undefined) headers.expect = undefined;
  if (headers['keep-alive'] !== undefined) headers['keep-alive'] = undefined;
  if (headers.upgrade !== undefined) headers.upgrade = undefined;
  if (headers[API_KEY_HEADER] !== undefined) headers[API_KEY_HEADER] = undefined;
  for (let i = 0; i < GATEWAY_OWNED_REQUEST_HEADERS.length; i++) {
    const name = GATEWAY_OWNED_REQUEST_HEADERS[i] as string;
    if (headers[name] !== undefined) headers[name] = undefined;
  }
  const consumer = request.consumer;
  if (consumer !== null) headers[API_CONSUMER_HEADER] = consumer;
  if (request.body === undefined) {
    // Fastify does not read bodies of GET/HEAD; announcing one would make undici fail on the mismatch.
    if (headers['content-length'] !== undefined) headers['content-length'] = undefined;
    if (headers['transfer-encoding'] !== undefined) headers['transfer-encoding'] = undefined;
  }
  return headers;
};

/**
 * reply-from maps a refused connection to a 500 whose message holds the backend's address, and only
 * timeouts to 504. Ours: refused/reset → 502 `bad gateway`, no answer in time → 504 `gateway timeout`,
 * both without internal details (reply-from has already logged the cause).
 */
const answerBackendFailure: FastifyReplyFromHooks['onError'] = (reply, { error }) => {
  // Our server is plain HTTP/1.1, so the reply is the default one.
  const ours = reply as FastifyReply;
  const timedOut = (error as { statusCode?: number }).statusCode === 504;
  void (timedOut ? sendError(ours, 504, 'gateway timeout') : sendError(ours, 502, 'bad gateway'));
};

type ResponseHeaders = Parameters<NonNullable<FastifyReplyFromHooks['rewriteHeaders']>>[0];

/**
 * The backend's response headers without the hop-by-hop ones (RFC 9110 §7.6.1: they describe the backend
 * connection, not the response; those below and any its Connection header names) and without `omitted`
 * (lower-case names, as undici delivers them). Copied into a new object rather than `delete`d from undici's:
 * a deleted key turns an object into a slower dictionary for every read after it (bench/README.md).
 */
export function copyEndToEndHeaders(headers: ResponseHeaders, omitted?: ReadonlySet<string>): ResponseHeaders {
  const connection = headers.connection;
  // The two values a backend sends in practice name no header besides the ones dropped anyway.
  const named =
    connection === undefined || connection === 'keep-alive' || connection === 'close'
      ? undefined
      : String(connection)
          .toLowerCase()
          .split(',')
          .map((name) => name.trim());
  const kept: ResponseHeaders = {};
  for (const name of Object.keys(headers)) {
    switch (name) {
      case 'connection':
      case 'keep-alive':
      case 'proxy-connection':
      case 'upgrade':
      case 'trailer':
        continue;
    }
    if (omitted?.has(name) === true || named?.includes(name) === true) continue;
    kept[name] = headers[name];
  }
  return kept;
}

/**
 * reply-from copies every header it is given, so a backend `Connection: close` or `Keep-Alive: timeout=…` would reach
 * the client.
 */
const dropHopByHopHeaders: NonNullable<FastifyReplyFromHooks['rewriteHeaders']> = (headers) =>
  copyEndToEndHeaders(headers);

/**
 * Bodies up to this size are collected and sent on in one piece instead of streamed: the backend's answers, and
 * requests' bodies (forwarding.ts).
 */
export const SMALL_BODY_BYTES = 16 * 1024;

/** What reply-from hands onResponse for an undici upstream (its typings name the server response instead). */
export interface UpstreamResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  stream: Readable;
}

/**
 * A small upstream body with a known length is collected and sent with `reply.send(buffer)`, which Fastify
 * finishes in one `res.end`: no stream pipe, end-of-stream listeners and stream ticks per request.
 * Anything else (no or a larger Content-Length, no Content-Type, HEAD, bodiless statuses) is streamed as
 * reply-from does by default. A body that fails half-way ends the connection as a failed stream would.
 */
const sendSmallBodiesWhole: FastifyReplyFromHooks['onResponse'] = (request, reply, raw) => {
  const res = raw as unknown as UpstreamResponse;
  const length = Number(res.headers['content-length']);
  if (
    !(length <= SMALL_BODY_BYTES) ||
    res.headers['content-type'] === undefined ||
    request.method === 'HEAD' ||
    res.statusCode === 204 ||
    res.statusCode === 304
  ) {
    void reply.send(res.stream);
    return;
  }
  const asText = keepsItsTypeAsText(String(res.headers['content-type']));
  readUpstreamBody(reply as FastifyReply, res.stream, (body) => {
    // Node writes a string body and the response head as one string in one write(2); a Buffer body goes
    // out beside the head in a writev(2) of two pieces, the dearer path (bench/README.md). An ASCII body
    // is the same bytes as a string; any other is sent as the bytes it came as.
    void reply.send(asText && isAscii(body) ? body.toString('latin1') : body);
  });
};

const JSON_MEDIA_TYPE = /json/i;
const CHARSET_PARAMETER = /;\s*charset\s*=/i;

/**
 * Given a string, Fastify appends `; charset=utf-8` to a JSON Content-Type that names no charset (e.g. the
 * bare `application/json` of a 408 the backend's Node writes itself); a Buffer keeps the backend's header
 * as it came. Only a type Fastify leaves alone may go as text.
 */
export function keepsItsTypeAsText(contentType: string): boolean {
  return !JSON_MEDIA_TYPE.test(contentType) || CHARSET_PARAMETER.test(contentType);
}

/**
 * Reads an upstream body whole, then hands it on. The upstream headers (its Content-Length among them)
 * are already on the reply, so a failure before the first byte answers our 502 without them, and one
 * half-way ends the connection, as a failed stream would: the client must not take a cut body for whole.
 */
export function readUpstreamBody(reply: FastifyReply, stream: Readable, onBody: (body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  let received = 0;
  stream.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    received += chunk.length;
  });
  stream.once('end', () => onBody(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, received)));
  stream.once('error', () => {
    if (received > 0) cutResponse(reply, 502);
    else void sendError(reply.removeHeader('content-length').removeHeader('transfer-encoding'), 502, 'bad gateway');
  });
}

/** reply-from retries GETs on 503 up to 10 times even with maxRetriesOn503: 0 (`|| 10`); null turns it off. */
const noRetry = (): null => null;

/** reply.from options every proxied route shares. */
export const backendReplyOptions: FastifyReplyFromHooks = {
  rewriteRequestHeaders,
  rewriteHeaders: dropHopByHopHeaders,
  onError: answerBackendFailure,
  retryDelay: noRetry,
  onResponse: sendSmallBodiesWhole,
};
