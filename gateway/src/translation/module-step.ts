import { isDeepStrictEqual } from 'node:util';
import vm from 'node:vm';
import type { Apply, BodyStep } from './body-plan.js';
import {
  declaredJson,
  isRawNumber,
  markedKey,
  markedString,
  numericValue,
  unmarkedString,
  writeJson,
} from './json-text.js';
import { TranslationRefusal } from './refusal.js';

/**
 * A `module` change run under the translation's rules (docs/declared-versions.md "Versions declared as changes", the
 * escape hatch): the module's `forward(body)` and `backward(body)` get a plain, frozen copy of the body (numbers as
 * numbers, strings as they are), so a module cannot change the body it is given, only return another. What it
 * returns is read back as the engine's own bodies are: no deeper than TRANSLATION_MAX_DEPTH, no larger than
 * TRANSLATION_MAX_BYTES, JSON values only (a function, a class instance, a bigint or a number that is not finite
 * are refused); anything it hands back unchanged (an object, an array, or a number in the same place) keeps its
 * source text and key order. A throw is a refusal (`reason="module"`), never a crash.
 */

/** A loaded module (modules.ts). */
export interface ChangeModule {
  /** As the policy names it, relative to the policy file (`changes/split-name.mjs`). */
  readonly path: string;
  readonly forward: (body: unknown) => unknown;
  readonly backward: (body: unknown) => unknown;
  /** The successor's body schema as this version's, for the derived documents; absent: the same. */
  readonly schema: ((schema: unknown) => unknown) | undefined;
  /** Bodies of the successor its round trip is checked on at load. */
  readonly examples: readonly unknown[];
  /** SHA-256 (hex) of the file's bytes: part of the policy's digest and of this version's ETags. */
  readonly sha256: string;
}

/** The limits a module's result is held to: TRANSLATION_MAX_DEPTH and TRANSLATION_MAX_BYTES. */
export interface TranslationLimits {
  readonly maxDepth: number;
  readonly maxBytes: number;
}

type JsonObject = Record<string, unknown>;

function setOwn(object: JsonObject, key: string, value: unknown): void {
  if (key !== '__proto__') object[key] = value;
  else Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The plain, frozen copy of a body a module gets; each copied object and array remembers its original. */
function toView(value: unknown, originals: Map<object, unknown>): unknown {
  if (typeof value === 'string') return isRawNumber(value) ? numericValue(value) : unmarkedString(value);
  if (typeof value !== 'object' || value === null) return value;
  let view: object;
  if (Array.isArray(value)) view = value.map((item) => toView(item, originals));
  else {
    const copy: JsonObject = {};
    for (const key in value) setOwn(copy, unmarkedString(key), toView((value as JsonObject)[key], originals));
    view = copy;
  }
  originals.set(Object.freeze(view), value);
  return view;
}

class Reading {
  private bytes = 0;

  constructor(
    private readonly module: string,
    private readonly originals: Map<object, unknown>,
    private readonly limits: TranslationLimits,
  ) {}

  private count(bytes: number): void {
    this.bytes += bytes;
    if (this.bytes > this.limits.maxBytes) {
      const what = `${this.module} returned a body larger than TRANSLATION_MAX_BYTES (${this.limits.maxBytes} bytes)`;
      throw new TranslationRefusal('too_large', what);
    }
  }

  private notJson(what: string): TranslationRefusal {
    return new TranslationRefusal('module', `${this.module} returned ${what}, which is no JSON value`);
  }

  /** A module's value as a body holds it; `before` is what the given body had in its place (for numbers' text). */
  read(value: unknown, before: unknown, depth: number): unknown {
    switch (typeof value) {
      case 'string':
        this.count(value.length + 2);
        return markedString(value);
      case 'boolean':
        this.count(5);
        return value;
      case 'number': {
        this.count(24);
        // A number left where it was keeps its text (`1.50`, `123456789012345678`, `1e400`).
        if (isRawNumber(before) && Object.is(numericValue(before), value)) return before;
        if (!Number.isFinite(value)) {
          throw new TranslationRefusal('not_finite', `${this.module} returned a number that is not finite`);
        }
        return value;
      }
      case 'object':
        if (value === null) {
          this.count(4);
          return null;
        }
        break;
      default:
        throw this.notJson(`a ${typeof value}`);
    }
    const original = this.originals.get(value);
    if (original !== undefined) return original;
    if (depth >= this.limits.maxDepth) {
      const what = `${this.module} returned a body nested deeper than ${this.limits.maxDepth} levels`;
      throw new TranslationRefusal('depth', what);
    }
    if (Array.isArray(value)) {
      const items = Array.isArray(before) ? (before as unknown[]) : [];
      return value.map((item, i) => {
        this.count(1);
        return item === undefined ? null : this.read(item, items[i], depth + 1);
      });
    }
    const prototype: unknown = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) throw this.notJson('an object of a class');
    const was = typeof before === 'object' && before !== null && !Array.isArray(before) ? (before as JsonObject) : {};
    const out: JsonObject = {};
    for (const key of Object.keys(value)) {
      const item = (value as JsonObject)[key];
      if (item === undefined) continue;
      this.count(key.length + 4);
      setOwn(out, markedString(key), this.read(item, was[markedKey(key)], depth + 1));
    }
    return out;
  }
}

const messageOf = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error);

/** One direction of a module as an engine step. */
function running(module: ChangeModule, direction: 'forward' | 'backward', limits: TranslationLimits): Apply {
  const translate = module[direction];
  return (body) => {
    const originals = new Map<object, unknown>();
    const view = toView(body, originals);
    let result: unknown;
    try {
      result = translate(view);
    } catch (error) {
      throw new TranslationRefusal('module', `${module.path} failed ${direction}: ${messageOf(error)}`);
    }
    return new Reading(module.path, originals, limits).read(result, body, 0);
  };
}

export function moduleStep(module: ChangeModule, limits: TranslationLimits): BodyStep {
  return { forward: running(module, 'forward', limits), backward: running(module, 'backward', limits) };
}

/** The first JSON path where two JSON values differ (`$.name`, `$.lines[2]`); undefined when they are equal. */
function firstDifference(expected: unknown, actual: unknown, at = '$'): string | undefined {
  if (isDeepStrictEqual(expected, actual)) return undefined;
  if (Array.isArray(expected) && Array.isArray(actual)) {
    for (let i = 0; i < Math.max(expected.length, actual.length); i++) {
      const found = firstDifference(expected[i], actual[i], `${at}[${i}]`);
      if (found !== undefined) return found;
    }
    return at;
  }
  const isRecord = (value: unknown): value is JsonObject =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  if (isRecord(expected) && isRecord(actual)) {
    for (const key of new Set([...Object.keys(expected), ...Object.keys(actual)])) {
      const found = firstDifference(expected[key], actual[key], `${at}.${key}`);
      if (found !== undefined) return found;
    }
  }
  return at;
}

/** How long the round trip of one example may take at load (a module that loops is refused, not waited for). */
const CHECK_TIMEOUT_MS = 1_000;
const checkScript = new vm.Script('check()');

/**
 * Why `module` does not give back each of `examples` (bodies of the successor) through `backward` then `forward`,
 * as the gateway runs it: `example 0: $.name differs`; undefined when every one comes back. Each example's round
 * trip may take CHECK_TIMEOUT_MS.
 */
export function roundTripProblem(
  module: ChangeModule,
  examples: readonly unknown[],
  limits: TranslationLimits,
): string | undefined {
  const step = moduleStep(module, limits);
  for (const [index, example] of examples.entries()) {
    let problem: string | undefined;
    const context = vm.createContext({
      check: () => {
        const back = step.backward(declaredJson(example));
        const there = JSON.parse(writeJson(step.forward(back))) as unknown;
        const difference = firstDifference(JSON.parse(JSON.stringify(example)), there);
        if (difference !== undefined) problem = `${difference} differs after backward then forward`;
      },
    });
    try {
      checkScript.runInContext(context, { timeout: CHECK_TIMEOUT_MS });
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') problem = `took longer than ${CHECK_TIMEOUT_MS} ms`;
      else if (error instanceof TranslationRefusal) problem = error.details;
      else problem = messageOf(error);
    }
    if (problem !== undefined) return `example ${index}: ${problem}`;
  }
  return undefined;
}
