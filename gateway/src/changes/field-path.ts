import type { VersionChange } from '../versions/changes.js';

/** One step of a field path: a property name, and whether the property is an array whose items go on. */
export interface FieldSegment {
  readonly name: string;
  readonly array: boolean;
}

/** `items[].user_id` → `items` (array), `user_id`. The policy file has checked the syntax already. */
export function fieldSegments(path: string): FieldSegment[] {
  return path
    .split('.')
    .map((part) => (part.endsWith('[]') ? { name: part.slice(0, -2), array: true } : { name: part, array: false }));
}

/** The name a change's field has in the successor (`to` of a rename or scale, else the field itself). */
export function successorField(change: VersionChange): string {
  return (change.op === 'rename' || change.op === 'scale') && change.to !== undefined ? change.to : change.field;
}

/** The last segment's name (`items[].user_id` → `user_id`). */
export function leafName(path: string): string {
  return (fieldSegments(path).at(-1) as FieldSegment).name;
}

/** Successor value = this version's × factor; going back, the successor's ÷ factor. */
export const unscale = (value: unknown, factor: number): unknown =>
  typeof value === 'number' ? value / factor : value;

/** A `map` read backwards: successor value → this version's. The policy file has checked it is one-to-one. */
export function inverseValues(change: Extract<VersionChange, { op: 'map' }>): Map<unknown, string> {
  return new Map(Object.entries(change.values).map(([old, successor]) => [successor, old]));
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `object` with the key `from` renamed to `to` in its place (key order kept, as a reader sees the example). */
function renamedKey(object: Json, from: string, to: string): Json {
  return Object.fromEntries(Object.entries(object).map(([key, value]) => [key === from ? to : key, value]));
}

/**
 * A successor's JSON value (a documented example) as this version shows it: the changes of one step read
 * backwards, last first. A rename or scale keeps the field where it is in its object; a missing step or a
 * value of another kind on the way is left as it is. Copies what it changes, never the input.
 */
export function valueBackward(value: unknown, changes: readonly VersionChange[]): unknown {
  let result = value;
  for (const change of [...changes].reverse()) {
    const segments = fieldSegments(successorField(change));
    const leaf = leafName(change.field);
    const replaceParent = (transform: (parent: Json, name: string) => Json) => {
      result = mapParents(result, segments, transform);
    };
    switch (change.op) {
      case 'rename':
        replaceParent((parent, name) => (name in parent ? renamedKey(parent, name, leaf) : parent));
        break;
      case 'scale':
        replaceParent((parent, name) =>
          name in parent ? renamedKey({ ...parent, [name]: unscale(parent[name], change.factor) }, name, leaf) : parent,
        );
        break;
      case 'add':
        replaceParent((parent, name) => Object.fromEntries(Object.entries(parent).filter(([key]) => key !== name)));
        break;
      case 'remove':
        if (change.value !== undefined) replaceParent((parent) => ({ ...parent, [leaf]: change.value }));
        break;
      case 'map': {
        const inverse = inverseValues(change);
        replaceParent((parent, name) =>
          name in parent
            ? { ...parent, [name]: mapped(parent[name], inverse, (segments.at(-1) as FieldSegment).array) }
            : parent,
        );
        break;
      }
    }
  }
  return result;
}

function mapped(value: unknown, inverse: ReadonlyMap<unknown, string>, array: boolean): unknown {
  if (array) return Array.isArray(value) ? value.map((item: unknown) => inverse.get(item) ?? item) : value;
  return inverse.get(value) ?? value;
}

/** `value` with every parent of the path's last segment replaced by `transform(parent, leaf name)`. */
function mapParents(
  value: unknown,
  segments: readonly FieldSegment[],
  transform: (parent: Json, name: string) => Json,
): unknown {
  const [first, ...rest] = segments;
  if (first === undefined || !isObject(value)) return value;
  if (rest.length === 0) return transform(value, first.name);
  if (!(first.name in value)) return value;
  const child = value[first.name];
  if (!first.array) return { ...value, [first.name]: mapParents(child, rest, transform) };
  if (!Array.isArray(child)) return value;
  return { ...value, [first.name]: child.map((element) => mapParents(element, rest, transform)) };
}
