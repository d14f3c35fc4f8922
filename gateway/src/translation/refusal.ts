/**
 * Why a body is not translated (docs/behaviour.md "Translation that fails closed"): the label `reason` of
 * `translation_failures_total`, a closed set so the series stay bounded.
 */
export type RefusalReason =
  /** Nested deeper than TRANSLATION_MAX_DEPTH. */
  | 'depth'
  /** A scaled value that is no finite number. */
  | 'not_finite'
  /** Two fields that would end up under one name (or two headers). */
  | 'collision'
  /** A `module` change threw, or returned what is no JSON value. */
  | 'module'
  /** Declared as JSON, but not JSON (answers only: a request's goes to the backend for its own 400). */
  | 'invalid_json'
  /** Larger than TRANSLATION_MAX_BYTES. */
  | 'too_large'
  /** Translations in progress hold TRANSLATION_MAX_INFLIGHT_BYTES. */
  | 'busy'
  /** A request body that is not JSON or is encoded (415). */
  | 'media_type'
  /** An answer with Content-Encoding. */
  | 'encoded'
  /** A 2xx answer with a body and no Content-Type. */
  | 'untyped';

/**
 * A body the engine will not translate: its reason and one line saying what and where (`$.lines[2].total: …`).
 * Thrown by the engine and the JSON reader; the HTTP side turns it into a 400 (a request) or a 502 (an answer).
 */
export class TranslationRefusal extends Error {
  /** Where in the body, innermost last: a field name or an array index. */
  private readonly path: (string | number)[] = [];

  constructor(
    readonly reason: RefusalReason,
    private readonly what: string,
  ) {
    super(what);
    this.name = 'TranslationRefusal';
  }

  /** The refusal seen from one level up: `segment` is the field or index the refused value was found under. */
  within(segment: string | number): this {
    this.path.unshift(segment);
    this.message = this.details;
    return this;
  }

  /** `$.lines[2].total: not a finite number when multiplied by 100`; `$` alone for the top level. */
  get details(): string {
    if (this.reason === 'depth') return this.what;
    const where = this.path.map((segment) => (typeof segment === 'number' ? `[${segment}]` : `.${segment}`));
    return `$${where.join('')}: ${this.what}`;
  }
}

/** Adds `segment` to a refusal's path on its way up; any other error goes on unchanged. */
export function refusedWithin(error: unknown, segment: string | number): unknown {
  return error instanceof TranslationRefusal ? error.within(segment) : error;
}
