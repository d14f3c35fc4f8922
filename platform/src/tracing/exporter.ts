import { ExportResultCode } from '@opentelemetry/core';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { Logger } from 'pino';
import type { BatchExporter, SpanBatch } from './batch.js';
import type { OtlpProtocol } from './config.js';

const CONTENT_TYPES: Record<OtlpProtocol, string> = {
  'http/protobuf': 'application/x-protobuf',
  'http/json': 'application/json',
};

/**
 * OTLP over HTTP with the SDK's own transport (@opentelemetry/otlp-exporter-base, as its OTLPTraceExporter classes
 * build it): the OTEL_EXPORTER_OTLP_* headers, timeout, compression and certificates, retries with back-off on 429
 * and 5xx, the partial-success answer. Only the encoding is ours: a batch arrives encoded (otlp-protobuf.ts,
 * otlp-json.ts). The log is told when spans stop reaching the collector and when they reach it again, one line
 * each, not one per failed batch (every few seconds while a collector is down).
 */
export function otlpHttpExporter(endpoint: string, protocol: OtlpProtocol, logger: Logger): BatchExporter {
  const answers = protocol === 'http/json' ? JsonTraceSerializer : ProtobufTraceSerializer;
  const delegate = createOtlpHttpExportDelegate<SpanBatch, unknown>(
    convertLegacyHttpOptions({ url: endpoint }, 'TRACES', 'v1/traces', { 'Content-Type': CONTENT_TYPES[protocol] }),
    { serializeRequest: (batch) => batch.bytes(), deserializeResponse: (data) => answers.deserializeResponse(data) },
    'otlp_http_span_exporter',
    { name: 'span', countItems: (batch) => batch.count },
    undefined,
  );
  let failing = false;
  return {
    export(batch, done) {
      delegate.export(batch, (result) => {
        if (result.code !== ExportResultCode.SUCCESS && !failing) {
          failing = true;
          logger.warn(
            { err: result.error, endpoint },
            'trace export failed; spans are dropped until the collector answers',
          );
        } else if (result.code === ExportResultCode.SUCCESS && failing) {
          failing = false;
          logger.info({ endpoint }, 'trace export works again');
        }
        done();
      });
    },
    shutdown: () => delegate.shutdown(),
  };
}
