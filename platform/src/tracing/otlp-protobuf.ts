import { AttributeSet } from './attribute-set.js';
import type { SpanBatch, TraceOrigin } from './batch.js';
import { BATCHES_KEPT, BatchMemory } from './batch-memory.js';
import { ProtobufWriter, putVarint, varintSize } from './protobuf-writer.js';
import type { AttributeList, Span } from './span.js';
import type { SpanAttributeValue } from './types.js';
import { unixNanos, writeNanosLE } from './unix-nanos.js';

/**
 * OTLP/HTTP's protobuf encoding of spans (opentelemetry-proto's trace.proto and common.proto), written as each span
 * ends into the batch it will be exported in. Fields go in the order, and with the defaults, the SDK's own
 * serialiser writes (@opentelemetry/otlp-transformer), byte for byte: platform/test/tracing/otlp.test.ts compares
 * the two. Tags are written as their bytes: `0x0a` is field 1 with wire type 2 (length-delimited), and so on.
 */

const MIN_INT64 = -(2 ** 63);
const MAX_INT64 = 2 ** 63;

/** common.proto AnyValue. */
function anyValue(writer: ProtobufWriter, value: SpanAttributeValue): void {
  switch (typeof value) {
    case 'string':
      writer.byte(0x0a);
      writer.string(value);
      return;
    case 'boolean':
      writer.byte(0x10);
      writer.byte(value ? 1 : 0);
      return;
    case 'number':
      if (Number.isInteger(value) && value >= MIN_INT64 && value < MAX_INT64) {
        writer.byte(0x18);
        writer.varint(value);
      } else {
        writer.byte(0x21);
        writer.double(value);
      }
      return;
    default: {
      // ArrayValue { repeated AnyValue values = 1 }
      writer.byte(0x2a);
      const array = writer.begin();
      for (const item of value) {
        writer.byte(0x0a);
        const element = writer.begin();
        anyValue(writer, item);
        writer.finish(element);
      }
      writer.finish(array);
    }
  }
}

/** KeyValue { key = 1; value = 2 } under the tag byte `tag`. */
function keyValue(writer: ProtobufWriter, tag: number, key: string, value: SpanAttributeValue): void {
  writer.byte(tag);
  const message = writer.begin();
  writer.byte(0x0a);
  writer.string(key);
  writer.byte(0x12);
  const anyValueMessage = writer.begin();
  anyValue(writer, value);
  writer.finish(anyValueMessage);
  writer.finish(message);
}

/** A set's key-values as Span attributes (field 9), written once. */
function setBytes(set: AttributeSet): Buffer {
  if (set.protobuf === undefined) {
    const writer = new ProtobufWriter(Buffer.allocUnsafe(256));
    for (const [key, value] of set.entries) keyValue(writer, 0x4a, key, value);
    set.protobuf = Buffer.from(writer.buffer.subarray(0, writer.pos));
  }
  return set.protobuf;
}

/** Repeated KeyValue under the tag byte `tag`: 0x4a for a Span's attributes, where sets may be. */
function keyValues(writer: ProtobufWriter, tag: number, attributes: AttributeList): void {
  for (let i = 0; i < attributes.length; i += 2) {
    const key = attributes[i];
    if (key instanceof AttributeSet) writer.raw(setBytes(key));
    else keyValue(writer, tag, key as string, attributes[i + 1] as SpanAttributeValue);
  }
}

function time(writer: ProtobufWriter, tag: number, epochMs: number, offsetMs: number): void {
  writer.ensure(9);
  writer.buffer[writer.pos] = tag;
  writeNanosLE(writer.buffer, writer.pos + 1, unixNanos(epochMs, offsetMs));
  writer.pos += 9;
}

/** ScopeSpans's field 2: one Span. */
function spanField(writer: ProtobufWriter, span: Span): void {
  writer.byte(0x12);
  const message = writer.begin();
  writer.byte(0x0a);
  writer.hexBytes(span.traceId);
  writer.byte(0x12);
  writer.hexBytes(span.spanId);
  if (span.traceState) {
    writer.byte(0x1a);
    writer.string(span.traceState);
  }
  if (span.parentSpanId !== undefined) {
    writer.byte(0x22);
    writer.hexBytes(span.parentSpanId);
  }
  writer.byte(0x2a);
  writer.string(span.name);
  writer.byte(0x30);
  writer.byte(span.kind);
  time(writer, 0x39, span.epochMs, span.start);
  time(writer, 0x41, span.epochMs, span.end);
  keyValues(writer, 0x4a, span.attributes);
  // dropped_attributes_count, dropped_events_count, dropped_links_count: none are dropped, events and links none.
  writer.byte(0x50);
  writer.byte(0);
  writer.byte(0x60);
  writer.byte(0);
  writer.byte(0x70);
  writer.byte(0);
  // Status { message = 2; code = 3 }
  writer.byte(0x7a);
  const status = writer.begin();
  if (span.statusMessage) {
    writer.byte(0x12);
    writer.string(span.statusMessage);
  }
  writer.byte(0x18);
  writer.byte(span.statusCode);
  writer.finish(status);
  // flags = 16, fixed32
  writer.byte(0x85);
  writer.byte(0x01);
  writer.fixed32(span.flags);
  writer.finish(message);
}

/** The Resource and InstrumentationScope fields every batch starts with, encoded once. */
function originFields(origin: TraceOrigin): { resource: Buffer; scope: Buffer } {
  const writer = new ProtobufWriter(Buffer.allocUnsafe(1024));
  // ResourceSpans.resource = 1: Resource { repeated KeyValue attributes = 1; dropped_attributes_count = 2 }
  writer.byte(0x0a);
  const resource = writer.begin();
  keyValues(writer, 0x0a, origin.resource);
  writer.byte(0x10);
  writer.byte(0);
  writer.finish(resource);
  const resourceEnd = writer.pos;
  // ScopeSpans.scope = 1: InstrumentationScope { name = 1; version = 2 }
  writer.byte(0x0a);
  const scope = writer.begin();
  writer.byte(0x0a);
  writer.string(origin.scopeName);
  writer.finish(scope);
  return {
    resource: Buffer.from(writer.buffer.subarray(0, resourceEnd)),
    scope: Buffer.from(writer.buffer.subarray(resourceEnd, writer.pos)),
  };
}

/** Batches of spans in OTLP protobuf: an ExportTraceServiceRequest of one resource and one scope. */
export function protobufBatches(origin: TraceOrigin): () => SpanBatch {
  const { resource, scope } = originFields(origin);
  // The request's first bytes are written last, in front of the spans, once their length is known.
  const room = 1 + 5 + resource.length + 1 + 5 + scope.length;
  const memory = new BatchMemory(64 * 1024, BATCHES_KEPT);

  class ProtobufBatch implements SpanBatch {
    count = 0;
    private readonly writer = new ProtobufWriter(memory.take(), room);

    add(span: Span): void {
      spanField(this.writer, span);
      this.count++;
    }

    bytes(): Uint8Array {
      const { buffer, pos } = this.writer;
      const scopeSpans = scope.length + (pos - room);
      const resourceSpans = resource.length + 1 + varintSize(scopeSpans) + scopeSpans;
      const start =
        room - (1 + varintSize(resourceSpans) + resource.length + 1 + varintSize(scopeSpans) + scope.length);
      // ExportTraceServiceRequest.resource_spans = 1, ResourceSpans.scope_spans = 2.
      buffer[start] = 0x0a;
      let at = putVarint(buffer, start + 1, resourceSpans);
      at += resource.copy(buffer, at);
      buffer[at] = 0x12;
      at = putVarint(buffer, at + 1, scopeSpans);
      scope.copy(buffer, at);
      return buffer.subarray(start, pos);
    }

    release(): void {
      memory.give(this.writer.buffer);
    }
  }

  return () => new ProtobufBatch();
}
