import { isRawNumber, markedString, numericValue, unmarkedString } from './json-text.js';
import type { StepPaths } from './paths.js';
import { TranslationRefusal } from './refusal.js';

/**
 * The changes of one value of a body, both ways (docs/behaviour.md "Versions declared as changes"): a `scale`, a
 * `map`, a `link`. Each reads a value as a body from readJson holds it (numbers kept as text, marked strings) and
 * gives back one a body holds; a value of another type is left as it is.
 */

/** One value's change; throws TranslationRefusal when the result cannot be written exactly. */
export type ValueChange = (value: unknown) => unknown;

export interface ValueChanges {
  readonly forward: ValueChange;
  readonly backward: ValueChange;
}

/** Float noise (`19.99 * 100 = 1998.9999999999998`) cut at 15 significant digits, which every double holds. */
const tidy = (value: number): number => (Number.isInteger(value) ? value : Number(value.toPrecision(15)));
const roundHalfAwayFromZero = (value: number): number => (value < 0 ? -Math.round(-value) : Math.round(value));

type MapValues = Readonly<Record<string, string | number | boolean>>;

/** A scalar as a map compares it: a number kept as its text by its value, a string as the body says it. */
function scalarOf(value: unknown): string | number | boolean | undefined {
  if (typeof value === 'string') return isRawNumber(value) ? numericValue(value) : unmarkedString(value);
  return typeof value === 'number' || typeof value === 'boolean' ? value : undefined;
}

/** A value a map puts into a body, as a body holds it. */
const asBodyValue = (value: unknown): unknown => (typeof value === 'string' ? markedString(value) : value);

/** A scaled field's value in the successor as this version's: divided by the factor; any other type as it is. */
export const scaledBack =
  (factor: number) =>
  (value: unknown): unknown =>
    typeof value === 'number' ? tidy(value / factor) : value;

/** A mapped field's value in the successor as this version's: the map read backwards; other values as they are. */
export function mappedBack(values: MapValues): (value: unknown) => unknown {
  // One-to-one (checked with the policy), so the inverse is a map too; a Map tells `1` from `"1"`.
  const backward = new Map<unknown, string>(Object.entries(values).map(([from, to]) => [to, from]));
  return (value) => {
    const from = backward.get(value);
    return from === undefined ? value : from;
  };
}

/** Both ways of a map in bodies: mapped values as a body holds them (mappedBack alone also reads documents). */
export function mapChanges(values: MapValues): ValueChanges {
  // This version's values are the keys: a number is looked up as its text, as the policy writes it.
  const forward = new Map<string, unknown>(Object.entries(values).map(([from, to]) => [from, asBodyValue(to)]));
  const back = mappedBack(values);
  return {
    forward: (value) => {
      const scalar = scalarOf(value);
      if (scalar === undefined) return value;
      const to = forward.get(typeof scalar === 'string' ? scalar : String(scalar));
      return to === undefined ? value : to;
    },
    backward: (value) => {
      const scalar = scalarOf(value);
      if (scalar === undefined) return value;
      const from = back(scalar);
      return from === scalar ? value : asBodyValue(from);
    },
  };
}

/** A number scaled by `scale`, refused when the result is no finite number (JSON has none to write). */
function scaling(scale: (value: number) => number, how: string): ValueChange {
  return (value) => {
    const number = numericValue(value);
    if (number === undefined) return value;
    const scaled = scale(number);
    if (!Number.isFinite(scaled)) throw new TranslationRefusal('not_finite', `not a finite number when ${how}`);
    return scaled;
  };
}

/** Below this, an integer times or divided by a power of ten is written as the decimal it is (no noise to cut). */
const EXACT_DIGITS_BELOW = 1e15;

export function scaleChanges(factor: number): ValueChanges {
  const whole = Number.isInteger(factor);
  const powerOfTen = whole && /^10*$/.test(String(factor));
  const exact = (value: number): boolean => Number.isInteger(value) && Math.abs(value) < EXACT_DIGITS_BELOW;
  // A whole factor turns a decimal into a count of smaller units (euros into cents): an integer in the successor.
  const forward = whole
    ? (value: number) => (exact(value) ? value * factor : roundHalfAwayFromZero(tidy(value * factor)))
    : (value: number) => tidy(value * factor);
  const backward = (value: number) => (powerOfTen && exact(value) ? value / factor : tidy(value / factor));
  return {
    forward: scaling(forward, `multiplied by ${factor}`),
    backward: scaling(backward, `divided by ${factor}`),
  };
}

/**
 * A `link`: a string holding a path or URL of this API names the other version (its version segment, and where a
 * `path` change moved a resource, its path); any other value as it is.
 */
export function linkChanges(paths: StepPaths): ValueChanges {
  const rewriting = (rewrite: (url: string) => string): ValueChange => {
    return (value) => {
      if (typeof value !== 'string' || isRawNumber(value)) return value;
      const text = unmarkedString(value);
      const rewritten = rewrite(text);
      return rewritten === text ? value : markedString(rewritten);
    };
  };
  return { forward: rewriting(paths.forward), backward: rewriting(paths.backward) };
}
