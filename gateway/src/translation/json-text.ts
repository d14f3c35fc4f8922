import { TranslationRefusal } from './refusal.js';

/**
 * JSON bodies read and written by the translation (docs/declared-versions.md "Translation that fails closed") so that
 * what no change touches comes out as it came in:
 * - a number whose text `JSON.stringify` would not give back (`123456789012345678`, `-0`, `1e400`, `1E5`, `1.50`)
 *   is read as a marked string holding its text (`"\u0000#1e400"`), which the engine reads as the number it is
 *   and which is written back as that text;
 * - keys keep their order: a JavaScript object puts integer-like keys (`"2"`, `"10"`) first, so those are read
 *   marked (a NUL in front) and unmarked when written; a string of the body that starts with NUL is marked too,
 *   so every mark comes off again;
 * - depth is checked on the text before anything is parsed, so nothing recursive (JSON.stringify, a walk) ever
 *   meets a body deeper than the limit.
 * One scan of the text outside its strings finds all three; the text is rewritten only where a mark goes, and
 * parsed once by JSON.parse (a reviver keeping source text costs six times a plain parse, on every value).
 */

/** A number kept as its text: the text behind this prefix. */
const NUMBER_PREFIX = '\u0000#';

/** A number kept as its text (`"\u0000#1e400"`). */
export const isRawNumber = (value: unknown): value is string =>
  typeof value === 'string' && value.charCodeAt(0) === 0 && value.charCodeAt(1) === 0x23;

/** A plain JSON number, or the value of one kept as its text; undefined for anything else. */
export function numericValue(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  return isRawNumber(value) ? Number(value.slice(NUMBER_PREFIX.length)) : undefined;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const MINUS = 0x2d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const POINT = 0x2e;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

const isDigit = (code: number): boolean => code >= DIGIT_0 && code <= DIGIT_9;
const isSpace = (code: number): boolean => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;

/**
 * The end of the string whose opening quote is at `at` (the index of its closing quote), or -1 when it has none.
 * A quote preceded by an odd number of backslashes is escaped.
 */
function stringEnd(text: string, at: number): number {
  for (let end = text.indexOf('"', at + 1); end !== -1; end = text.indexOf('"', end + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
    if ((backslashes & 1) === 0) return end;
  }
  return -1;
}

/**
 * The end of the number token starting at `start`, negated when JSON.stringify would write its value as other
 * text. Conservative (a yes costs only a mark): an exponent, more than 15 digits, a fraction ending in 0, `-0`, or
 * a value below 1e-6 (written with an exponent). Any other token is the shortest text of its double, as JavaScript
 * writes it: at most 15 significant digits name one double each, and doubles below 1e21 are written out.
 */
function numberEnd(text: string, start: number): number {
  let end = start;
  let digits = 0;
  let fraction = false;
  let exponent = false;
  for (; ; end++) {
    const code = text.charCodeAt(end);
    if (isDigit(code)) digits++;
    else if (code === POINT) fraction = true;
    else if (code === 0x65 || code === 0x45 || code === 0x2b) exponent = true;
    else if (code !== MINUS) break;
  }
  const unsigned = text.charCodeAt(start) === MINUS ? start + 1 : start;
  const needsText =
    exponent ||
    digits > 15 ||
    (fraction && (text.charCodeAt(end - 1) === DIGIT_0 || text.startsWith('0.000000', unsigned))) ||
    (end - unsigned === 1 && unsigned !== start && text.charCodeAt(unsigned) === DIGIT_0);
  return needsText ? -end : end;
}

const INTEGER_LIKE = /^\d+$/;

/**
 * Whether the string token `text[start, end]` (quotes included) must be marked: it starts with NUL (only ever
 * written `\u0000`), or it is a key JavaScript would move (an integer, its digits perhaps escaped).
 */
function needsMark(text: string, start: number, end: number, key: boolean): boolean {
  if (text.startsWith('\\u0000', start + 1)) return true;
  if (!key) return false;
  const inner = text.slice(start + 1, end);
  if (!inner.includes('\\')) return INTEGER_LIKE.test(inner);
  try {
    return INTEGER_LIKE.test(JSON.parse(text.slice(start, end + 1)) as string);
  } catch {
    return false; // not a JSON string: the parse says so
  }
}

/** Where the text is rewritten before it is parsed: `[start, end)` replaced by `insert`. */
interface Edit {
  readonly start: number;
  readonly end: number;
  readonly insert: string;
}

/** The NUL of a mark, as JSON writes it. */
const MARK = '\\u0000';

/**
 * One pass over the text outside its strings: throws a `depth` refusal as soon as the nesting passes `maxDepth`,
 * and finds where marks go (keys and strings, numbers kept as text), in order. Text that is not JSON is scanned as
 * far as it goes; JSON.parse then refuses it.
 */
function scan(text: string, maxDepth: number): Edit[] | undefined {
  let depth = 0;
  let edits: Edit[] | undefined;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      const end = stringEnd(text, i);
      if (end === -1) break;
      // Only a string that starts with a digit (a key) or an escape (NUL, an escaped digit) can need a mark.
      const first = text.charCodeAt(i + 1);
      if (first === BACKSLASH || isDigit(first)) {
        let next = end + 1;
        while (isSpace(text.charCodeAt(next))) next++;
        if (needsMark(text, i, end, text.charCodeAt(next) === COLON)) {
          (edits ??= []).push({ start: i + 1, end: i + 1, insert: MARK });
        }
      }
      i = end;
    } else if (code === OPEN_ARRAY || code === OPEN_OBJECT) {
      if (++depth > maxDepth) {
        throw new TranslationRefusal('depth', `nested deeper than ${maxDepth} levels at position ${i}`);
      }
    } else if (code === CLOSE_ARRAY || code === CLOSE_OBJECT) {
      depth--;
    } else if (code === MINUS || isDigit(code)) {
      const found = numberEnd(text, i);
      const end = Math.abs(found);
      if (found < 0) (edits ??= []).push({ start: i, end, insert: `"${MARK}#${text.slice(i, end)}"` });
      i = end - 1;
    }
  }
  return edits;
}

function edited(text: string, edits: readonly Edit[]): string {
  const parts: string[] = [];
  let from = 0;
  for (const { start, end, insert } of edits) {
    parts.push(text.slice(from, start), insert);
    from = end;
  }
  parts.push(text.slice(from));
  return parts.join('');
}

/**
 * A JSON body as a tree the engine changes: its untouched numbers keep their text, its keys their order.
 * Undefined when the text is not JSON; throws a `depth` refusal when it is nested deeper than `maxDepth`.
 */
export function readJson(text: string, maxDepth: number): { value: unknown } | undefined {
  const edits = scan(text, maxDepth);
  try {
    return { value: JSON.parse(edits === undefined ? text : edited(text, edits)) };
  } catch {
    return undefined;
  }
}

/**
 * A marked string as JSON.stringify writes it: its opening quote (after `[`, `{`, `,`, `:` or at the start, as
 * JSON.stringify writes no spaces), the mark, and for a number kept as text the `#` and the text up to the quote.
 */
const MARKED = /(^|[[{,:])"\\u0000(?:#([-+.\deE]*)")?/g;
const unmark = (_match: string, before: string, number: string | undefined): string =>
  number === undefined ? `${before}"` : `${before}${number}`;

/** A tree from readJson (or built from one) as JSON text: numbers kept as text and marked strings as they came. */
export function writeJson(value: unknown): string {
  const text = JSON.stringify(value);
  return text.includes('"\\u0000') ? text.replace(MARKED, unmark) : text;
}

/** A string as a body read by readJson holds it: one that starts with NUL marked. */
export const markedString = (value: string): string => (value.startsWith('\0') ? `\0${value}` : value);
/** A key as a body read by readJson holds it: an integer-like key, or one that starts with NUL, marked. */
export const markedKey = (key: string): string => (INTEGER_LIKE.test(key) || key.startsWith('\0') ? `\0${key}` : key);
/** A string or key of a body read by readJson as the text says it (not a number kept as text). */
export const unmarkedString = (value: string): string => (value.startsWith('\0') ? value.slice(1) : value);

/** A declared value's copy with its strings and keys that start with NUL marked, frozen. */
function declaredCopy(value: unknown): unknown {
  if (typeof value === 'string') return markedString(value);
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return Object.freeze(value.map(declaredCopy));
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    Object.defineProperty(copy, markedString(key), {
      value: declaredCopy(item),
      enumerable: true,
    });
  }
  return Object.freeze(copy);
}

/**
 * A declared value (a default, a removed field's value) as the engine puts it into a body: marked like a body's
 * strings, so writeJson gives it back as declared (its numbers are JavaScript's own, written as JavaScript writes
 * them), and frozen, as every body shares it.
 */
export function declaredJson(value: unknown): unknown {
  return declaredCopy(JSON.parse(JSON.stringify(value)));
}
