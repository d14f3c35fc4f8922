import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OTLP/HTTP trace receiver of the tests' own, on a loopback port: it takes `POST /v1/traces` in both encodings
 * the processes export (http/json and http/protobuf, told apart by Content-Type) and keeps every span, with its
 * service's name. The protobuf is read with the few fields of the OTLP trace messages the tests look at
 * (opentelemetry-proto's trace.proto and common.proto), straight from the wire format.
 */

/** A span as received, its ids in lower-case hex, its attributes as plain values. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  /** OTLP's StatusCode: 0 unset, 1 ok, 2 error. */
  statusCode: number;
}

export const SPAN_KIND = { server: 2, client: 3 } as const;

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: an OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** The Content-Type of every export request, in arrival order. */
  contentTypes: string[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const type = req.headers['content-type'] ?? '';
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      contentTypes.push(type);
      const body = Buffer.concat(chunks);
      const json = type.startsWith('application/json');
      spans.push(...(json ? spansOfJson(JSON.parse(body.toString('utf8')) as JsonRequest) : spansOfProtobuf(body)));
      // An empty ExportTraceServiceResponse: full success.
      if (json) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---- http/json (ids in hex, int64 as strings, enums as numbers) ---------------------------------------

interface JsonAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: JsonAnyValue[] };
}
interface JsonKeyValue {
  key: string;
  value: JsonAnyValue;
}
interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: JsonKeyValue[];
  status?: { code?: number };
}
interface JsonRequest {
  resourceSpans?: {
    resource?: { attributes?: JsonKeyValue[] };
    scopeSpans?: { spans?: JsonSpan[] }[];
  }[];
}

function jsonValue(value: JsonAnyValue): unknown {
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(jsonValue);
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.boolValue ?? value.doubleValue;
}

const jsonAttributes = (list: JsonKeyValue[] = []): Record<string, unknown> =>
  Object.fromEntries(list.map(({ key, value }) => [key, jsonValue(value)]));

function spansOfJson(request: JsonRequest): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const service = String(jsonAttributes(resourceSpans.resource?.attributes)['service.name']);
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        service,
        traceId: span.traceId.toLowerCase(),
        spanId: span.spanId.toLowerCase(),
        parentSpanId: (span.parentSpanId ?? '').toLowerCase(),
        name: span.name,
        kind: span.kind,
        attributes: jsonAttributes(span.attributes),
        statusCode: span.status?.code ?? 0,
      })),
    );
  });
}

// ---- http/protobuf (protobuf's wire format) -----------------------------------------------------------

interface Field {
  number: number;
  /** A varint or fixed64 as a bigint, a length-delimited field as its bytes. */
  value: bigint | Buffer;
}

function readVarint(bytes: Buffer, at: number): [bigint, number] {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    const byte = bytes[at++] as number;
    result |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return [result, at];
    shift += 7n;
  }
}

/** The fields of one message, in order. */
function fieldsOf(bytes: Buffer): Field[] {
  const fields: Field[] = [];
  let at = 0;
  while (at < bytes.length) {
    const [key, next] = readVarint(bytes, at);
    at = next;
    const number = Number(key >> 3n);
    switch (Number(key & 7n)) {
      case 0: {
        const [value, after] = readVarint(bytes, at);
        fields.push({ number, value });
        at = after;
        break;
      }
      case 1:
        fields.push({ number, value: bytes.readBigUInt64LE(at) });
        at += 8;
        break;
      case 2: {
        const [length, after] = readVarint(bytes, at);
        fields.push({ number, value: bytes.subarray(after, after + Number(length)) });
        at = after + Number(length);
        break;
      }
      case 5:
        fields.push({ number, value: BigInt(bytes.readUInt32LE(at)) });
        at += 4;
        break;
      default:
        throw new Error(`unsupported protobuf wire type in field ${number}`);
    }
  }
  return fields;
}

const all = (fields: Field[], number: number): Buffer[] =>
  fields.filter((field) => field.number === number).map((field) => field.value as Buffer);
const one = (fields: Field[], number: number): Field['value'] | undefined =>
  fields.find((field) => field.number === number)?.value;

/** common.proto AnyValue: 1 string, 2 bool, 3 int, 4 double, 5 array. */
function protobufValue(bytes: Buffer): unknown {
  const [field] = fieldsOf(bytes);
  if (field === undefined) return undefined;
  switch (field.number) {
    case 1:
      return (field.value as Buffer).toString('utf8');
    case 2:
      return field.value === 1n;
    case 3:
      return Number(BigInt.asIntN(64, field.value as bigint));
    case 4: {
      const double = Buffer.alloc(8);
      double.writeBigUInt64LE(field.value as bigint);
      return double.readDoubleLE();
    }
    case 5:
      return all(fieldsOf(field.value as Buffer), 1).map(protobufValue);
    default:
      return undefined;
  }
}

/** Repeated KeyValue (1 key, 2 value). */
function protobufAttributes(list: Buffer[]): Record<string, unknown> {
  return Object.fromEntries(
    list.map((bytes) => {
      const fields = fieldsOf(bytes);
      const value = one(fields, 2);
      return [String(one(fields, 1)), value === undefined ? undefined : protobufValue(value as Buffer)];
    }),
  );
}

/**
 * ExportTraceServiceRequest: 1 ResourceSpans (1 Resource: 1 attributes; 2 ScopeSpans: 2 Span). Span: 1 trace_id,
 * 2 span_id, 4 parent_span_id, 5 name, 6 kind, 9 attributes, 15 status (3 code).
 */
function spansOfProtobuf(body: Buffer): ReceivedSpan[] {
  return all(fieldsOf(body), 1).flatMap((resourceSpansBytes) => {
    const resourceSpans = fieldsOf(resourceSpansBytes);
    const resource = one(resourceSpans, 1) as Buffer | undefined;
    const service = String(
      protobufAttributes(resource === undefined ? [] : all(fieldsOf(resource), 1))['service.name'],
    );
    return all(resourceSpans, 2).flatMap((scopeBytes) =>
      all(fieldsOf(scopeBytes), 2).map((spanBytes) => {
        const span = fieldsOf(spanBytes);
        const hex = (number: number) => ((one(span, number) as Buffer | undefined) ?? Buffer.alloc(0)).toString('hex');
        const status = one(span, 15) as Buffer | undefined;
        return {
          service,
          traceId: hex(1),
          spanId: hex(2),
          parentSpanId: hex(4),
          name: String(one(span, 5)),
          kind: Number(one(span, 6) ?? 0),
          attributes: protobufAttributes(all(span, 9)),
          statusCode: status === undefined ? 0 : Number(one(fieldsOf(status), 3) ?? 0),
        };
      }),
    );
  });
}
