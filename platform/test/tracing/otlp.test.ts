import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AttributeSet } from '../../src/tracing/attribute-set.js';
import type { SpanBatch, TraceOrigin } from '../../src/tracing/batch.js';
import { jsonBatches } from '../../src/tracing/otlp-json.js';
import { protobufBatches } from '../../src/tracing/otlp-protobuf.js';
import { Span, SpanKind, spanFlags, type AttributeList, type SpanSink } from '../../src/tracing/span.js';
import type { SpanAttributeValue } from '../../src/tracing/types.js';

/**
 * Our OTLP encoders (otlp-protobuf.ts, otlp-json.ts) against the SDK's own serialisers (@opentelemetry/otlp-transformer)
 * on the same spans: the protobuf byte for byte, the JSON character for character. The SDK is given its ReadableSpan
 * shape of each span, its times computed here with BigInt from the span's Date.now() and monotonic offsets.
 */

/** What a span is made of, as the tests generate it. */
interface SpanSpec {
  traceId: string;
  spanId: string;
  parent: { spanId: string; remote: boolean } | undefined;
  traceState: string | undefined;
  name: string;
  kind: 2 | 3;
  epochMs: number;
  start: number;
  duration: number;
  /** Attributes one by one, then sets of them: [key, value] or a list of [key, value] that goes in as one set. */
  attributes: ([string, SpanAttributeValue] | [string, SpanAttributeValue][])[];
  status: { code: 0 | 2; message: string | undefined };
}

const ORIGIN: TraceOrigin = {
  resource: ['service.name', 'gateway', 'telemetry.sdk.language', 'nodejs', 'deployment.environment', 'tést'],
  scopeName: '@version-router/platform',
};
const RESOURCE = {
  attributes: { 'service.name': 'gateway', 'telemetry.sdk.language': 'nodejs', 'deployment.environment': 'tést' },
};
const SCOPE = { name: '@version-router/platform' };

const ignore: SpanSink = { record: () => undefined };

/** Our span, ended. */
function ours(spec: SpanSpec): Span {
  const list: AttributeList = [];
  const span = new Span(
    ignore,
    spec.traceId,
    spec.spanId,
    spec.parent?.spanId,
    spec.traceState,
    'unnamed',
    spec.kind,
    spanFlags(true, spec.parent?.remote ?? false),
    spec.epochMs,
    0,
    spec.start,
    list,
  );
  span.name = spec.name;
  for (const entry of spec.attributes) {
    if (typeof entry[0] === 'string') span.set(entry[0], entry[1] as SpanAttributeValue);
    else span.add(new AttributeSet(Object.fromEntries(entry as [string, SpanAttributeValue][])));
  }
  if (spec.status.code === 2) span.fail(spec.status.message);
  // The end as finish() would set it, without the clock.
  span.end = spec.start + spec.duration;
  return span;
}

/** Nanoseconds since the epoch as the SDK's HrTime, computed exactly. */
function hrTime(epochMs: number, offsetMs: number): [number, number] {
  const nanos = BigInt(epochMs) * 1_000_000n + BigInt(Math.round(offsetMs * 1e6));
  return [Number(nanos / 1_000_000_000n), Number(nanos % 1_000_000_000n)];
}

/** The SDK's view of the same span: its attributes in our span's order, sets in their place. */
function sdkSpan(spec: SpanSpec, span: Span): ReadableSpan {
  // Without a prototype, so that a key named __proto__ is an attribute like any other.
  const attributes: Record<string, SpanAttributeValue> = Object.create(null) as Record<string, SpanAttributeValue>;
  for (let i = 0; i < span.attributes.length; i += 2) {
    const key = span.attributes[i];
    if (key instanceof AttributeSet) for (const [name, value] of key.entries) attributes[name] = value;
    else attributes[key as string] = span.attributes[i + 1] as SpanAttributeValue;
  }
  const traceState = spec.traceState === undefined ? undefined : { serialize: () => spec.traceState as string };
  return {
    name: spec.name,
    kind: spec.kind - 1,
    spanContext: () => ({ traceId: spec.traceId, spanId: spec.spanId, traceFlags: 1, traceState }),
    parentSpanContext:
      spec.parent === undefined
        ? undefined
        : { traceId: spec.traceId, spanId: spec.parent.spanId, traceFlags: 1, isRemote: spec.parent.remote },
    startTime: hrTime(spec.epochMs, spec.start),
    endTime: hrTime(spec.epochMs, spec.start + spec.duration),
    status: spec.status.code === 2 && spec.status.message !== undefined ? spec.status : { code: spec.status.code },
    attributes,
    links: [],
    events: [],
    duration: [0, 0],
    ended: true,
    resource: RESOURCE,
    instrumentationScope: SCOPE,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  } as unknown as ReadableSpan;
}

function encode(newBatch: () => SpanBatch, spans: Span[]): Buffer {
  const batch = newBatch();
  for (const span of spans) batch.add(span);
  expect(batch.count).toBe(spans.length);
  return Buffer.from(batch.bytes());
}

function expectSdkEquivalent(specs: SpanSpec[]): void {
  const spans = specs.map(ours);
  const sdk = specs.map((spec, i) => sdkSpan(spec, spans[i] as Span));
  expect(encode(protobufBatches(ORIGIN), spans).toString('hex')).toBe(
    Buffer.from(ProtobufTraceSerializer.serializeRequest(sdk) as Uint8Array).toString('hex'),
  );
  expect(encode(jsonBatches(ORIGIN), spans).toString('utf8')).toBe(
    Buffer.from(JsonTraceSerializer.serializeRequest(sdk) as Uint8Array).toString('utf8'),
  );
}

const hex = (bytes: number) =>
  fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((array) => Buffer.from(array).toString('hex'));

/** Text with what needs care: escapes, control characters, non-ASCII, astral and lone surrogates. */
const text = (maxLength: number) =>
  fc.string({
    unit: fc.oneof(
      { weight: 6, arbitrary: fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 1 }) },
      {
        weight: 2,
        arbitrary: fc.constantFrom('"', '\\', '\n', '\u0001', '\u007f', 'é', '→', '\u{1F600}', '\ud800', '\udc00'),
      },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
    ),
    maxLength,
  });

const value: fc.Arbitrary<SpanAttributeValue> = fc.oneof(
  text(60),
  fc.boolean(),
  fc.integer(),
  fc.constantFrom(
    0,
    -0,
    -1,
    2 ** 31,
    2 ** 32,
    2 ** 32 + 1,
    2 ** 53 - 1,
    -(2 ** 53),
    1e20,
    -1e20,
    2 ** 63,
    1.5,
    NaN,
    Infinity,
  ),
  fc.double(),
  fc.array(text(20), { maxLength: 4 }),
);

const spanSpec: fc.Arbitrary<SpanSpec> = fc.record({
  traceId: hex(16),
  spanId: hex(8),
  parent: fc.option(fc.record({ spanId: hex(8), remote: fc.boolean() }), { nil: undefined }),
  traceState: fc.option(text(30), { nil: undefined }),
  name: text(60),
  kind: fc.constantFrom(2 as const, 3 as const),
  // Any day from 2001 to 2100.
  epochMs: fc.integer({ min: 1e12, max: 4.1e12 }),
  start: fc.double({ min: 0, max: 1e8, noNaN: true }),
  duration: fc.double({ min: 0, max: 1e7, noNaN: true }),
  attributes: fc
    // Keys that read as array indices ("0") come first in a JavaScript object, the SDK's attributes: not our order.
    .uniqueArray(
      fc.tuple(
        text(30).filter((key) => key !== '' && !/^\d+$/.test(key)),
        value,
      ),
      {
        selector: ([key]) => key,
        maxLength: 12,
      },
    )
    .chain((entries) =>
      // Some of them grouped into sets, each key in one place only.
      fc.array(fc.boolean(), { minLength: entries.length, maxLength: entries.length }).map((grouped) => {
        const single = entries.filter((_, i) => !grouped[i]);
        const inSets = entries.filter((_, i) => grouped[i]);
        const sets = inSets.length === 0 ? [] : [inSets.slice(0, 2), inSets.slice(2)].filter((set) => set.length > 0);
        return [...single, ...sets];
      }),
    ),
  status: fc.oneof(
    fc.constant({ code: 0 as const, message: undefined }),
    fc.record({ code: fc.constant(2 as const), message: fc.option(text(40), { nil: undefined }) }),
  ),
});

describe('OTLP encoding, against the SDK serialisers', () => {
  const gatewayServerSpan: SpanSpec = {
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    spanId: '00f067aa0ba902b7',
    parent: { spanId: 'b7ad6b7169203331', remote: true },
    traceState: 'vendor=opaque',
    name: 'GET /v1/orders/{id}',
    kind: SpanKind.server,
    epochMs: Date.now(),
    start: 0,
    duration: 12.345678,
    attributes: [
      [
        ['http.request.method', 'GET'],
        ['url.scheme', 'http'],
      ],
      ['url.path', '/v1/orders/ord-1001'],
      ['client.address', '127.0.0.1'],
      [
        ['api.version.requested', '1'],
        ['api.version.selected_by', 'path'],
        ['api.deprecation.phase', 'deprecated'],
      ],
      [
        ['api.version.served', '2'],
        ['api.translation.changes', ['rename user_id → customer_id', 'scale total → total_cents ×100', 'add currency']],
      ],
      [['http.route', '/v1/orders/{id}']],
      [['http.response.status_code', 502]],
      ['error.type', '502'],
    ],
    status: { code: 2, message: undefined },
  };
  const gatewayClientSpan: SpanSpec = {
    ...gatewayServerSpan,
    spanId: '53995c3f42cd8ad8',
    parent: { spanId: '00f067aa0ba902b7', remote: false },
    name: 'GET',
    kind: SpanKind.client,
    start: 0.5,
    duration: 9.4,
    attributes: [
      [['http.request.method', 'GET']],
      ['url.full', 'http://backend:8081/v2/orders/ord-1001'],
      [
        ['server.address', 'backend'],
        ['server.port', 8081],
      ],
    ],
    status: { code: 2, message: 'connect ECONNREFUSED 127.0.0.1:8081' },
  };

  it("encodes the gateway's two spans of a request as the SDK does", () => {
    expectSdkEquivalent([gatewayServerSpan, gatewayClientSpan]);
  });

  it('encodes a root span without attributes, status or trace state as the SDK does', () => {
    expectSdkEquivalent([
      {
        ...gatewayClientSpan,
        parent: undefined,
        traceState: undefined,
        attributes: [],
        status: { code: 0, message: undefined },
      },
    ]);
  });

  it('encodes lengths that take more than one byte: long names, values and spans', () => {
    for (const length of [42, 43, 127, 128, 200, 16_383, 16_384, 70_000]) {
      expectSdkEquivalent([
        {
          ...gatewayServerSpan,
          name: 'n'.repeat(length),
          attributes: [
            ['ascii', 'x'.repeat(length)],
            ['two bytes a character', 'é'.repeat(length)],
            [['array in a set', ['a'.repeat(length), '→']]],
          ],
        },
      ]);
    }
  });

  it('encodes any spans as the SDK does (generated)', () => {
    fc.assert(
      fc.property(fc.array(spanSpec, { minLength: 1, maxLength: 4 }), (specs) => expectSdkEquivalent(specs)),
      { numRuns: 300 },
    );
  });

  it('encodes into memory a released batch leaves behind, also after it had to grow', () => {
    for (const batches of [protobufBatches, jsonBatches]) {
      const newBatch = batches(ORIGIN);
      const large = newBatch();
      large.add(ours({ ...gatewayServerSpan, attributes: [['large', 'x'.repeat(200_000)]] }));
      large.bytes();
      large.release();
      const spans = [ours(gatewayServerSpan), ours(gatewayClientSpan)];
      // Written into the grown buffer the large batch left, over its bytes: as into new memory.
      expect(encode(newBatch, spans).equals(encode(batches(ORIGIN), spans))).toBe(true);
    }
    expectSdkEquivalent([{ ...gatewayServerSpan, attributes: [['large', 'x'.repeat(200_000)]] }]);
  });
});
