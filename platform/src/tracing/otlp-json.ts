import { AttributeSet } from './attribute-set.js';
import type { SpanBatch, TraceOrigin } from './batch.js';
import { BATCHES_KEPT, BatchMemory } from './batch-memory.js';
import { JsonWriter } from './json-writer.js';
import type { AttributeList, Span } from './span.js';
import type { SpanAttributeValue } from './types.js';
import { unixNanos } from './unix-nanos.js';

/**
 * OTLP/HTTP's JSON encoding of spans (ids in hex, 64-bit integers as decimal strings, enums as numbers), written as
 * each span ends into the batch it will be exported in. The text is the SDK's own serialiser's
 * (@opentelemetry/otlp-transformer), fields in its order: platform/test/tracing/otlp.test.ts compares the two.
 */

function anyValue(writer: JsonWriter, value: SpanAttributeValue): void {
  switch (typeof value) {
    case 'string':
      writer.ascii('{"stringValue":');
      writer.string(value);
      writer.ascii('}');
      return;
    case 'boolean':
      writer.ascii(value ? '{"boolValue":true}' : '{"boolValue":false}');
      return;
    case 'number':
      // JSON.stringify's numbers: NaN and the infinities as null.
      writer.ascii(Number.isInteger(value) ? '{"intValue":' : '{"doubleValue":');
      writer.ascii(JSON.stringify(value));
      writer.ascii('}');
      return;
    default: {
      writer.ascii('{"arrayValue":{"values":[');
      for (let i = 0; i < value.length; i++) {
        if (i > 0) writer.ascii(',');
        anyValue(writer, value[i] as string);
      }
      writer.ascii(']}}');
    }
  }
}

function keyValue(writer: JsonWriter, key: string, value: SpanAttributeValue): void {
  writer.ascii('{"key":');
  writer.string(key);
  writer.ascii(',"value":');
  anyValue(writer, value);
  writer.ascii('}');
}

/** A set's key-values as a fragment of a JSON array, written once. */
function setBytes(set: AttributeSet): Buffer {
  if (set.json === undefined) {
    const writer = new JsonWriter(Buffer.allocUnsafe(256));
    set.entries.forEach(([key, value], i) => {
      if (i > 0) writer.ascii(',');
      keyValue(writer, key, value);
    });
    set.json = Buffer.from(writer.buffer.subarray(0, writer.pos));
  }
  return set.json;
}

/** An array of KeyValue, without its brackets. */
function keyValues(writer: JsonWriter, attributes: AttributeList): void {
  for (let i = 0; i < attributes.length; i += 2) {
    if (i > 0) writer.ascii(',');
    const key = attributes[i];
    if (key instanceof AttributeSet) writer.raw(setBytes(key));
    else keyValue(writer, key as string, attributes[i + 1] as SpanAttributeValue);
  }
}

/** A 64-bit nanosecond time as a decimal string. */
function time(writer: JsonWriter, epochMs: number, offsetMs: number): void {
  const { seconds, nanos } = unixNanos(epochMs, offsetMs);
  writer.ascii('"');
  if (seconds > 0) {
    writer.digits(seconds);
    writer.digits(nanos, 9);
  } else {
    writer.digits(nanos);
  }
  writer.ascii('"');
}

function span(writer: JsonWriter, span: Span): void {
  writer.ascii('{"traceId":"');
  writer.ascii(span.traceId);
  writer.ascii('","spanId":"');
  writer.ascii(span.spanId);
  writer.ascii('"');
  if (span.parentSpanId !== undefined) {
    writer.ascii(',"parentSpanId":"');
    writer.ascii(span.parentSpanId);
    writer.ascii('"');
  }
  if (span.traceState !== undefined) {
    writer.ascii(',"traceState":');
    writer.string(span.traceState);
  }
  writer.ascii(',"name":');
  writer.string(span.name);
  writer.ascii(',"kind":');
  writer.digits(span.kind);
  writer.ascii(',"startTimeUnixNano":');
  time(writer, span.epochMs, span.start);
  writer.ascii(',"endTimeUnixNano":');
  time(writer, span.epochMs, span.end);
  writer.ascii(',"attributes":[');
  keyValues(writer, span.attributes);
  writer.ascii('],"droppedAttributesCount":0,"events":[],"droppedEventsCount":0,"status":{"code":');
  writer.digits(span.statusCode);
  if (span.statusMessage !== undefined) {
    writer.ascii(',"message":');
    writer.string(span.statusMessage);
  }
  writer.ascii('},"links":[],"droppedLinksCount":0,"flags":');
  writer.digits(span.flags);
  writer.ascii('}');
}

/** Batches of spans in OTLP JSON: an ExportTraceServiceRequest of one resource and one scope. */
export function jsonBatches(origin: TraceOrigin): () => SpanBatch {
  const head = new JsonWriter(Buffer.allocUnsafe(1024));
  head.ascii('{"resourceSpans":[{"resource":{"attributes":[');
  keyValues(head, origin.resource);
  head.ascii('],"droppedAttributesCount":0},"scopeSpans":[{"scope":{"name":');
  head.string(origin.scopeName);
  head.ascii('},"spans":[');
  const start = Buffer.from(head.buffer.subarray(0, head.pos));
  const memory = new BatchMemory(128 * 1024, BATCHES_KEPT);

  class JsonBatch implements SpanBatch {
    count = 0;
    private readonly writer = new JsonWriter(memory.take());
    private body: Uint8Array | undefined;

    constructor() {
      this.writer.raw(start);
    }

    add(ended: Span): void {
      if (this.count++ > 0) this.writer.ascii(',');
      span(this.writer, ended);
    }

    bytes(): Uint8Array {
      if (this.body === undefined) {
        const { writer } = this;
        writer.ascii(']}]}]}');
        this.body = writer.buffer.subarray(0, writer.pos);
      }
      return this.body;
    }

    release(): void {
      memory.give(this.writer.buffer);
    }
  }

  return () => new JsonBatch();
}
