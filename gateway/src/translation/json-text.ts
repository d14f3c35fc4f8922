import { TranslationRefusal } from './refusal.js';

/**
 * JSON bodies read and written by the translation (docs/behaviour.md "Translation that fails closed") so that
 * what no change touches comes out as it came in:
 * - a number whose text `JSON.stringify` would not give back (`123456789012345678`, `-0`, `1e400`, `1E5`, `1.50`)
 *   is kept as its source text (`JSON.rawJSON`, taken from the reviver's `context.source`), so it is written
 *   as it was read;
 * - keys keep their order: a JavaScript object puts integer-like keys (`"2"`, `"10"`) first, so those are read
 *   under a marked name (a NUL in front, which a key that starts with NUL gets as well) and unmarked when written;
 * - depth is checked on the text before anything is parsed, so nothing recursive (JSON.stringify, a walk) ever
 *   meets a body deeper than the limit.
 * One scan of the text outside its strings finds all three; the reviver, six times dearer than a plain parse, runs
 * only for a body that holds such a number.
 */

/** JSON.rawJSON and its reviver context (Node 22+), which TypeScript's lib does not describe yet. */
interface RawJson {
  readonly rawJSON: string;
}
const json = JSON as JSON & {
  rawJSON(text: string): RawJson;
  isRawJSON(value: unknown): value is RawJson;
  parse(text: string, reviver: (key: string, value: unknown, context: { source?: string }) => unknown): unknown;
};

/** A number kept as its source text (`JSON.rawJSON`). */
export const isRawNumber = (value: unknown): value is RawJson => json.isRawJSON(value);

/** A plain JSON number, or the value of one kept as its text; undefined for anything else. */
export function numericValue(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  return json.isRawJSON(value) ? Number(value.rawJSON) : undefined;
}

/** The reviver of a body that holds numbers JSON.stringify would write otherwise: those keep their text. */
const keepNumberText = (_key: string, value: unknown, context: { source?: string }): unknown =>
  typeof value === 'number' && context.source !== undefined && String(value) !== context.source
    ? json.rawJSON(context.source)
    : value;

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
/** A character a number token may hold: digits, point, sign, exponent. */
const inNumber = (code: number): boolean =>
  isDigit(code) || code === POINT || code === MINUS || code === 0x2b || code === 0x65 || code === 0x45;
const isSpace = (code: number): boolean => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;

/** What a body's text needs beyond a plain JSON.parse. */
interface TextShape {
  /** Some number would be written back other than it was read. */
  numbers: boolean;
  /** Where a key that needs marking starts (just after its opening quote). */
  keys: number[] | undefined;
}

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
 * Whether the number token `text[start, end)` comes back from JSON.stringify as other text. Conservative (a
 * yes costs only the slower parse): an exponent, more than 15 digits, a fraction ending in 0, `-0`, or a value
 * below 1e-6 (written with an exponent). Any other token is the shortest text of its double, as JavaScript
 * writes it: at most 15 significant digits name one double each, and doubles below 1e21 are written out.
 */
function numberNeedsText(text: string, start: number, end: number): boolean {
  let digits = 0;
  let fraction = false;
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i);
    if (isDigit(code)) digits++;
    else if (code === POINT) fraction = true;
    else if (code !== MINUS) return true; // e, E, +: an exponent
  }
  if (digits > 15) return true;
  if (fraction && text.charCodeAt(end - 1) === DIGIT_0) return true;
  const unsigned = text.charCodeAt(start) === MINUS ? start + 1 : start;
  if (end - unsigned === 1 && unsigned !== start && text.charCodeAt(unsigned) === DIGIT_0) return true;
  return fraction && text.startsWith('0.000000', unsigned);
}

const INTEGER_LIKE = /^\d+$/;
/** A key JavaScript would move (an integer index) or one that starts with the mark itself. */
const needsMark = (key: string): boolean => INTEGER_LIKE.test(key) || key.startsWith('\0');

/** Whether the string token `text[start, end]` (quotes included) is a key that must be marked. */
function keyNeedsMark(text: string, start: number, end: number): boolean {
  const inner = text.slice(start + 1, end);
  if (!inner.includes('\\')) return needsMark(inner);
  try {
    return needsMark(JSON.parse(text.slice(start, end + 1)) as string);
  } catch {
    return false; // not a JSON string: the parse says so
  }
}

/**
 * One pass over the text outside its strings: throws a `depth` refusal as soon as the nesting passes `maxDepth`,
 * and finds the numbers and keys that need more than a plain parse. Text that is not JSON is scanned as far as it
 * goes; JSON.parse then refuses it.
 */
function scan(text: string, maxDepth: number): TextShape {
  let depth = 0;
  let numbers = false;
  let keys: number[] | undefined;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      const end = stringEnd(text, i);
      if (end === -1) break;
      // A key that may be an integer or start with NUL: a digit, or an escape, first.
      const first = text.charCodeAt(i + 1);
      if (isDigit(first) || first === BACKSLASH) {
        let next = end + 1;
        while (isSpace(text.charCodeAt(next))) next++;
        if (text.charCodeAt(next) === COLON && keyNeedsMark(text, i, end)) (keys ??= []).push(i + 1);
      }
      i = end;
    } else if (code === OPEN_ARRAY || code === OPEN_OBJECT) {
      if (++depth > maxDepth)
        throw new TranslationRefusal('depth', `nested deeper than ${maxDepth} levels at position ${i}`);
    } else if (code === CLOSE_ARRAY || code === CLOSE_OBJECT) {
      depth--;
    } else if (code === MINUS || isDigit(code)) {
      let end = i + 1;
      while (inNumber(text.charCodeAt(end))) end++;
      if (!numbers) numbers = numberNeedsText(text, i, end);
      i = end - 1;
    }
  }
  return { numbers, keys };
}

/** The mark in front of a key that JavaScript would move: a NUL, written as JSON writes it. */
const MARK = '\\u0000';
/** A marked key as JSON.stringify writes it: after `{` or `,`, a string starting with the mark, then `:`. */
const MARKED_KEY = /([{,])"\\u0000((?:[^"\\]|\\.)*)":/g;

function marked(text: string, keys: readonly number[]): string {
  let out = '';
  let from = 0;
  for (const at of keys) {
    out += text.slice(from, at) + MARK;
    from = at;
  }
  return out + text.slice(from);
}

/**
 * A JSON body as a tree the engine changes: its untouched numbers keep their text, its keys their order.
 * Undefined when the text is not JSON; throws a `depth` refusal when it is nested deeper than `maxDepth`.
 */
export function readJson(text: string, maxDepth: number): { value: unknown } | undefined {
  const { numbers, keys } = scan(text, maxDepth);
  const source = keys === undefined ? text : marked(text, keys);
  try {
    return { value: numbers ? json.parse(source, keepNumberText) : JSON.parse(source) };
  } catch {
    return undefined;
  }
}

/** A tree from readJson (or built from one) as JSON text: numbers kept as text and marked keys written as they came. */
export function writeJson(value: unknown): string {
  const text = JSON.stringify(value);
  return text.includes('"\\u0000') ? text.replace(MARKED_KEY, '$1"$2":') : text;
}

function deepFreeze(value: unknown): unknown {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}

/**
 * A declared value (a default, a removed field's value) as readJson would have read it, so writeJson gives it
 * back as declared (keys that start with NUL marked like a body's), and frozen: every body shares it.
 */
export function declaredJson(value: unknown): unknown {
  return deepFreeze((readJson(JSON.stringify(value), Number.MAX_SAFE_INTEGER) as { value: unknown }).value);
}
