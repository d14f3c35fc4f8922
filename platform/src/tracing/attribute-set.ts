import type { SpanAttributeValue } from './types.js';

/**
 * Attributes that go onto many spans together and unchanged (a version answer's, a route's, an upstream's), built
 * once where they are known: an encoder writes a set once and copies its bytes into every span that carries it. A
 * set's keys are given to a span only by sets, never also one by one.
 */
export class AttributeSet {
  readonly entries: readonly (readonly [string, SpanAttributeValue])[];
  /** The set as each encoder writes it, kept on its first use (otlp-protobuf.ts, otlp-json.ts). */
  protobuf: Buffer | undefined = undefined;
  json: Buffer | undefined = undefined;

  constructor(attributes: Readonly<Record<string, SpanAttributeValue>>) {
    this.entries = Object.entries(attributes);
  }
}

/** The set `make` builds for `key`, built once per key: keys are few (status codes, methods, routes). */
export function setFor<K>(cache: Map<K, AttributeSet>, key: K, make: (key: K) => AttributeSet): AttributeSet {
  let set = cache.get(key);
  if (set === undefined) cache.set(key, (set = make(key)));
  return set;
}
