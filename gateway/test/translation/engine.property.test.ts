// Properties of the translation engine over generated declarations and bodies (fast-check): it never throws anything
// but a refusal; what no change touches comes out byte for byte as it came in, keys in their order (checked against
// a naive model of the changes, written here once, on a tree that keeps every key's place and every value's text);
// and a round trip keeps every field no change removes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { VersionChange } from '../../src/translation/changes.js';
import { checkVersionChanges } from '../../src/translation/rules.js';
import { compileTranslations } from '../../src/translation/compile.js';
import { readJson, writeJson } from '../../src/translation/json-text.js';
import { TranslationRefusal } from '../../src/translation/refusal.js';

const ORDER = '/orders/:id';
const RUNS = { numRuns: 300 };

/** A JSON value as text, its objects as ordered entries: what a body says, byte for byte. */
type Json = { object: [string, Json][] } | { array: Json[] } | { text: string };
const text = (value: string): Json => ({ text: value });

function toText(value: Json): string {
  if ('text' in value) return value.text;
  if ('array' in value) return `[${value.array.map(toText).join(',')}]`;
  return `{${value.object.map(([key, item]) => `${JSON.stringify(key)}:${toText(item)}`).join(',')}}`;
}

// ---- declarations: leaves a–d under the body, under the object `o` and under the items of the array `l` ----

const LEAVES = ['a', 'b', 'c', 'd'] as const;
type Leaf = (typeof LEAVES)[number];
const FACTORS = [100, 0.001, 0.5] as const;
type Factor = (typeof FACTORS)[number];
/** Values a scale turns into each other exactly, this version's first; `10.005` rounds forward only. */
const SCALED: Record<Factor, [string, string][]> = {
  100: [
    ['19.99', '1999'],
    ['0.05', '5'],
    ['-3', '-300'],
    ['0', '0'],
    ['1.5', '150'],
  ],
  0.001: [
    ['1234', '1.234'],
    ['5', '0.005'],
  ],
  0.5: [
    ['3', '1.5'],
    ['-4', '-2'],
  ],
};
const ROUNDED: [string, string] = ['10.005', '1001'];
const MAPPED = { x: 'X', y: 'Y' } as const;

type LeafChange =
  | { op: 'rename' }
  | { op: 'scale'; factor: Factor; renamed: boolean }
  | { op: 'map'; renamed: boolean }
  | { op: 'add'; default: unknown }
  | { op: 'remove'; value: unknown };

/** What one object level declares: its leaves' changes, and (for the top level) its two parents. */
interface Level {
  leaves: Partial<Record<Leaf, LeafChange>>;
}
interface Declaration {
  top: Level;
  o: Level & { renamed: boolean };
  l: Level & { renamed: boolean };
}

const declared = fc.jsonValue({ maxDepth: 2 });
const leafChange: fc.Arbitrary<LeafChange> = fc.oneof(
  fc.constant({ op: 'rename' as const }),
  fc.record({ op: fc.constant('scale' as const), factor: fc.constantFrom(...FACTORS), renamed: fc.boolean() }),
  fc.record({ op: fc.constant('map' as const), renamed: fc.boolean() }),
  fc.record({ op: fc.constant('add' as const), default: fc.option(declared, { nil: undefined }) }),
  fc.record({ op: fc.constant('remove' as const), value: fc.option(declared, { nil: undefined }) }),
);
const level = fc.record({
  leaves: fc.record({ a: leafChange, b: leafChange, c: leafChange, d: leafChange }, { requiredKeys: [] }),
});
const declaration: fc.Arbitrary<Declaration> = fc.record({
  top: level,
  o: fc.record({ leaves: level.map((l) => l.leaves), renamed: fc.boolean() }),
  l: fc.record({ leaves: level.map((l) => l.leaves), renamed: fc.boolean() }),
});

const upper = (name: string): string => name.toUpperCase();
/** A leaf's name in the successor. */
function successorOf(name: string, change: LeafChange): string {
  return change.op === 'rename' || ((change.op === 'scale' || change.op === 'map') && change.renamed)
    ? upper(name)
    : name;
}

function changesOf({ top, o, l }: Declaration): VersionChange[] {
  const changes: VersionChange[] = [];
  const leaves = (prefix: string, { leaves: declaredLeaves }: Level) => {
    for (const name of LEAVES) {
      const change = declaredLeaves[name];
      if (change === undefined) continue;
      const field = `${prefix}${name}`;
      const to = `${prefix}${upper(name)}`;
      switch (change.op) {
        case 'rename':
          changes.push({ resource: ORDER, op: 'rename', field, to });
          break;
        case 'scale':
          changes.push({
            resource: ORDER,
            op: 'scale',
            field,
            factor: change.factor,
            ...(change.renamed ? { to } : {}),
          });
          break;
        case 'map':
          changes.push({ resource: ORDER, op: 'map', field, values: MAPPED });
          if (change.renamed) changes.push({ resource: ORDER, op: 'rename', field, to });
          break;
        case 'add':
          changes.push({
            resource: ORDER,
            op: 'add',
            field,
            ...(change.default === undefined ? {} : { default: change.default }),
          });
          break;
        case 'remove':
          changes.push({
            resource: ORDER,
            op: 'remove',
            field,
            ...(change.value === undefined ? {} : { value: change.value }),
          });
          break;
      }
    }
  };
  leaves('', top);
  leaves('o.', o);
  leaves('l[].', l);
  if (o.renamed) changes.push({ resource: ORDER, op: 'rename', field: 'o', to: 'O' });
  if (l.renamed) changes.push({ resource: ORDER, op: 'rename', field: 'l', to: 'L' });
  return changes;
}

/** A request body forward (this version → successor), a 2xx answer backward. */
interface ResourceTranslation {
  forward: (body: unknown) => unknown;
  backward: (body: unknown) => unknown;
}

function translationOf(decl: Declaration): ResourceTranslation {
  const changes = changesOf(decl);
  // Without changes nothing is translated: nothing to prove.
  fc.pre(changes.length > 0);
  const problems: string[] = [];
  const resources = [{ path: ORDER, versions: undefined }];
  checkVersionChanges({ version: 1, successor: 2, changes }, resources, (message) => problems.push(message));
  expect(problems).toEqual([]);
  const route = compileTranslations({ versions: [{ version: 1, successor: 2, changes }, { version: 2 }], resources })
    .versions.get(1)
    ?.routes.get(ORDER);
  return {
    forward: route?.requestBody ?? ((body) => body),
    backward: route?.answer(200).body ?? ((body) => body),
  };
}

// ---- bodies ----

/** Number literals in every spelling JSON allows, hostile ones first. */
const numberText = fc.oneof(
  fc.constantFrom(
    '123456789012345678',
    '-0',
    '1e400',
    '-1e400',
    '1E5',
    '1.50',
    '0.0000001',
    '9007199254740993',
    '5e-324',
    '1.0',
  ),
  fc
    .tuple(
      fc.constantFrom('', '-'),
      fc.oneof(fc.constant('0'), fc.stringMatching(/^[1-9]\d{0,25}$/)),
      fc.oneof(fc.constant(''), fc.stringMatching(/^\.\d{1,20}$/)),
      fc.oneof(fc.constant(''), fc.stringMatching(/^[eE][+-]?\d{1,3}$/)),
    )
    .map((parts) => parts.join('')),
);
const primitive: fc.Arbitrary<Json> = fc.oneof(
  numberText.map(text),
  fc.string({ unit: 'binary' }).map((value) => text(JSON.stringify(value))),
  fc.constantFrom('true', 'false', 'null').map(text),
);
/** Any value no change reaches: keys of every kind (integer-like, NUL first, `__proto__`), numbers of every spelling. */
const anyKey = fc.oneof(fc.string(), fc.constantFrom('0', '1', '10', '4294967295', '\u0000', '\u0000x', '__proto__'));
const free: fc.Arbitrary<Json> = fc.letrec<{ value: Json }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    primitive,
    fc.array(tie('value'), { maxLength: 3 }).map((array) => ({ array })),
    fc
      .uniqueArray(fc.tuple(anyKey, tie('value')), { maxLength: 3, selector: ([key]) => key })
      .map((object) => ({ object })),
  ),
})).value;
/** Keys no declaration names, some that JavaScript would move. */
const FREE_KEYS = ['x0', 'x1', 'x2', '0', '7', '12', '\u0000k', '__proto__'];

type Side = 'this' | 'successor';

/** The value a declared leaf holds in a body of `side`. */
function leafValue(change: LeafChange, side: Side, roundTrip: boolean): fc.Arbitrary<Json> {
  switch (change.op) {
    case 'scale': {
      const pairs =
        side === 'this' && !roundTrip
          ? [...SCALED[change.factor], ...(change.factor === 100 ? [ROUNDED] : [])]
          : SCALED[change.factor];
      const numbers = fc.constantFrom(...pairs).map(([mine, theirs]) => text(side === 'this' ? mine : theirs));
      return fc.oneof(numbers, fc.constant(text('"not a number"')));
    }
    case 'map':
      return fc.constantFrom(...(side === 'this' ? ['"x"', '"y"', '"z"', '7'] : ['"X"', '"Y"', '"z"', '7'])).map(text);
    default:
      return free;
  }
}

/**
 * The entries of one object of `side` for a level: the leaves that side has, free keys, and (when `provoke`) names
 * only the other side has, which a translation must refuse rather than overwrite.
 */
function entries(
  { leaves }: Level,
  side: Side,
  { roundTrip, extra = [] }: { roundTrip: boolean; extra?: fc.Arbitrary<[string, Json] | undefined>[] },
): fc.Arbitrary<[string, Json][]> {
  const parts: fc.Arbitrary<[string, Json] | undefined>[] = [...extra];
  for (const name of LEAVES) {
    const change = leaves[name];
    if (change === undefined) continue;
    const has = side === 'this' ? change.op !== 'add' : change.op !== 'remove';
    const key = side === 'this' ? name : successorOf(name, change);
    if (has)
      parts.push(
        fc.option(
          leafValue(change, side, roundTrip).map((value): [string, Json] => [key, value]),
          { nil: undefined },
        ),
      );
    // A name of the other side only: a collision when the translation would produce it too.
    const other = side === 'this' ? successorOf(name, change) : name;
    if (!roundTrip && other !== key)
      parts.push(
        fc.option(
          free.map((value): [string, Json] => [other, value]),
          { nil: undefined, freq: 4 },
        ),
      );
  }
  parts.push(
    ...FREE_KEYS.map((key) =>
      fc.option(
        free.map((value): [string, Json] => [key, value]),
        { nil: undefined },
      ),
    ),
  );
  return fc
    .tuple(...parts)
    .chain((found) =>
      fc.shuffledSubarray(
        found.filter((entry): entry is [string, Json] => entry !== undefined),
        { minLength: 0 },
      ),
    )
    .map((list) => {
      // One entry per key, as JSON.parse would keep only the last.
      const seen = new Set<string>();
      return list.filter(([key]) => !seen.has(key) && seen.add(key) !== undefined);
    });
}

function body(decl: Declaration, side: Side, roundTrip: boolean): fc.Arbitrary<Json> {
  const parentKey = (name: 'o' | 'l', renamed: boolean) => (side === 'successor' && renamed ? upper(name) : name);
  const object = entries(decl.o, side, { roundTrip }).map((list): Json => ({ object: list }));
  const item = fc.oneof(
    { arbitrary: entries(decl.l, side, { roundTrip }).map((list): Json => ({ object: list })), weight: 4 },
    { arbitrary: primitive, weight: 1 },
  );
  const array = fc.array(item, { maxLength: 3 }).map((list): Json => ({ array: list }));
  return entries(decl.top, side, {
    roundTrip,
    extra: [
      fc.option(
        object.map((value): [string, Json] => [parentKey('o', decl.o.renamed), value]),
        { nil: undefined, freq: 1 },
      ),
      fc.option(
        array.map((value): [string, Json] => [parentKey('l', decl.l.renamed), value]),
        { nil: undefined, freq: 1 },
      ),
    ],
  }).map((list) => ({ object: list }));
}

// ---- the model: the changes applied naively to the ordered tree ----

class ModelCollision extends Error {}

function scaledText(change: Extract<LeafChange, { op: 'scale' }>, value: Json, to: Side): Json {
  if (!('text' in value)) return value;
  const pairs = [...SCALED[change.factor], ROUNDED];
  const pair = pairs.find(([mine, theirs]) => (to === 'successor' ? mine : theirs) === value.text);
  return pair === undefined ? value : text(to === 'successor' ? pair[1] : pair[0]);
}

function mappedText(value: Json, to: Side): Json {
  if (!('text' in value)) return value;
  const from = to === 'successor' ? { '"x"': '"X"', '"y"': '"Y"' } : { '"X"': '"x"', '"Y"': '"y"' };
  return text(from[value.text as keyof typeof from] ?? value.text);
}

interface ModelParent {
  name: string;
  renamed: boolean;
  apply: (value: Json) => Json;
}

function modelLevel(
  { leaves }: Level,
  value: Json,
  to: Side,
  parents: ReadonlyMap<string, ModelParent> = new Map(),
): Json {
  if (!('object' in value)) return value;
  const out: [string, Json][] = [];
  const put = (key: string, item: Json) => {
    if (out.some(([other]) => other === key)) throw new ModelCollision();
    out.push([key, item]);
  };
  for (const [key, item] of value.object) {
    const name = LEAVES.find((leaf) => {
      const change = leaves[leaf];
      return (
        change !== undefined &&
        (to === 'successor'
          ? leaf === key && change.op !== 'add'
          : successorOf(leaf, change) === key && change.op !== 'remove')
      );
    });
    const change = name === undefined ? undefined : leaves[name];
    const parent = parents.get(key);
    if (name !== undefined && change !== undefined) {
      const renamed = to === 'successor' ? successorOf(name, change) : name;
      if (change.op === 'remove' || change.op === 'add') continue;
      if (change.op === 'scale') put(renamed, scaledText(change, item, to));
      else if (change.op === 'map') put(renamed, mappedText(item, to));
      else put(renamed, item);
    } else if (parent !== undefined) {
      put(parent.renamed ? (to === 'successor' ? upper(parent.name) : parent.name) : key, parent.apply(item));
    } else put(key, item);
  }
  for (const name of LEAVES) {
    const change = leaves[name];
    if (to === 'successor' && change?.op === 'add' && change.default !== undefined) {
      if (!out.some(([key]) => key === name)) out.push([name, text(JSON.stringify(change.default))]);
    }
    if (to === 'this' && change?.op === 'remove') put(name, text(JSON.stringify(change.value ?? null)));
  }
  return { object: out };
}

/** The body of `to` that the model makes of a body of the other side. */
function model(decl: Declaration, value: Json, to: Side): Json {
  const nameOf = (name: 'o' | 'l', renamed: boolean) => (to === 'successor' || !renamed ? name : upper(name));
  const objectLevel = (item: Json) => modelLevel(decl.o, item, to);
  const arrayLevel = (item: Json) =>
    'array' in item ? { array: item.array.map((entry) => modelLevel(decl.l, entry, to)) } : item;
  return modelLevel(
    decl.top,
    value,
    to,
    new Map([
      [nameOf('o', decl.o.renamed), { name: 'o', renamed: decl.o.renamed, apply: objectLevel }],
      [nameOf('l', decl.l.renamed), { name: 'l', renamed: decl.l.renamed, apply: arrayLevel }],
    ]),
  );
}

/** The engine's text of a body of the other side; 'collision' or another reason when it refuses. */
function engine(translation: ResourceTranslation, input: string, to: Side): string {
  const read = readJson(input, 64);
  if (read === undefined) throw new Error(`not JSON: ${input}`);
  try {
    return writeJson(to === 'successor' ? translation.forward(read.value) : translation.backward(read.value));
  } catch (error) {
    if (error instanceof TranslationRefusal) return `refused: ${error.reason}`;
    throw error;
  }
}

function modelled(decl: Declaration, input: Json, to: Side): string {
  try {
    return toText(model(decl, input, to));
  } catch (error) {
    if (error instanceof ModelCollision) return 'refused: collision';
    throw error;
  }
}

describe('the translation engine, on generated declarations and bodies', () => {
  it.each<Side>(['successor', 'this'])(
    'translates into %s exactly as the changes say, every other value and key byte for byte in its place',
    (to) => {
      const from: Side = to === 'successor' ? 'this' : 'successor';
      fc.assert(
        fc.property(
          declaration.chain((decl) => fc.tuple(fc.constant(decl), body(decl, from, false))),
          ([decl, input]) => {
            const translation = translationOf(decl);
            expect(engine(translation, toText(input), to)).toBe(modelled(decl, input, to));
          },
        ),
        RUNS,
      );
    },
  );

  it('keeps every field no change removes through forward then backward, and backward then forward', () => {
    fc.assert(
      fc.property(
        declaration.chain((decl) =>
          fc.tuple(fc.constant(decl), body(decl, 'this', true), body(decl, 'successor', true)),
        ),
        ([decl, mine, theirs]) => {
          const translation = translationOf(decl);
          // Removed on the way there (a removed field's value; an added field the way back): left out of both sides.
          const gone = (side: Side) => (change: LeafChange) => change.op === (side === 'this' ? 'remove' : 'add');
          for (const [input, side] of [
            [mine, 'this'],
            [theirs, 'successor'],
          ] as const) {
            const other: Side = side === 'this' ? 'successor' : 'this';
            const there = engine(translation, toText(input), other);
            const back = engine(translation, there, side);
            expect(without(back, decl, gone(side))).toBe(toText(withoutModel(input, decl, gone(side))));
          }
        },
      ),
      RUNS,
    );
  });

  it('never throws on any text, only refuses (depth) or reads it as not JSON', () => {
    const translation = translationOf({
      top: { leaves: { a: { op: 'rename' }, b: { op: 'scale', factor: 100, renamed: true } } },
      o: { leaves: { c: { op: 'remove', value: 1 } }, renamed: true },
      l: { leaves: { d: { op: 'add', default: 'x' } }, renamed: false },
    });
    const texts = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.json({ maxDepth: 6 }),
      fc.nat({ max: 200 }).map((depth) => `{"o":${'['.repeat(depth)}${']'.repeat(depth)}}`),
      free.map(toText),
    );
    fc.assert(
      fc.property(texts, fc.integer({ min: 1, max: 64 }), (input, maxDepth) => {
        for (const apply of [translation.forward, translation.backward]) {
          try {
            const read = readJson(input, maxDepth);
            if (read !== undefined) writeJson(apply(read.value));
          } catch (error) {
            expect(error).toBeInstanceOf(TranslationRefusal);
          }
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('writes every JSON number back as it was written', () => {
    fc.assert(
      fc.property(numberText, (number) => {
        expect(writeJson((readJson(`[${number}]`, 64) as { value: unknown }).value)).toBe(`[${number}]`);
      }),
      { numRuns: 2000 },
    );
  });
});

/** `body` with the leaves `gone` says left out, at every level. */
function withoutModel(value: Json, decl: Declaration, gone: (change: LeafChange) => boolean): Json {
  const strip = ({ leaves }: Level, item: Json): Json => {
    if (!('object' in item)) return item;
    const names = LEAVES.filter((name) => leaves[name] !== undefined && gone(leaves[name]));
    return { object: item.object.filter(([key]) => !(names as string[]).includes(key)) };
  };
  const top = strip(decl.top, value);
  if (!('object' in top)) return top;
  return {
    object: top.object.map(([key, item]): [string, Json] => {
      if (key === 'o' || key === 'O') return [key, strip(decl.o, item)];
      if ((key === 'l' || key === 'L') && 'array' in item)
        return [key, { array: item.array.map((entry) => strip(decl.l, entry)) }];
      return [key, item];
    }),
  };
}

/** The engine's output text with the same leaves left out, read and written as the engine reads and writes. */
function without(output: string, decl: Declaration, gone: (change: LeafChange) => boolean): string {
  const read = readJson(output, 64);
  if (read === undefined) return output;
  const strip = ({ leaves }: Level, item: unknown) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return;
    for (const name of LEAVES)
      if (leaves[name] !== undefined && gone(leaves[name])) delete (item as Record<string, unknown>)[name];
  };
  const top = read.value as Record<string, unknown>;
  strip(decl.top, top);
  for (const key of ['o', 'O']) strip(decl.o, top[key]);
  for (const key of ['l', 'L'])
    if (Array.isArray(top[key])) for (const entry of top[key] as unknown[]) strip(decl.l, entry);
  return writeJson(top);
}
