import { isObject } from '../translation/body-plan.js';
import { unmarkedString } from '../translation/json-text.js';
import { numberText, stringOf } from './declarations.js';

/**
 * Where two JSON bodies (read by `readBody`) differ: the backend's own answer of the compared version and its
 * successor's translated back. Keys' order is no difference, nor is how a number is written (`1.50` and `1.5`);
 * fields named in `ignore` are left out. Paths are written as the declarations write fields (`total`,
 * `lines[].sku`), so one can be put into `ignore` as it is; `$` is the whole body.
 */

/** A value one side has and the other has not. */
const ABSENT: unique symbol = Symbol('absent');

export interface Difference {
  readonly path: string;
  readonly own: unknown;
  readonly translated: unknown;
}

/** The whole body's path, and the pseudo-path of a status that differs. */
export const BODY_PATH = '$';
export const STATUS_PATH = '(status)';

/** Past this many differences in one pair of bodies the walk stops: one answer's paths are enough to go on. */
const MAX_DIFFERENCES = 20;

const INTEGER = /^-?\d+$/;

/** Two numbers' texts name the same number: integers of any size exactly, others as doubles. */
function sameNumber(a: string, b: string): boolean {
  if (a === b) return true;
  if (INTEGER.test(a) && INTEGER.test(b)) return BigInt(a) === BigInt(b);
  return Number(a) === Number(b);
}

function sameScalar(own: unknown, translated: unknown): boolean {
  const ownNumber = numberText(own);
  const translatedNumber = numberText(translated);
  if (ownNumber !== undefined || translatedNumber !== undefined)
    return ownNumber !== undefined && translatedNumber !== undefined && sameNumber(ownNumber, translatedNumber);
  const ownString = stringOf(own);
  if (ownString !== undefined) return ownString === stringOf(translated);
  return own === translated;
}

const child = (path: string, name: string): string => (path === BODY_PATH ? name : `${path}.${name}`);
const items = (path: string): string => (path === BODY_PATH ? '[]' : `${path}[]`);

/** The differences of two bodies, at most 20, in the order of the own body's fields. */
export function differences(own: unknown, translated: unknown, ignore: ReadonlySet<string>): Difference[] {
  const found: Difference[] = [];
  const differ = (path: string, ownValue: unknown, translatedValue: unknown): void => {
    if (found.length < MAX_DIFFERENCES) found.push({ path, own: ownValue, translated: translatedValue });
  };
  const walk = (path: string, ownValue: unknown, translatedValue: unknown): void => {
    if (found.length >= MAX_DIFFERENCES) return;
    if (isObject(ownValue) && isObject(translatedValue)) {
      for (const key of Object.keys(ownValue)) {
        const at = child(path, unmarkedString(key));
        if (ignore.has(at)) continue;
        if (!Object.hasOwn(translatedValue, key)) differ(at, ownValue[key], ABSENT);
        else walk(at, ownValue[key], translatedValue[key]);
      }
      for (const key of Object.keys(translatedValue)) {
        const at = child(path, unmarkedString(key));
        if (!Object.hasOwn(ownValue, key) && !ignore.has(at)) differ(at, ABSENT, translatedValue[key]);
      }
      return;
    }
    if (Array.isArray(ownValue) && Array.isArray(translatedValue)) {
      if (ownValue.length !== translatedValue.length) differ(path, ownValue, translatedValue);
      const at = items(path);
      const common = Math.min(ownValue.length, translatedValue.length);
      for (let i = 0; i < common && found.length < MAX_DIFFERENCES; i++) {
        const before = found.length;
        walk(at, ownValue[i], translatedValue[i]);
        // One item's difference stands for its path: the next items would repeat it.
        if (found.length > before) break;
      }
      return;
    }
    if (isObject(ownValue) || isObject(translatedValue) || Array.isArray(ownValue) || Array.isArray(translatedValue)) {
      differ(path, ownValue, translatedValue);
      return;
    }
    if (!sameScalar(ownValue, translatedValue)) differ(path, ownValue, translatedValue);
  };
  walk(BODY_PATH, own, translated);
  return found;
}

/** A value as a redacted example shows it: its type only (`string`, `array of 3`, `absent`). */
export function typeOf(value: unknown): string {
  if (value === ABSENT) return 'absent';
  if (Array.isArray(value)) return `array of ${value.length}`;
  if (value === null) return 'null';
  if (numberText(value) !== undefined) return 'number';
  return typeof value === 'object' ? 'object' : typeof value;
}

/** Longest text of a shown value; a longer one is cut, with an ellipsis. */
const MAX_SHOWN = 200;

/** A value as an example with `show_values` shows it: its JSON text, numbers as written, cut at 200 characters. */
export function shownValue(value: unknown): string {
  if (value === ABSENT) return 'absent';
  let text = '';
  const write = (item: unknown): void => {
    if (text.length > MAX_SHOWN) return;
    const number = numberText(item);
    if (number !== undefined) text += number;
    else if (typeof item === 'string') text += JSON.stringify(stringOf(item));
    else if (Array.isArray(item)) {
      text += '[';
      item.forEach((element, i) => {
        if (i > 0) text += ',';
        write(element);
      });
      text += ']';
    } else if (isObject(item)) {
      text += '{';
      Object.keys(item).forEach((key, i) => {
        text += `${i > 0 ? ',' : ''}${JSON.stringify(unmarkedString(key))}:`;
        write(item[key]);
      });
      text += '}';
    } else text += JSON.stringify(item);
  };
  write(value);
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text;
}
