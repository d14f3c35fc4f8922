import { AttributeSet, type RequestTrace } from '@version-router/platform/tracing';
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

/**
 * The attributes of each answer, built on its first traced request: the policy builds its answers once per period
 * (versions/policy.ts), so the set is too.
 */
const answerSets = new WeakMap<VersionAnswer, AttributeSet>();

function answerSetOf(answer: VersionAnswer): AttributeSet {
  let set = answerSets.get(answer);
  if (set === undefined) {
    set = new AttributeSet({
      [ATTRIBUTES.requested]: answer.labels.version,
      [ATTRIBUTES.selectedBy]: answer.selectedBy,
      ...(answer.phase === null ? {} : { [ATTRIBUTES.phase]: answer.phase }),
    });
    answerSets.set(answer, set);
  }
  return set;
}

/** The policy's answer for the request: its version (`invalid` when it named none), how chosen, its phase, the consumer. */
export function traceVersion(trace: RequestTrace, answer: VersionAnswer, consumer: string | null): void {
  trace.setAttributes(answerSetOf(answer));
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
  trace.setAttributes(translation === undefined ? servedSetOf(version) : translatedSetOf(translation));
}

/** A version served as itself, by version. */
const servedSets = new Map<number, AttributeSet>();

function servedSetOf(version: number): AttributeSet {
  let set = servedSets.get(version);
  if (set === undefined) servedSets.set(version, (set = new AttributeSet({ [ATTRIBUTES.served]: String(version) })));
  return set;
}

/** By route translation (one per policy activated, version and resource): built on its first traced request. */
const translatedSets = new WeakMap<RouteTranslation, AttributeSet>();

function translatedSetOf(translation: RouteTranslation): AttributeSet {
  let set = translatedSets.get(translation);
  if (set === undefined) {
    set = new AttributeSet({
      [ATTRIBUTES.served]: String(translation.served),
      ...(translation.described.length === 0 ? {} : { [ATTRIBUTES.changes]: translation.described }),
    });
    translatedSets.set(translation, set);
  }
  return set;
}
