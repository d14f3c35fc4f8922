import { z } from 'zod';
import { readEnv } from '../config.js';

/** The OTLP encodings the exporters ship: protobuf (the specification's default) and JSON, both over HTTP. */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** OTEL_TRACES_SAMPLER values the SDK has built in (the remote Jaeger and X-Ray samplers are not shipped). */
export type SamplerName =
  | 'always_on'
  | 'always_off'
  | 'traceidratio'
  | 'parentbased_always_on'
  | 'parentbased_always_off'
  | 'parentbased_traceidratio';

/** What a process traces with, read from the standard OTEL_* variables (docs/tracing.md#turning-tracing-on). */
export interface TracingConfig {
  /** The process's own name (`gateway`, `users-orders`): the service name unless one is set. */
  processName: string;
  /** OTEL_SERVICE_NAME: wins over a `service.name` in OTEL_RESOURCE_ATTRIBUTES; undefined when unset. */
  serviceName: string | undefined;
  /** OTEL_RESOURCE_ATTRIBUTES as given (`key=value,…`), parsed by the SDK; undefined when unset. */
  resourceAttributes: string | undefined;
  /** Where spans are sent: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, or OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`. */
  endpoint: string;
  protocol: OtlpProtocol;
  sampler: SamplerName;
  /** OTEL_TRACES_SAMPLER_ARG: the share of new traces a ratio sampler records (0 to 1). */
  ratio: number;
  /** The batch span processor's OTEL_BSP_* settings. */
  batch: {
    scheduledDelayMillis: number;
    exportTimeoutMillis: number;
    maxQueueSize: number;
    maxExportBatchSize: number;
  };
}

/** Where the specification's SDKs send spans when only OTEL_TRACES_EXPORTER=otlp is set. */
const DEFAULT_ENDPOINT = 'http://localhost:4318/';
const TRACES_PATH = 'v1/traces';

const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const satisfies readonly SamplerName[];

const booleanSchema = z
  .string()
  .transform((text) => text.toLowerCase())
  .pipe(z.enum(['true', 'false'], { error: 'must be true or false' }))
  .transform((text) => text === 'true');

const exporterSchema = z.enum(['otlp', 'none'], { error: 'must be otlp or none (the exporters this image ships)' });

/** An http(s) URL; '' (unset) where `unset` allows it. */
const urlSchema = (unset: boolean) =>
  z
    .string()
    .refine(
      (text) => (unset && text === '') || (URL.canParse(text) && ['http:', 'https:'].includes(new URL(text).protocol)),
      'must be an http:// or https:// URL such as http://otel-collector:4318',
    );

const protocolSchema = z.enum(['http/protobuf', 'http/json', ''], {
  error: 'must be http/protobuf or http/json (grpc is not shipped)',
});

const samplerSchema = z.enum(SAMPLERS, { error: `must be one of ${SAMPLERS.join(', ')}` });

const ratioSchema = z
  .string()
  .regex(/^\s*(0|1|0?\.\d+|1\.0*)\s*$/, 'must be a number from 0 to 1')
  .transform(Number);

const positiveIntegerSchema = (what: string) =>
  z
    .string()
    .regex(/^\d{1,9}$/, `must be a whole number of ${what}`)
    .transform(Number)
    .refine((value) => value > 0, `must be a whole number of ${what}, above 0`);

/** W3C Trace Context is what the gateway continues and propagates; baggage passes through as any other header. */
const propagatorsSchema = z
  .string()
  .refine(
    (text) => text.split(',').every((name) => ['tracecontext', 'baggage'].includes(name.trim())),
    'must list tracecontext (and baggage, which passes through unchanged); no other propagator is shipped',
  );

/** The specification treats an empty variable as an unset one. */
function setOnly(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const kept: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) if (name.startsWith('OTEL_') && value !== '') kept[name] = value;
  return kept;
}

/**
 * Tracing is on when an OTLP endpoint is named (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT) or
 * OTEL_TRACES_EXPORTER=otlp asks for the default one; OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn it off
 * whatever else is set. Undefined: off, and the SDK is never loaded. Every variable is checked whenever tracing is
 * not disabled, so a typo stops the start (ConfigError naming it) before the day an endpoint is set.
 */
export function readTracingConfig(env: NodeJS.ProcessEnv, processName: string): TracingConfig | undefined {
  const otel = setOnly(env);
  const { OTEL_SDK_DISABLED: disabled } = readEnv(otel, {
    OTEL_SDK_DISABLED: { schema: booleanSchema, default: 'false' },
  });
  if (disabled) return undefined;
  const vars = readEnv(otel, {
    OTEL_TRACES_EXPORTER: { schema: exporterSchema, default: 'otlp' },
    OTEL_EXPORTER_OTLP_ENDPOINT: { schema: urlSchema(false), default: DEFAULT_ENDPOINT },
    // The signal's own variables win over the general ones ('': unset).
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: { schema: urlSchema(true), default: '' },
    OTEL_EXPORTER_OTLP_PROTOCOL: { schema: protocolSchema, default: 'http/protobuf' },
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: { schema: protocolSchema, default: '' },
    OTEL_TRACES_SAMPLER: { schema: samplerSchema, default: 'parentbased_always_on' },
    OTEL_PROPAGATORS: { schema: propagatorsSchema, default: 'tracecontext,baggage' },
    OTEL_BSP_SCHEDULE_DELAY: { schema: positiveIntegerSchema('milliseconds'), default: '5000' },
    OTEL_BSP_EXPORT_TIMEOUT: { schema: positiveIntegerSchema('milliseconds'), default: '30000' },
    OTEL_BSP_MAX_QUEUE_SIZE: { schema: positiveIntegerSchema('spans'), default: '2048' },
    OTEL_BSP_MAX_EXPORT_BATCH_SIZE: { schema: positiveIntegerSchema('spans'), default: '512' },
  });
  const ratio = vars.OTEL_TRACES_SAMPLER.endsWith('traceidratio')
    ? readEnv(otel, { OTEL_TRACES_SAMPLER_ARG: { schema: ratioSchema, default: '1' } }).OTEL_TRACES_SAMPLER_ARG
    : 1;
  const named = otel.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined || otel.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined;
  if (vars.OTEL_TRACES_EXPORTER === 'none' || (!named && otel.OTEL_TRACES_EXPORTER === undefined)) return undefined;
  return {
    processName,
    serviceName: otel.OTEL_SERVICE_NAME,
    resourceAttributes: otel.OTEL_RESOURCE_ATTRIBUTES,
    endpoint: vars.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || withTracesPath(vars.OTEL_EXPORTER_OTLP_ENDPOINT),
    protocol: vars.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || vars.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf',
    sampler: vars.OTEL_TRACES_SAMPLER,
    ratio,
    batch: {
      scheduledDelayMillis: vars.OTEL_BSP_SCHEDULE_DELAY,
      exportTimeoutMillis: vars.OTEL_BSP_EXPORT_TIMEOUT,
      maxQueueSize: vars.OTEL_BSP_MAX_QUEUE_SIZE,
      // The SDK caps a batch at the queue's size.
      maxExportBatchSize: Math.min(vars.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, vars.OTEL_BSP_MAX_QUEUE_SIZE),
    },
  };
}

/** The general endpoint is a base: the signal's path goes after it (`http://c:4318` → `http://c:4318/v1/traces`). */
function withTracesPath(base: string): string {
  return `${base.endsWith('/') ? base : `${base}/`}${TRACES_PATH}`;
}
