import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { readTracingConfig } from '../../src/tracing/config.js';

const read = (env: NodeJS.ProcessEnv) => readTracingConfig(env, 'gateway');
const refusal = (env: NodeJS.ProcessEnv): string => {
  try {
    read(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('the configuration was accepted');
};

describe('what turns tracing on', () => {
  it('is off when no OTLP endpoint is named and no exporter asked for', () => {
    expect(read({})).toBeUndefined();
    expect(read({ OTEL_SERVICE_NAME: 'api', OTEL_TRACES_SAMPLER: 'always_on' })).toBeUndefined();
  });

  it('is on with either endpoint variable; the general one gets the signal path, the traces one is used as given', () => {
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })?.endpoint).toBe(
      'http://collector:4318/v1/traces',
    );
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/otlp/' })?.endpoint).toBe(
      'http://collector:4318/otlp/v1/traces',
    );
    expect(
      read({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example.com/ingest',
      })?.endpoint,
    ).toBe('https://traces.example.com/ingest');
  });

  it('is on with OTEL_TRACES_EXPORTER=otlp alone, sending to the default endpoint', () => {
    expect(read({ OTEL_TRACES_EXPORTER: 'otlp' })?.endpoint).toBe('http://localhost:4318/v1/traces');
  });

  it('is off with OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED=true, whatever else is set', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(read({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
    expect(read({ ...endpoint, OTEL_SDK_DISABLED: 'TRUE' })).toBeUndefined();
    // Disabled, the other variables are not even read.
    expect(read({ ...endpoint, OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toBeUndefined();
    expect(read({ ...endpoint, OTEL_SDK_DISABLED: 'false' })).toBeDefined();
  });

  it('takes an empty variable for an unset one', () => {
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_TRACES_EXPORTER: '', OTEL_SDK_DISABLED: '' })).toBeUndefined();
    expect(
      read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '' })?.endpoint,
    ).toBe('http://collector:4318/v1/traces');
  });
});

describe('the settings', () => {
  const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };

  it('defaults to http/protobuf, parent-based always-on sampling, the process name and the SDK batch settings', () => {
    expect(read(on)).toEqual({
      processName: 'gateway',
      serviceName: undefined,
      resourceAttributes: undefined,
      endpoint: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      sampler: 'parentbased_always_on',
      ratio: 1,
      batch: { scheduledDelayMillis: 5000, exportTimeoutMillis: 30000, maxQueueSize: 2048, maxExportBatchSize: 512 },
    });
  });

  it('honours both protocols, the traces variable over the general one', () => {
    expect(read({ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })?.protocol).toBe('http/json');
    expect(
      read({ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })
        ?.protocol,
    ).toBe('http/protobuf');
  });

  it('reads the sampler, its ratio only for a ratio sampler, the service name and resource attributes', () => {
    expect(
      read({ ...on, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }),
    ).toMatchObject({ sampler: 'parentbased_traceidratio', ratio: 0.25 });
    expect(read({ ...on, OTEL_TRACES_SAMPLER: 'always_off', OTEL_TRACES_SAMPLER_ARG: 'ignored' })).toMatchObject({
      sampler: 'always_off',
      ratio: 1,
    });
    expect(
      read({ ...on, OTEL_SERVICE_NAME: 'edge-gateway', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod' }),
    ).toMatchObject({ serviceName: 'edge-gateway', resourceAttributes: 'deployment.environment=prod' });
  });

  it('caps a batch at the queue size, as the SDK does', () => {
    expect(read({ ...on, OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_SCHEDULE_DELAY: '50' })?.batch).toEqual({
      scheduledDelayMillis: 50,
      exportTimeoutMillis: 30000,
      maxQueueSize: 100,
      maxExportBatchSize: 100,
    });
  });
});

describe('a value that cannot work stops the start with one line naming the variable', () => {
  const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };

  it.each([
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' },
      'OTEL_EXPORTER_OTLP_ENDPOINT: must be an http:// or https:// URL',
    ],
    [
      { ...on, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'grpc://c' },
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: must be an http://',
    ],
    [{ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTEL_EXPORTER_OTLP_PROTOCOL: must be http/protobuf or http/json'],
    [{ ...on, OTEL_TRACES_EXPORTER: 'zipkin' }, 'OTEL_TRACES_EXPORTER: must be otlp or none'],
    [{ ...on, OTEL_TRACES_SAMPLER: 'jaeger_remote' }, 'OTEL_TRACES_SAMPLER: must be one of always_on'],
    [
      { ...on, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' },
      'OTEL_TRACES_SAMPLER_ARG: must be',
    ],
    [{ ...on, OTEL_SDK_DISABLED: 'yes' }, 'OTEL_SDK_DISABLED: must be true or false'],
    [{ ...on, OTEL_PROPAGATORS: 'b3' }, 'OTEL_PROPAGATORS: must list tracecontext'],
    [{ ...on, OTEL_BSP_SCHEDULE_DELAY: '0' }, 'OTEL_BSP_SCHEDULE_DELAY: must be a whole number of milliseconds'],
  ])('%o', (env, message) => {
    expect(refusal(env)).toContain(message);
  });

  it('checks the variables while no endpoint is set, so a typo shows before the day one is', () => {
    expect(refusal({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toContain('OTEL_EXPORTER_OTLP_PROTOCOL');
  });
});
