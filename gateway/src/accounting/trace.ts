import type { RequestTrace } from '@version-router/platform/tracing';
import type { RouteTranslation } from '../translation/compile.js';
import type { VersionAnswer } from '../versions/policy.js';

/**
 * What the gateway adds to a request's server span (docs/tracing.md#span-names-and-attributes): the version a
 * request named and the one the backend served, how it was chosen, the version's phase, the consumer (its id, never
 * its key) and, for a version declared as changes, the changes its answer went through. Values are the metric
 * labels' own (`api_version_requests_total`), so a trace and a series are read alike.
 */
const ATTRIBUTES = {
  requested: 'api.version.requested',
  served: 'api.version.served',
  selectedBy: 'api.version.selected_by',
  phase: 'api.deprecation.phase',
  consumer: 'api.consumer.id',
  changes: 'api.translation.changes',
} as const;

/** The policy's answer for the request: its version (`invalid` when it named none), how chosen, its phase, the consumer. */
export function traceVersion(trace: RequestTrace, answer: VersionAnswer, consumer: string | null): void {
  trace.setAttribute(ATTRIBUTES.requested, answer.labels.version);
  trace.setAttribute(ATTRIBUTES.selectedBy, answer.selectedBy);
  if (answer.phase !== null) trace.setAttribute(ATTRIBUTES.phase, answer.phase);
  traceConsumer(trace, consumer);
}

/** The consumer whose valid API-Key the request carries, by id. */
export function traceConsumer(trace: RequestTrace, consumer: string | null): void {
  if (consumer !== null) trace.setAttribute(ATTRIBUTES.consumer, consumer);
}

/**
 * The version the backend is asked for, set when the request is forwarded: the version itself, or for one declared
 * as changes the version serving it and the changes of this resource between the two (`rename user_id →
 * customer_id`, oldest step first), described when the policy was compiled.
 */
export function traceServed(trace: RequestTrace, version: number, translation: RouteTranslation | undefined): void {
  if (translation === undefined) {
    trace.setAttribute(ATTRIBUTES.served, String(version));
    return;
  }
  trace.setAttribute(ATTRIBUTES.served, String(translation.served));
  if (translation.described.length > 0) trace.setAttribute(ATTRIBUTES.changes, translation.described);
}
