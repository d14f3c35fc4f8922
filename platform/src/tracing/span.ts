import type { AttributeSet } from './attribute-set.js';
import type { SpanAttributeValue } from './types.js';

/** OTLP's SpanKind (trace.proto). */
export const SpanKind = { server: 2, client: 3 } as const;
type SpanKindValue = (typeof SpanKind)[keyof typeof SpanKind];

/** OTLP's Status.code: unset, or error. A span that has an error says so; nothing here sets ok. */
const StatusCode = { unset: 0, error: 2 } as const;

/**
 * OTLP's span flags: the W3C trace flags in the low byte, then whether the parent's remoteness is known (always,
 * here) and whether it was remote (the caller's span for a server span that continues a trace).
 */
export function spanFlags(sampled: boolean, remoteParent: boolean): number {
  return (sampled ? 0x01 : 0x00) | 0x100 | (remoteParent ? 0x200 : 0);
}

/** Where ended spans go: the batch that exports them (batch.ts). */
export interface SpanSink {
  record(span: Span): void;
}

/**
 * Attributes as key, value, key, value…, in the order first set, the order OTLP receives them in; a set of them
 * (attribute-set.ts) takes a key's place, its value slot unused.
 */
export type AttributeList = (string | SpanAttributeValue | AttributeSet)[];

/**
 * A recorded span, read by the OTLP encoders once it has ended. Its times are milliseconds after `epochMs`, a
 * Date.now() taken when its request's server span started: the wall clock read once per request, the monotonic
 * clock (performance.now(), `origin` its reading at that instant) for every time after it, as the SDK's spans do.
 */
export class Span {
  /** Milliseconds after epochMs; -1 until the span ends. */
  end = -1;
  statusCode: number = StatusCode.unset;
  statusMessage: string | undefined = undefined;

  constructor(
    private readonly sink: SpanSink,
    readonly traceId: string,
    readonly spanId: string,
    /** Undefined for a root span. */
    readonly parentSpanId: string | undefined,
    /** The W3C tracestate, serialised; undefined when the trace has none. */
    readonly traceState: string | undefined,
    public name: string,
    readonly kind: SpanKindValue,
    /** spanFlags(). */
    readonly flags: number,
    readonly epochMs: number,
    private readonly origin: number,
    /** Milliseconds after epochMs. */
    readonly start: number,
    readonly attributes: AttributeList,
  ) {}

  /**
   * Sets an attribute: a new key goes last, a key set before keeps its place and takes the new value. An ended span
   * is not changed.
   */
  set(key: string, value: SpanAttributeValue): void {
    if (this.end !== -1) return;
    const attributes = this.attributes;
    for (let i = 0; i < attributes.length; i += 2) {
      if (attributes[i] === key) {
        attributes[i + 1] = value;
        return;
      }
    }
    attributes.push(key, value);
  }

  /** Adds a set of attributes. An ended span is not changed. */
  add(set: AttributeSet): void {
    if (this.end !== -1) return;
    this.attributes.push(set, 0);
  }

  /** Marks the span as failed (OTLP status error), with the failure's message when there is one. */
  fail(message?: string): void {
    if (this.end !== -1) return;
    this.statusCode = StatusCode.error;
    if (message !== undefined) this.statusMessage = message;
  }

  /** Ends the span and hands it to its sink; a second call does nothing. */
  finish(): void {
    if (this.end !== -1) return;
    this.end = performance.now() - this.origin;
    this.sink.record(this);
  }
}
