import type { Logger } from 'pino';
import type { TracingConfig } from './config.js';
import type { Tracing } from './types.js';

export { AttributeSet } from './attribute-set.js';
export { readTracingConfig, type TracingConfig } from './config.js';
export type { RequestTrace, SpanAttributeValue, Tracing } from './types.js';

/**
 * The process's tracing, or undefined when its configuration says off. The OpenTelemetry SDK is imported here,
 * only when tracing is on: a process that does not trace never loads it.
 */
export async function startTracing(config: TracingConfig | undefined, logger: Logger): Promise<Tracing | undefined> {
  if (config === undefined) return undefined;
  const { createTracing } = await import('./tracer.js');
  return createTracing(config, logger);
}
