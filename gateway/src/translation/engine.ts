import { createHash } from 'node:crypto';
import { fieldSegments, leafName } from './field-path.js';
import { declaredJson, isRawNumber, markedString, numericValue, unmarkedString } from './json-text.js';
import { TranslationRefusal, refusedWithin } from './refusal.js';
import type { VersionChange } from '../versions/changes.js';

/**
 * The translation of JSON bodies between a version declared as changes and the version that serves it
 * (docs/declared-versions.md "Versions declared as changes", "Translation that fails closed"). Compiled once per policy
 * into a plan per version step, resource and direction: a tree of the objects a body's changes reach, each with
 * what happens to its keys. Applying a plan visits only the objects it names and rebuilds each changed one once,
 * its keys in their order, so the cost is linear in the body; nothing is changed in place, and an object (or the
 * whole body) no change applies to comes back as the same object. Anything that is not where a change expects it
 * (a missing field, a missing array, a value of another type) is left as it is. What cannot be translated
 * exactly is refused (TranslationRefusal): a scaled value that is no finite number, two fields under one name.
 * The derived OpenAPI documents translate their examples with the same plans (`stepBackward`).
 */

type JsonObject = Record<string, unknown>;
/** A body, translated: the same value when no change applied. Throws TranslationRefusal. */
type Apply = (body: unknown) => unknown;
/** One value's change (a scale, a map); throws TranslationRefusal when the result cannot be written exactly. */
type ValueChange = (value: unknown) => unknown;

/** A parsed object, not an array. */
const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** What happens to one key of an object, found under the name the body being translated has. */
interface KeyPlan {
  /** The name it leaves under; null: dropped. */
  readonly to: string | null;
  /** A change of the value itself. */
  readonly value: ValueChange | undefined;
  /** A change of each item, when the value is an array (`amounts[]`). */
  readonly itemValue: ValueChange | undefined;
  /** The plan of the value, when it is an object (`customer.id`). */
  readonly object: ObjectPlan | undefined;
  /** The plan of each object item, when the value is an array (`lines[].sku`). */
  readonly itemObjects: ObjectPlan | undefined;
}

/** A field put in where an object lacks it: a request's default, a removed field put back into an answer. */
interface Fill {
  readonly name: string;
  /** Shared by every body: nothing here changes a value in place. */
  readonly value: unknown;
  /** Already there: kept (a request that sends the field), or refused as a collision (an answer that has it). */
  readonly whenPresent: 'keep' | 'refuse';
}

/**
 * A name of an object's keys that a plan knows: what happens to a key under it (if anything), and which key a
 * change leaves under it (if any), so a key of the body may not take it too.
 */
interface NamePlan {
  readonly key: KeyPlan | undefined;
  readonly producedFrom: string | undefined;
}

/** What happens to one object: its keys by the name they have in the body being translated, then the fills. */
interface ObjectPlan {
  /** One look-up per key of a body's object: most keys are no name of the plan's. */
  readonly names: ReadonlyMap<string, NamePlan>;
  /** The names a key plan is found under, for the quick look at whether an object has any of them. */
  readonly keyNames: readonly string[];
  readonly fills: readonly Fill[];
}

/** Sets an own property, `__proto__` included (a plain assignment of that name would change the prototype). */
function setOwn(object: JsonObject, key: string, value: unknown): void {
  if (key !== '__proto__') object[key] = value;
  else Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

function collision(name: string, from: string | undefined): TranslationRefusal {
  const what =
    from === undefined
      ? `"${name}" is already in the body, where a removed field is put back`
      : `"${from}" becomes "${name}", which the body already has`;
  return new TranslationRefusal('collision', what);
}

/** Whether `plan` has anything to do in `object`: one of its keys is there, or a fill is missing or refused. */
function reaches(plan: ObjectPlan, object: JsonObject): boolean {
  for (const name of plan.keyNames) if (Object.hasOwn(object, name)) return true;
  for (const fill of plan.fills) if (fill.whenPresent === 'refuse' || !Object.hasOwn(object, fill.name)) return true;
  return false;
}

/** One object translated: rebuilt once, keys in their order and fills after them, or the same object unchanged. */
function applyObject(plan: ObjectPlan, object: JsonObject): JsonObject {
  if (!reaches(plan, object)) return object;
  const out: JsonObject = {};
  let changed = false;
  // for…in: an object from JSON.parse (or rebuilt here) has no enumerable inherited keys.
  for (const key in object) {
    const value = object[key];
    const named = plan.names.get(key);
    if (named === undefined) {
      setOwn(out, key, value);
      continue;
    }
    const keyPlan = named.key;
    if (keyPlan === undefined) {
      // A name some change produces, here untouched: the change's key may not take it too.
      if (Object.hasOwn(out, key)) throw collision(key, named.producedFrom);
      setOwn(out, key, value);
      continue;
    }
    const to = keyPlan.to;
    if (to === null) {
      changed = true;
      continue;
    }
    let after: unknown;
    try {
      after = applyKey(keyPlan, value);
    } catch (error) {
      throw refusedWithin(error, key);
    }
    if (after !== value || to !== key) changed = true;
    if (Object.hasOwn(out, to)) throw collision(to, key);
    setOwn(out, to, after);
  }
  for (const fill of plan.fills) {
    if (Object.hasOwn(out, fill.name)) {
      if (fill.whenPresent === 'refuse') throw collision(fill.name, undefined);
      continue;
    }
    setOwn(out, fill.name, fill.value);
    changed = true;
  }
  return changed ? out : object;
}

function applyKey(plan: KeyPlan, value: unknown): unknown {
  const after = plan.value === undefined ? value : plan.value(value);
  if (Array.isArray(after))
    return plan.itemValue !== undefined || plan.itemObjects !== undefined ? applyItems(plan, after) : after;
  return plan.object !== undefined && isObject(after) ? applyObject(plan.object, after) : after;
}

/** An array's items translated: a copy once the first item changes, else the same array. */
function applyItems({ itemValue, itemObjects }: KeyPlan, items: readonly unknown[]): unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    let after = item;
    try {
      if (itemValue !== undefined) after = itemValue(after);
      if (itemObjects !== undefined && isObject(after)) after = applyObject(itemObjects, after);
    } catch (error) {
      throw refusedWithin(error, i);
    }
    if (after !== item) (out ??= items.slice())[i] = after;
  }
  return out ?? (items as unknown[]);
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
function mapChanges(values: MapValues): ValueChanges {
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

interface ValueChanges {
  readonly forward: ValueChange;
  readonly backward: ValueChange;
}

/** Below this, an integer times or divided by a power of ten is written as the decimal it is (no noise to cut). */
const EXACT_DIGITS_BELOW = 1e15;

function scaleChanges(factor: number): ValueChanges {
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
 * A field of one version step as this version names it, with everything its changes say: the declarations read
 * once, then turned into the plan of each direction.
 */
interface FieldNode {
  readonly name: string;
  /** Its name in the successor (`to` of a rename or a scale). */
  successor: string;
  /** `add`: only the successor has it; a request body lacking it gets `fill` when one is declared. */
  added: { readonly fill: boolean; readonly value: unknown } | undefined;
  /** `remove`: only this version has it; an answer gets it back with `value`. */
  removed: { readonly value: unknown } | undefined;
  /** A scale or map of the value itself, and of each item of an array (`amounts[]`). */
  value: ValueChanges | undefined;
  itemValue: ValueChanges | undefined;
  /** The fields below it: of its object (`customer.id`), of each of its items (`lines[].sku`). */
  readonly object: Map<string, FieldNode>;
  readonly items: Map<string, FieldNode>;
}

function nodeIn(level: Map<string, FieldNode>, name: string): FieldNode {
  let node = level.get(name);
  if (node === undefined) {
    node = {
      name,
      successor: name,
      added: undefined,
      removed: undefined,
      value: undefined,
      itemValue: undefined,
      object: new Map(),
      items: new Map(),
    };
    level.set(name, node);
  }
  return node;
}

/** One step's changes of one resource as a tree of fields (the policy file has refused contradicting changes). */
function fieldTree(changes: readonly VersionChange[]): Map<string, FieldNode> {
  const root = new Map<string, FieldNode>();
  for (const change of changes) {
    const segments = fieldSegments(change.field);
    const leaf = segments.pop() as { name: string; array: boolean };
    let level = root;
    for (const { name, array } of segments) level = array ? nodeIn(level, name).items : nodeIn(level, name).object;
    const node = nodeIn(level, leaf.name);
    const setValue = (changes: ValueChanges) => {
      if (leaf.array) node.itemValue = changes;
      else node.value = changes;
    };
    switch (change.op) {
      case 'rename':
        node.successor = leafName(change.to);
        break;
      case 'scale':
        node.successor = leafName(change.to ?? change.field);
        setValue(scaleChanges(change.factor));
        break;
      case 'map':
        setValue(mapChanges(change.values));
        break;
      case 'add':
        node.added =
          change.default === undefined
            ? { fill: false, value: undefined }
            : { fill: true, value: declaredJson(change.default) };
        break;
      case 'remove':
        // Put back as declared; without a value, as null: the field is there, as the old version promised.
        node.removed = { value: declaredJson(change.value ?? null) };
        break;
    }
  }
  return root;
}

function objectPlan(keys: Map<string, KeyPlan>, fills: Fill[]): ObjectPlan | undefined {
  if (keys.size === 0 && fills.length === 0) return undefined;
  const producedFrom = new Map<string, string>();
  for (const [name, { to }] of keys) if (to !== null) producedFrom.set(to, name);
  const names = new Map<string, NamePlan>();
  for (const name of new Set([...keys.keys(), ...producedFrom.keys()])) {
    names.set(name, { key: keys.get(name), producedFrom: producedFrom.get(name) });
  }
  return { names, keyNames: [...keys.keys()], fills };
}

/** This version's body into the successor's: keys by this version's names. */
function forwardPlan(level: ReadonlyMap<string, FieldNode>): ObjectPlan | undefined {
  const keys = new Map<string, KeyPlan>();
  const fills: Fill[] = [];
  for (const node of level.values()) {
    if (node.added !== undefined) {
      if (node.added.fill) fills.push({ name: node.name, value: node.added.value, whenPresent: 'keep' });
      continue;
    }
    keys.set(node.name, {
      to: node.removed === undefined ? node.successor : null,
      value: node.value?.forward,
      itemValue: node.itemValue?.forward,
      object: forwardPlan(node.object),
      itemObjects: forwardPlan(node.items),
    });
  }
  return objectPlan(keys, fills);
}

/** The successor's body into this version's: keys by the successor's names. */
function backwardPlan(level: ReadonlyMap<string, FieldNode>): ObjectPlan | undefined {
  const keys = new Map<string, KeyPlan>();
  const fills: Fill[] = [];
  for (const node of level.values()) {
    if (node.removed !== undefined) {
      fills.push({ name: node.name, value: node.removed.value, whenPresent: 'refuse' });
      continue;
    }
    keys.set(node.successor, {
      to: node.added === undefined ? node.name : null,
      value: node.value?.backward,
      itemValue: node.itemValue?.backward,
      object: backwardPlan(node.object),
      itemObjects: backwardPlan(node.items),
    });
  }
  return objectPlan(keys, fills);
}

const unchanged: Apply = (body) => body;
const applying = (plan: ObjectPlan | undefined): Apply =>
  plan === undefined ? unchanged : (body) => (isObject(body) ? applyObject(plan, body) : body);

/** One version step of one resource, both ways. */
function stepOf(changes: readonly VersionChange[]): { forward: Apply; backward: Apply } {
  const tree = fieldTree(changes);
  return { forward: applying(forwardPlan(tree)), backward: applying(backwardPlan(tree)) };
}

/** How deep a change's field lies (`items[].id`: 2). */
const depthOf = (change: VersionChange): number => change.field.split('.').length;

/**
 * One version's changes in the order the derived documents apply them to schemas forward (this version →
 * successor), whatever order they were declared in: fields are named as this version names them, so the deepest
 * fields change first, before their parents are renamed, and a map before the rename of its field. Backward is
 * the other way round (changes/derive-document.ts). Bodies need no order: a plan applies a step's changes at once.
 */
export function inForwardOrder(changes: readonly VersionChange[]): VersionChange[] {
  const rank = (change: VersionChange): number => depthOf(change) * 2 + (change.op === 'map' ? 1 : 0);
  return [...changes].sort((a, b) => rank(b) - rank(a));
}

/** The body translation of one resource between a version and the version serving it. */
export interface ResourceTranslation {
  /** A request body, from the requested version to the serving one (oldest first). */
  readonly forward: Apply;
  /** A response body, from the serving version back to the requested one (newest first). */
  readonly backward: Apply;
}

/** How a version declared as changes is served. */
export interface VersionTranslation {
  /** The first version down the chain of successors that has no changes: the backend serves it. */
  readonly served: number;
  /** By resource template, the resources whose bodies change; any other resource is only forwarded. */
  readonly resources: ReadonlyMap<string, ResourceTranslation>;
  /** Short hash of the chain's changes: part of this version's ETags, which change when the declarations do. */
  readonly digest: string;
}

const inOrder = (applies: readonly Apply[]): Apply => {
  const steps = applies.filter((apply) => apply !== unchanged);
  if (steps.length <= 1) return steps[0] ?? unchanged;
  return (body) => {
    let translated = body;
    for (const apply of steps) translated = apply(translated);
    return translated;
  };
};

/**
 * One version step's changes (of one resource) read backward: a body of the successor as this version's. A
 * translated answer goes through these steps newest first; a derived OpenAPI document's examples go through them
 * the same way (gateway/src/changes/derive-document.ts).
 */
export const stepBackward = (changes: readonly VersionChange[]): Apply => stepOf(changes).backward;

interface TranslatedEntry {
  readonly version: number;
  readonly successor?: number | undefined;
  readonly changes?: readonly VersionChange[] | undefined;
}

const compiledByPolicy = new WeakMap<readonly TranslatedEntry[], ReadonlyMap<number, VersionTranslation>>();

/**
 * The compiled translations of a policy's versions (`VersionPolicy.versions`, one array per policy in force):
 * compiled on the first call for that policy, so a request only looks them up.
 */
export function translationsOf(versions: readonly TranslatedEntry[]): ReadonlyMap<number, VersionTranslation> {
  let compiled = compiledByPolicy.get(versions);
  if (compiled === undefined) compiledByPolicy.set(versions, (compiled = compileTranslations(versions)));
  return compiled;
}

/**
 * Every version with changes of a validated policy, with the version that serves it and its resources'
 * translations: v1 → v2 → v3 goes forward v1's changes then v2's, backward v2's then v1's.
 */
export function compileTranslations(versions: readonly TranslatedEntry[]): ReadonlyMap<number, VersionTranslation> {
  const byVersion = new Map(versions.map((entry) => [entry.version, entry]));
  const hasChanges = (entry: TranslatedEntry | undefined): entry is TranslatedEntry & { successor: number } =>
    entry?.successor !== undefined && (entry.changes?.length ?? 0) > 0;
  const translations = new Map<number, VersionTranslation>();
  for (const entry of versions) {
    if (!hasChanges(entry)) continue;
    const chain: TranslatedEntry[] = [];
    let step: TranslatedEntry | undefined = entry;
    // The policy file refuses a loop of versions with changes, so this ends.
    while (hasChanges(step)) {
      chain.push(step);
      step = byVersion.get(step.successor);
    }
    const served = (chain[chain.length - 1] as TranslatedEntry & { successor: number }).successor;
    const templates = new Set(chain.flatMap((link) => (link.changes ?? []).map((change) => change.resource)));
    const resources = new Map<string, ResourceTranslation>();
    for (const template of templates) {
      const steps = chain.map((link) => stepOf((link.changes ?? []).filter((change) => change.resource === template)));
      resources.set(template, {
        forward: inOrder(steps.map(({ forward }) => forward)),
        backward: inOrder(steps.reverse().map(({ backward }) => backward)),
      });
    }
    const declared = JSON.stringify(chain.map((link) => link.changes));
    const digest = createHash('sha256').update(declared).digest('hex').slice(0, 8);
    translations.set(entry.version, { served, resources, digest });
  }
  return translations;
}
