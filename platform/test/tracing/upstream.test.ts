import { channel } from 'node:diagnostics_channel';
import { beforeAll, describe, expect, it } from 'vitest';
import { AttributeSet } from '../../src/tracing/attribute-set.js';
import { Span, SpanKind, spanFlags, type SpanSink } from '../../src/tracing/span.js';
import { expectUpstream, forgetUpstream, observeUpstreamCalls } from '../../src/tracing/upstream.js';

/**
 * The client span's end from undici's diagnostics channels (upstream.ts), with the messages undici publishes
 * (lib/core/request.js) sent by hand: the call found by its traceparent, also when another call was forwarded
 * before its request was created.
 */

const undici = {
  create: channel('undici:request:create'),
  headers: channel('undici:request:headers'),
  trailers: channel('undici:request:trailers'),
  error: channel('undici:request:error'),
};

const ended: Span[] = [];
const sink: SpanSink = { record: (span) => ended.push(span) };

function clientSpan(spanId: string): { span: Span; traceparent: string } {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const span = new Span(
    sink,
    traceId,
    spanId,
    '00f067aa0ba902b7',
    undefined,
    'GET',
    SpanKind.client,
    spanFlags(true, false),
    Date.now(),
    performance.now(),
    0,
    [],
  );
  return { span, traceparent: `00-${traceId}-${spanId}-01` };
}

/** undici's request as its channels show it. */
const request = (traceparent: string) => ({
  origin: 'http://backend:8081',
  path: '/v2/orders/ord-1001',
  headers: ['host', 'backend:8081', 'traceparent', traceparent, 'x-request-id', 'r-1'],
});

/** The attributes of a span, sets included, as one object. */
function attributesOf(span: Span): Record<string, unknown> {
  const attributes: Record<string, unknown> = {};
  for (let i = 0; i < span.attributes.length; i += 2) {
    const key = span.attributes[i];
    if (key instanceof AttributeSet) Object.assign(attributes, Object.fromEntries(key.entries));
    else attributes[key as string] = span.attributes[i + 1];
  }
  return attributes;
}

beforeAll(() => observeUpstreamCalls());

describe('the upstream call of a client span', () => {
  it('follows a call from its request to the end of its response', () => {
    const { span, traceparent } = clientSpan('1000000000000001');
    expectUpstream(traceparent, span);
    const created = request(traceparent);
    undici.create.publish({ request: created });
    undici.headers.publish({ request: created, response: { statusCode: 503, headers: [], statusText: '' } });
    expect(ended).not.toContain(span);
    undici.trailers.publish({ request: created, trailers: [] });
    expect(ended).toContain(span);
    expect(attributesOf(span)).toEqual({
      'url.full': 'http://backend:8081/v2/orders/ord-1001',
      'server.address': 'backend',
      'server.port': 8081,
      'http.response.status_code': 503,
      'error.type': '503',
    });
    expect(span.statusCode).toBe(2);
    expect(forgetUpstream(traceparent)).toBe(false);
  });

  it('finds a call forwarded before another whose request was created first', () => {
    const first = clientSpan('2000000000000001');
    const second = clientSpan('2000000000000002');
    expectUpstream(first.traceparent, first.span);
    expectUpstream(second.traceparent, second.span);
    const [secondRequest, firstRequest] = [request(second.traceparent), request(first.traceparent)];
    undici.create.publish({ request: secondRequest });
    undici.create.publish({ request: firstRequest });
    undici.error.publish({
      request: firstRequest,
      error: Object.assign(new Error('connect refused'), { code: 'ECONNREFUSED' }),
    });
    undici.trailers.publish({ request: secondRequest, trailers: [] });
    expect(ended).toEqual(expect.arrayContaining([first.span, second.span]));
    expect(first.span.statusMessage).toBe('connect refused');
    expect(attributesOf(first.span)['error.type']).toBe('ECONNREFUSED');
    expect(attributesOf(second.span)['url.full']).toBe('http://backend:8081/v2/orders/ord-1001');
  });

  it("forgets a call whose request was never created, and ignores requests that are not a traced call's", () => {
    const first = clientSpan('3000000000000001');
    const second = clientSpan('3000000000000002');
    expectUpstream(first.traceparent, first.span);
    expectUpstream(second.traceparent, second.span);
    expect(forgetUpstream(first.traceparent)).toBe(true);
    expect(forgetUpstream(second.traceparent)).toBe(true);
    expect(forgetUpstream(second.traceparent)).toBe(false);
    const stranger = request('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    undici.create.publish({ request: stranger });
    undici.trailers.publish({ request: stranger, trailers: [] });
    undici.create.publish({ request: request(first.traceparent) });
    expect(attributesOf(first.span)).toEqual({});
    expect(ended).not.toContain(first.span);
  });
});
