import { createHash } from 'node:crypto';
import { fieldSegments, leafName, type FieldSegment } from './field-path.js';
import type { VersionChange } from '../versions/changes.js';

/**
 * The translation of JSON bodies between a version declared as changes and the version that serves it
 * (docs/behaviour.md "Versions declared as changes"). Compiled once per policy: a request walks closures,
 * never the declarations. Bodies are parsed JSON, changed in place; anything that is not where a change
 * expects it (a missing field, a missing array, a value of another type) is left as it is, never an error.
 * The derived OpenAPI documents translate their examples with the same walk (`stepBackward`).
 */

type JsonObject = Record<string, unknown>;
/** Changes one parsed body in place. */
type Apply = (body: unknown) => void;

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Calls `visit` with every object the path's parents lead to; a missing or mistyped step ends that branch. */
function walk(value: unknown, parents: readonly FieldSegment[], at: number, visit: (object: JsonObject) => void): void {
  if (!isObject(value)) return;
  if (at === parents.length) {
    visit(value);
    return;
  }
  const { name, array } = parents[at] as FieldSegment;
  if (!Object.hasOwn(value, name)) return;
  const child = value[name];
  if (!array) walk(child, parents, at + 1, visit);
  else if (Array.isArray(child)) for (const item of child) walk(item, parents, at + 1, visit);
}

/** Sets an own property, `__proto__` included (a plain assignment of that name would change the prototype). */
function setOwn(object: JsonObject, key: string, value: unknown): void {
  if (key !== '__proto__') object[key] = value;
  else Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Renames a key where it stands: the keys after it are moved behind it again, so the order is kept. */
function renameKey(object: JsonObject, from: string, to: string): void {
  let moving = false;
  for (const key of Object.keys(object)) {
    if (key === from) moving = true;
    if (!moving) continue;
    const value = object[key];
    delete object[key];
    setOwn(object, key === from ? to : key, value);
  }
}

/** A copy of a declared JSON value for each body, so a later change in a chain never edits the declaration. */
function copier(value: unknown): () => unknown {
  if (typeof value !== 'object' || value === null) return () => value;
  const text = JSON.stringify(value);
  return () => JSON.parse(text) as unknown;
}

/** Float noise (`19.99 * 100 = 1998.9999999999998`) cut at 15 significant digits, which every double holds. */
const tidy = (value: number): number => (Number.isInteger(value) ? value : Number(value.toPrecision(15)));
const roundHalfAwayFromZero = (value: number): number => (value < 0 ? -Math.round(-value) : Math.round(value));

interface Compiled {
  forward: Apply;
  backward: Apply;
}

/** One change of a field's value (`leaf`), applied to every object the field's parents lead to. */
function onLeaf(field: string, change: (object: JsonObject, leaf: FieldSegment) => void): Apply {
  const segments = fieldSegments(field);
  const parents = segments.slice(0, -1);
  const leaf = segments[segments.length - 1] as FieldSegment;
  return (body) => walk(body, parents, 0, (object) => change(object, leaf));
}

/** A value change of a leaf: the value itself, or each item of an array leaf (`amounts[]`). */
function valueChange(transform: (value: unknown) => unknown): (object: JsonObject, leaf: FieldSegment) => void {
  return (object, { name, array }) => {
    if (!Object.hasOwn(object, name)) return;
    const value = object[name];
    if (!array) object[name] = transform(value);
    else if (Array.isArray(value)) for (let i = 0; i < value.length; i++) value[i] = transform(value[i]);
  };
}

type MapValues = Readonly<Record<string, string | number | boolean>>;

const isScalar = (value: unknown): value is string | number | boolean =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';

/** A scaled field's value in the successor as this version's: divided by the factor; any other type as it is. */
export const scaledBack =
  (factor: number) =>
  (value: unknown): unknown =>
    typeof value === 'number' ? tidy(value / factor) : value;

/** A mapped field's value in the successor as this version's: the map read backwards; other values as they are. */
export function mappedBack(values: MapValues): (value: unknown) => unknown {
  // One-to-one (checked with the policy), so the inverse is a map too; keyed by type, as `1` is not `"1"`.
  const backward = new Map<string, unknown>(
    Object.entries(values).map(([from, to]) => [`${typeof to}:${String(to)}`, from]),
  );
  return (value) => {
    if (!isScalar(value)) return value;
    const key = `${typeof value}:${String(value)}`;
    return backward.has(key) ? backward.get(key) : value;
  };
}

function compileScale(field: string, to: string, factor: number): Compiled {
  const [from, into] = [leafName(field), leafName(to)];
  // A whole factor turns a decimal into a count of smaller units (euros into cents): an integer in the successor.
  const forward = Number.isInteger(factor)
    ? (value: unknown) => (typeof value === 'number' ? roundHalfAwayFromZero(tidy(value * factor)) : value)
    : (value: unknown) => (typeof value === 'number' ? tidy(value * factor) : value);
  const scaleForward = valueChange(forward);
  const scaleBackward = valueChange(scaledBack(factor));
  return {
    forward: onLeaf(field, (object, leaf) => {
      scaleForward(object, leaf);
      if (into !== from && Object.hasOwn(object, from)) renameKey(object, from, into);
    }),
    backward: onLeaf(field, (object, leaf) => {
      if (into !== from && Object.hasOwn(object, into)) renameKey(object, into, from);
      scaleBackward(object, leaf);
    }),
  };
}

function compileMap(field: string, values: MapValues): Compiled {
  const forward = new Map<string, unknown>(Object.entries(values));
  return {
    forward: onLeaf(
      field,
      valueChange((value) => (isScalar(value) && forward.has(String(value)) ? forward.get(String(value)) : value)),
    ),
    backward: onLeaf(field, valueChange(mappedBack(values))),
  };
}

function compileChange(change: VersionChange): Compiled {
  const key = leafName(change.field);
  switch (change.op) {
    case 'rename': {
      const to = leafName(change.to);
      return {
        forward: onLeaf(change.field, (object) => Object.hasOwn(object, key) && renameKey(object, key, to)),
        backward: onLeaf(change.field, (object) => Object.hasOwn(object, to) && renameKey(object, to, key)),
      };
    }
    case 'scale':
      return compileScale(change.field, change.to ?? change.field, change.factor);
    case 'map':
      return compileMap(change.field, change.values);
    case 'add': {
      const fill = change.default === undefined ? undefined : copier(change.default);
      return {
        forward: onLeaf(change.field, (object) => {
          if (fill !== undefined && !Object.hasOwn(object, key)) setOwn(object, key, fill());
        }),
        backward: onLeaf(change.field, (object) => delete object[key]),
      };
    }
    case 'remove': {
      // Put back as declared; without a value, as null: the field is there, as the old version promised.
      const value = copier(change.value ?? null);
      return {
        forward: onLeaf(change.field, (object) => delete object[key]),
        backward: onLeaf(change.field, (object) => !Object.hasOwn(object, key) && setOwn(object, key, value())),
      };
    }
  }
}

/** How deep a change's field lies (`items[].id`: 2). */
const depthOf = (change: VersionChange): number => change.field.split('.').length;

/**
 * One version's changes in the order forward (this version → successor) applies them, whatever order they were
 * declared in. Fields are named as this version names them, so the deepest fields change first, before their
 * parents are renamed, and a map before the rename of its field. Backward applies them the other way round: the
 * bodies here, the schemas and examples of the derived OpenAPI documents (changes/derive-document.ts).
 */
export function inForwardOrder(changes: readonly VersionChange[]): VersionChange[] {
  const rank = (change: VersionChange): number => depthOf(change) * 2 + (change.op === 'map' ? 1 : 0);
  return [...changes].sort((a, b) => rank(b) - rank(a));
}

/** One version's changes of one resource, compiled in the order each direction needs. */
function stepOf(changes: readonly VersionChange[]): { forward: Apply[]; backward: Apply[] } {
  const ordered = inForwardOrder(changes).map(compileChange);
  return {
    forward: ordered.map(({ forward }) => forward),
    backward: ordered.reverse().map(({ backward }) => backward),
  };
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

const inOrder =
  (applies: readonly Apply[]): Apply =>
  (body) => {
    for (const apply of applies) apply(body);
  };

/**
 * One version step's changes (of one resource) read backward: a body of the successor as this version's,
 * changed in place. A translated answer goes through these steps newest first; a derived OpenAPI document's
 * examples go through them the same way (gateway/src/changes/derive-document.ts).
 */
export const stepBackward = (changes: readonly VersionChange[]): Apply => inOrder(stepOf(changes).backward);

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
        forward: inOrder(steps.flatMap(({ forward }) => forward)),
        backward: inOrder(steps.reverse().flatMap(({ backward }) => backward)),
      });
    }
    const declared = JSON.stringify(chain.map((link) => link.changes));
    const digest = createHash('sha256').update(declared).digest('hex').slice(0, 8);
    translations.set(entry.version, { served, resources, digest });
  }
  return translations;
}
