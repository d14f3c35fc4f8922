import { fieldOf, type FieldChange, type VersionChange } from './changes.js';
import { fieldSegments, leafName } from './field-path.js';
import { declaredJson } from './json-text.js';
import type { StepPaths } from './paths.js';
import { TranslationRefusal, refusedWithin } from './refusal.js';
import { linkChanges, mapChanges, scaleChanges, type ValueChange, type ValueChanges } from './values.js';

/**
 * The translation of the JSON bodies of one resource between a version declared as changes and its successor
 * (docs/behaviour.md "Versions declared as changes", "Translation that fails closed"). Compiled once per policy
 * into a plan per direction: a tree of the objects a body's changes reach, each with what happens to its keys and
 * which fields move out of it or into it. Applying a plan visits only the objects it names and rebuilds each
 * changed one once, its keys in their order, so the cost is linear in the body; nothing is changed in place, and an
 * object (or the whole body) no change applies to comes back as the same object. Anything that is not where a change
 * expects it (a missing field, a missing array, a value of another type) is left as it is. What cannot be
 * translated exactly is refused (TranslationRefusal): a scaled value that is no finite number, two fields under one
 * name.
 */

type JsonObject = Record<string, unknown>;
/** A body, translated: the same value when no change applied. Throws TranslationRefusal. */
export type Apply = (body: unknown) => unknown;

/** A parsed object, not an array. */
export const isObject = (value: unknown): value is JsonObject =>
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

/** A field that moves within an object's tree: its path below the object, and where it goes. */
interface MovePlan {
  readonly from: readonly string[];
  readonly to: readonly string[];
}

/**
 * A name of an object's keys that a plan knows: what happens to a key under it (if anything), and which key a
 * change leaves under it (if any), so a key of the body may not take it too.
 */
interface NamePlan {
  readonly key: KeyPlan | undefined;
  readonly producedFrom: string | undefined;
}

/** What happens to one object: its keys by the name they have in the body being translated, the fills, the moves. */
interface ObjectPlan {
  /** One look-up per key of a body's object: most keys are no name of the plan's. */
  readonly names: ReadonlyMap<string, NamePlan>;
  /** The names a key plan is found under, for the quick look at whether an object has any of them. */
  readonly keyNames: readonly string[];
  readonly fills: readonly Fill[];
  readonly moves: readonly MovePlan[];
  /**
   * Backward, fields move back to where this version has them before the keys are read by the successor's names
   * (the fields below a moved one are named where it is); forward, the keys change first.
   */
  readonly movesFirst: boolean;
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

/** Whether `plan` has anything to do with the keys of `object`: one of its keys is there, or a fill is due. */
function reachesKeys(plan: ObjectPlan, object: JsonObject): boolean {
  for (const name of plan.keyNames) if (Object.hasOwn(object, name)) return true;
  for (const fill of plan.fills) if (fill.whenPresent === 'refuse' || !Object.hasOwn(object, fill.name)) return true;
  return false;
}

/** One object translated: its keys and fills, its moves; or the same object unchanged. */
function applyObject(plan: ObjectPlan, object: JsonObject): JsonObject {
  if (plan.moves.length === 0) return reachesKeys(plan, object) ? applyKeys(plan, object) : object;
  if (plan.movesFirst) {
    const moved = applyMoves(plan.moves, object);
    return reachesKeys(plan, moved) ? applyKeys(plan, moved) : moved;
  }
  return applyMoves(plan.moves, reachesKeys(plan, object) ? applyKeys(plan, object) : object);
}

/** An object's keys rebuilt once, in their order and fills after them, or the same object unchanged. */
function applyKeys(plan: ObjectPlan, object: JsonObject): JsonObject {
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

/** A copy of `object` with `key` set (in its place, or last), or without it (`value` undefined). */
function copyWith(object: JsonObject, key: string, value: unknown): JsonObject {
  const out: JsonObject = {};
  for (const name in object) {
    if (name !== key) setOwn(out, name, object[name]);
    else if (value !== undefined) setOwn(out, name, value);
  }
  if (value !== undefined && !Object.hasOwn(object, key)) setOwn(out, key, value);
  return out;
}

/**
 * The value at `path` below `object` taken out: the object without it, each parent on the way that is left empty
 * dropped too (undefined then); nothing when the path does not lead to a field.
 */
function extract(
  object: JsonObject,
  path: readonly string[],
): { object: JsonObject | undefined; value: unknown } | undefined {
  const [first, ...rest] = path as [string, ...string[]];
  if (!Object.hasOwn(object, first)) return undefined;
  let inner: JsonObject | undefined;
  let value: unknown;
  if (rest.length === 0) value = object[first];
  else {
    const child = object[first];
    if (!isObject(child)) return undefined;
    const taken = extract(child, rest);
    if (taken === undefined) return undefined;
    ({ object: inner, value } = taken);
  }
  const left = copyWith(object, first, inner);
  return { object: Object.keys(left).length === 0 ? undefined : left, value };
}

/** `value` put at `path` below `object`, the parents it lacks created; a field already there is a collision. */
function insert(object: JsonObject, path: readonly string[], value: unknown): JsonObject {
  return copyWith(object, path[0] as string, inserted(object, path, value));
}

/** What `object`'s key `path[0]` holds once `value` is put at `path`; a field already there is a collision. */
function inserted(object: JsonObject, path: readonly string[], value: unknown): unknown {
  const [first, ...rest] = path as [string, ...string[]];
  const present = Object.hasOwn(object, first);
  if (rest.length === 0) {
    if (present)
      throw new TranslationRefusal('collision', `"${first}" is already in the body, where a moved field goes`);
    return value;
  }
  const child = present ? object[first] : {};
  if (!isObject(child)) {
    throw new TranslationRefusal('collision', `"${first}" is no object, where a moved field goes into`);
  }
  try {
    return insert(child, rest, value);
  } catch (error) {
    throw refusedWithin(error, first);
  }
}

/** A key of the moving object taken out by a move. */
const TAKEN_OUT = Symbol('taken out');

/**
 * The moves of one object, all at once: every field taken out first, then each put where it goes, the object
 * rebuilt once. A field that goes in under a key the object did not have takes the place of a key the moves took
 * out of it (the field itself, or a parent left empty), in order, so `{"id", "customer_id", "total"}` and
 * `{"id", "customer": {"id"}, "total"}` are each other's, both ways, in the same order; with no place left, it goes
 * after the other keys.
 */
function applyMoves(moves: readonly MovePlan[], object: JsonObject): JsonObject {
  if (moves.length === 1) return applyMove(moves[0] as MovePlan, object);
  /** What the moves make of the object's keys (a value, or TAKEN_OUT), and the keys they add, in order. */
  const changed = new Map<string, unknown>();
  const added = new Map<string, unknown>();
  const current = (key: string): unknown =>
    changed.has(key) ? changed.get(key) : added.has(key) ? added.get(key) : object[key];
  const has = (key: string): boolean =>
    changed.has(key) ? changed.get(key) !== TAKEN_OUT : added.has(key) || Object.hasOwn(object, key);
  const freed: string[] = [];
  const taken: [MovePlan, unknown][] = [];
  for (const move of moves) {
    const [first, ...rest] = move.from as [string, ...string[]];
    if (!has(first)) continue;
    let value: unknown;
    let left: unknown = TAKEN_OUT;
    if (rest.length === 0) value = current(first);
    else {
      const child = current(first);
      const found = isObject(child) ? extract(child, rest) : undefined;
      if (found === undefined) continue;
      value = found.value;
      if (found.object !== undefined) left = found.object;
    }
    changed.set(first, left);
    if (left === TAKEN_OUT) freed.push(first);
    taken.push([move, value]);
  }
  if (taken.length === 0) return object;
  /** A freed key → the new key that takes its place. */
  const placed = new Map<string, string>();
  for (const [move, value] of taken) {
    const [first, ...rest] = move.to as [string, ...string[]];
    const present = has(first);
    let after: unknown;
    if (rest.length === 0) {
      if (present) {
        throw new TranslationRefusal('collision', `"${first}" is already in the body, where a moved field goes`);
      }
      after = value;
    } else {
      const child = present ? current(first) : {};
      if (!isObject(child)) {
        throw new TranslationRefusal('collision', `"${first}" is no object, where a moved field goes into`);
      }
      try {
        after = insert(child, rest, value);
      } catch (error) {
        throw refusedWithin(error, first);
      }
    }
    if (Object.hasOwn(object, first)) changed.set(first, after);
    else {
      if (!added.has(first)) {
        const place = freed.shift();
        if (place !== undefined) placed.set(place, first);
      }
      added.set(first, after);
    }
  }
  const out: JsonObject = {};
  for (const key in object) {
    if (!changed.has(key)) setOwn(out, key, object[key]);
    else if (changed.get(key) !== TAKEN_OUT) setOwn(out, key, changed.get(key));
    else {
      const instead = placed.get(key);
      if (instead !== undefined) setOwn(out, instead, added.get(instead));
    }
  }
  for (const [key, value] of added) if (!Object.hasOwn(out, key)) setOwn(out, key, value);
  return out;
}

/** One move of an object (nearly every one), as `applyMoves` does it, with one object rebuilt and no bookkeeping. */
function applyMove({ from, to }: MovePlan, object: JsonObject): JsonObject {
  const [first, ...below] = from as [string, ...string[]];
  if (!Object.hasOwn(object, first)) return object;
  let value: unknown;
  let left: unknown = TAKEN_OUT;
  if (below.length === 0) value = object[first];
  else {
    const child = object[first];
    const found = isObject(child) ? extract(child, below) : undefined;
    if (found === undefined) return object;
    value = found.value;
    if (found.object !== undefined) left = found.object;
  }
  const [into, ...deeper] = to as [string, ...string[]];
  const there = into === first ? left : Object.hasOwn(object, into) ? object[into] : TAKEN_OUT;
  let after: unknown;
  if (deeper.length === 0) {
    if (there !== TAKEN_OUT) {
      throw new TranslationRefusal('collision', `"${into}" is already in the body, where a moved field goes`);
    }
    after = value;
  } else {
    const child = there === TAKEN_OUT ? {} : there;
    if (!isObject(child))
      throw new TranslationRefusal('collision', `"${into}" is no object, where a moved field goes into`);
    try {
      after = insert(child, deeper, value);
    } catch (error) {
      throw refusedWithin(error, into);
    }
  }
  // A key new to the object takes the place the move freed, if it freed one.
  const isNew = into !== first && !Object.hasOwn(object, into);
  const out: JsonObject = {};
  let placed = false;
  for (const key in object) {
    if (key === into) setOwn(out, key, after);
    else if (key !== first) setOwn(out, key, object[key]);
    else if (left !== TAKEN_OUT) setOwn(out, key, left);
    else if (isNew) {
      setOwn(out, into, after);
      placed = true;
    }
  }
  if (isNew && !placed) setOwn(out, into, after);
  return out;
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
  /** A scale, map or link of the value itself, and of each item of an array (`amounts[]`). */
  value: ValueChanges | undefined;
  itemValue: ValueChanges | undefined;
  /** The fields below it: of its object (`customer.id`), of each of its items (`lines[].sku`). */
  readonly object: Level;
  readonly items: Level;
}

/** One object of a step's tree: its fields, and the fields that move within it (paths below it, no arrays). */
interface Level {
  readonly fields: Map<string, FieldNode>;
  readonly moves: { from: string[]; to: string[] }[];
}

const newLevel = (): Level => ({ fields: new Map(), moves: [] });

function nodeIn(level: Level, name: string): FieldNode {
  let node = level.fields.get(name);
  if (node === undefined) {
    node = {
      name,
      successor: name,
      added: undefined,
      removed: undefined,
      value: undefined,
      itemValue: undefined,
      object: newLevel(),
      items: newLevel(),
    };
    level.fields.set(name, node);
  }
  return node;
}

/** The level a path's segments lead to (`lines[].product` → the object of each item's product). */
function levelAt(root: Level, segments: readonly { name: string; array: boolean }[]): Level {
  let level = root;
  for (const { name, array } of segments) level = array ? nodeIn(level, name).items : nodeIn(level, name).object;
  return level;
}

/** One step's field changes of one resource and body as a tree (the policy file has refused contradicting ones). */
function fieldTree(changes: readonly FieldChange[], paths: StepPaths): Level {
  const root = newLevel();
  for (const change of changes) {
    const segments = fieldSegments(change.field);
    if (change.op === 'move') {
      // Where the move happens: the deepest object both paths share (their arrays are the same, the policy says).
      const into = fieldSegments(change.to);
      let common = 0;
      while (
        common < segments.length - 1 &&
        common < into.length - 1 &&
        segments[common]?.name === into[common]?.name &&
        segments[common]?.array === into[common]?.array
      )
        common++;
      const names = (list: typeof segments) => list.slice(common).map(({ name }) => name);
      levelAt(root, segments.slice(0, common)).moves.push({ from: names(segments), to: names(into) });
      continue;
    }
    const leaf = segments.pop() as { name: string; array: boolean };
    const node = nodeIn(levelAt(root, segments), leaf.name);
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
      case 'link':
        setValue(linkChanges(paths));
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

function objectPlan(
  keys: Map<string, KeyPlan>,
  fills: Fill[],
  moves: MovePlan[],
  movesFirst: boolean,
): ObjectPlan | undefined {
  if (keys.size === 0 && fills.length === 0 && moves.length === 0) return undefined;
  const producedFrom = new Map<string, string>();
  for (const [name, { to }] of keys) if (to !== null) producedFrom.set(to, name);
  const names = new Map<string, NamePlan>();
  for (const name of new Set([...keys.keys(), ...producedFrom.keys()])) {
    names.set(name, { key: keys.get(name), producedFrom: producedFrom.get(name) });
  }
  return { names, keyNames: [...keys.keys()], fills, moves, movesFirst };
}

/** This version's body into the successor's: keys by this version's names, then the moves. */
function forwardPlan(level: Level): ObjectPlan | undefined {
  const keys = new Map<string, KeyPlan>();
  const fills: Fill[] = [];
  for (const node of level.fields.values()) {
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
  return objectPlan(keys, fills, level.moves, false);
}

/** The successor's body into this version's: the moves back, then keys by the successor's names. */
function backwardPlan(level: Level): ObjectPlan | undefined {
  const keys = new Map<string, KeyPlan>();
  const fills: Fill[] = [];
  for (const node of level.fields.values()) {
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
  const moves = level.moves.map(({ from, to }) => ({ from: to, to: from }));
  return objectPlan(keys, fills, moves, true);
}

/** Leaves a body as it is: recognised by `inOrder`, so a chain of steps skips it. */
export const unchanged: Apply = (body) => body;

const applying = (plan: ObjectPlan | undefined): Apply =>
  plan === undefined ? unchanged : (body) => (isObject(body) ? applyObject(plan, body) : body);

/** Applies each of `applies` in turn, skipping those that change nothing. */
export function inOrder(applies: readonly Apply[]): Apply {
  const steps = applies.filter((apply) => apply !== unchanged);
  if (steps.length <= 1) return steps[0] ?? unchanged;
  return (body) => {
    let translated = body;
    for (const apply of steps) translated = apply(translated);
    return translated;
  };
}

/** A body both ways. */
export interface BodyStep {
  /** This version's body as the successor's (a request body). */
  readonly forward: Apply;
  /** The successor's body as this version's (an answer). */
  readonly backward: Apply;
}

/** An envelope both ways: this version's whole body under `path` in the successor's; other keys dropped back. */
function envelope(path: readonly string[]): BodyStep {
  return {
    forward: (body) => path.reduceRight<unknown>((inner, name) => ({ [name]: inner }), body),
    backward: (body) => {
      let inner = body;
      for (const name of path) {
        // A body that is not wrapped as the change says is left as it is.
        if (!isObject(inner) || !Object.hasOwn(inner, name)) return body;
        inner = inner[name];
      }
      return inner;
    },
  };
}

/** What compiling a step's body changes needs besides the changes: paths for links, modules by their `module`. */
interface BodyContext {
  readonly paths: StepPaths;
  /** A `module` change's body step (loaded and run under the translation's limits: module-step.ts). */
  readonly moduleStep: (change: Extract<VersionChange, { op: 'module' }>) => BodyStep;
}

/**
 * One version step of one resource's bodies of one kind (success or error), both ways. Nearest this version, the
 * field changes; then the modules (in the order declared forward); outermost, the envelope.
 */
export function bodyStep(changes: readonly VersionChange[], context: BodyContext): BodyStep {
  const fields: FieldChange[] = [];
  const modules: BodyStep[] = [];
  let wrap: BodyStep | undefined;
  for (const change of changes) {
    if (change.op === 'envelope') wrap = envelope(change.field.split('.'));
    else if (change.op === 'module') modules.push(context.moduleStep(change));
    else if (fieldOf(change) !== undefined) fields.push(change as FieldChange);
  }
  const tree = fieldTree(fields, context.paths);
  const forward = [applying(forwardPlan(tree)), ...modules.map((step) => step.forward)];
  const backward = [...modules.map((step) => step.backward).reverse(), applying(backwardPlan(tree))];
  if (wrap !== undefined) {
    forward.push(wrap.forward);
    backward.unshift(wrap.backward);
  }
  return { forward: inOrder(forward), backward: inOrder(backward) };
}
