import { describe, expect, it } from 'vitest';
import type { VersionChange } from '../../src/translation/changes.js';
import { compileTranslations, type RouteTranslation } from '../../src/translation/compile.js';
import { readJson, writeJson } from '../../src/translation/json-text.js';
import { TranslationRefusal } from '../../src/translation/refusal.js';
import { ORDERS as ORDER, routeOf } from '../support/orders-v1.js';

type Apply = (body: unknown) => unknown;
const same: Apply = (body) => body;

/** A route's request bodies forward and its 2xx answers backward. */
const bodiesOf = (route: RouteTranslation | undefined): { forward: Apply; backward: Apply } => ({
  forward: route?.requestBody ?? same,
  backward: route?.answer(200).body ?? same,
});

/** SPEC's version 1 of an order, declared as changes to version 2. */
const SPEC_V1: VersionChange[] = [
  { resource: ORDER, op: 'rename', field: 'user_id', to: 'customer_id' },
  { resource: ORDER, op: 'scale', field: 'total', to: 'total_cents', factor: 100 },
  { resource: ORDER, op: 'add', field: 'currency', default: 'EUR' },
];

/** The bodies of `resource` for v1 served by v2 under `changes`. */
const translationOf = (changes: VersionChange[], resource = ORDER) => bodiesOf(routeOf(changes, resource));

/** `body` as `apply` translates it; `body` itself is left as it was. */
function through(apply: (body: unknown) => unknown, body: unknown): unknown {
  const before = JSON.stringify(body);
  const translated = apply(body);
  expect(JSON.stringify(body)).toBe(before);
  return translated;
}

describe('translation engine', () => {
  it("turns SPEC's v2 order into v1 in the same field order, and a v1 body into v2", () => {
    const { forward, backward } = translationOf(SPEC_V1);
    const v2 = { id: 'ord-1001', customer_id: 'user-1', total_cents: 1999, currency: 'EUR' };
    expect(JSON.stringify(through(backward, v2))).toBe('{"id":"ord-1001","user_id":"user-1","total":19.99}');
    expect(JSON.stringify(through(forward, { id: 'ord-1001', user_id: 'user-1', total: 19.99 }))).toBe(
      '{"id":"ord-1001","customer_id":"user-1","total_cents":1999,"currency":"EUR"}',
    );
  });

  it('scales into an integer rounding half away from zero, and back by dividing', () => {
    const { forward, backward } = translationOf([{ resource: ORDER, op: 'scale', field: 'total', factor: 100 }]);
    expect(through(forward, { total: 19.99 })).toEqual({ total: 1999 });
    expect(through(forward, { total: 10.005 })).toEqual({ total: 1001 });
    expect(through(forward, { total: -0.125 })).toEqual({ total: -13 });
    expect(through(backward, { total: 1 })).toEqual({ total: 0.01 });
    expect(through(backward, { total: -1999 })).toEqual({ total: -19.99 });
  });

  it('scales by a fraction without rounding', () => {
    const { forward, backward } = translationOf([
      { resource: ORDER, op: 'scale', field: 'grams', to: 'kilograms', factor: 0.001 },
    ]);
    expect(through(forward, { grams: 1234 })).toEqual({ kilograms: 1.234 });
    expect(through(backward, { kilograms: 0.3 })).toEqual({ grams: 300 });
  });

  it('leaves a value of the wrong type, a missing field and a non-object body as they are', () => {
    const { forward, backward } = translationOf(SPEC_V1);
    expect(through(forward, { user_id: 7, total: '19.99', currency: 'USD' })).toEqual({
      customer_id: 7,
      total_cents: '19.99',
      currency: 'USD',
    });
    expect(through(forward, {})).toEqual({ currency: 'EUR' });
    for (const body of [null, 3, 'text', [1, 2], [{ user_id: 'u' }]]) expect(through(backward, body)).toEqual(body);
  });

  it(
    'removes an added field from responses, and fills it only where a request lacks it and a default is ' + 'declared',
    () => {
      const { forward, backward } = translationOf([
        { resource: ORDER, op: 'add', field: 'currency', default: { code: 'EUR' } },
        { resource: ORDER, op: 'add', field: 'note' },
      ]);
      expect(through(backward, { id: 'a', currency: 'EUR', note: 'n' })).toEqual({ id: 'a' });
      const filled = through(forward, { id: 'a' }) as { currency: { code: string } };
      expect(filled).toEqual({ id: 'a', currency: { code: 'EUR' } });
      // Shared by every body, so frozen: nobody can change the declaration through one body.
      expect(() => (filled.currency.code = 'changed')).toThrow(TypeError);
      expect(through(forward, { id: 'b' })).toEqual({ id: 'b', currency: { code: 'EUR' } });
    },
  );

  it('puts a removed field back into responses (null without a value) and drops it from requests', () => {
    const { forward, backward } = translationOf([
      { resource: ORDER, op: 'remove', field: 'legacy', value: false },
      { resource: ORDER, op: 'remove', field: 'fax' },
    ]);
    expect(JSON.stringify(through(backward, { id: 'a' }))).toBe('{"id":"a","legacy":false,"fax":null}');
    expect(through(forward, { id: 'a', legacy: true, fax: '1' })).toEqual({ id: 'a' });
  });

  it('maps enum values and back, by type, leaving values it does not know', () => {
    const { forward, backward } = translationOf([
      { resource: ORDER, op: 'map', field: 'status', values: { active: 'enabled', inactive: 'disabled', '1': 1 } },
    ]);
    expect(through(forward, { status: 'active' })).toEqual({ status: 'enabled' });
    expect(through(forward, { status: 'paused' })).toEqual({ status: 'paused' });
    expect(through(backward, { status: 'disabled' })).toEqual({ status: 'inactive' });
    expect(through(backward, { status: 1 })).toEqual({ status: '1' });
    expect(through(backward, { status: '1' })).toEqual({ status: '1' });
  });

  it('changes every item of nested arrays, and leaves a missing array or a non-object item alone', () => {
    const { forward, backward } = translationOf([
      { resource: ORDER, op: 'rename', field: 'lines[].parts[].sku', to: 'lines[].parts[].article' },
      { resource: ORDER, op: 'map', field: 'lines[].tags[]', values: { hot: 'urgent' } },
      { resource: ORDER, op: 'rename', field: 'lines', to: 'items' },
    ]);
    const v1 = {
      lines: [{ parts: [{ sku: 'a' }, 'x', null, { sku: 'b' }], tags: ['hot', 'cold', 3] }, 7, { parts: 'none' }],
    };
    const v2 = {
      items: [
        { parts: [{ article: 'a' }, 'x', null, { article: 'b' }], tags: ['urgent', 'cold', 3] },
        7,
        { parts: 'none' },
      ],
    };
    expect(through(forward, v1)).toEqual(v2);
    expect(through(backward, v2)).toEqual(v1);
    expect(through(backward, { id: 'no lines' })).toEqual({ id: 'no lines' });
    expect(through(backward, { items: 'not an array' })).toEqual({ lines: 'not an array' });
  });

  it("maps a field's values under its old name when the field is also renamed", () => {
    const { forward, backward } = translationOf([
      { resource: ORDER, op: 'rename', field: 'status', to: 'state' },
      { resource: ORDER, op: 'map', field: 'status', values: { active: 'enabled' } },
    ]);
    expect(through(forward, { status: 'active' })).toEqual({ state: 'enabled' });
    expect(through(backward, { state: 'enabled' })).toEqual({ status: 'active' });
  });

  it('goes through a chain: requests v1 → v2 → v3 oldest first, responses v3 → v2 → v1 newest first', () => {
    const translations = compileTranslations({
      versions: [
        { version: 1, successor: 2, changes: [{ resource: ORDER, op: 'rename', field: 'user_id', to: 'customer_id' }] },
        {
          version: 2,
          successor: 3,
          changes: [
            { resource: ORDER, op: 'rename', field: 'customer_id', to: 'buyer' },
            { resource: ORDER, op: 'add', field: 'channel', default: 'web' },
          ],
        },
        { version: 3 },
      ],
      resources: [
        { path: ORDER, versions: undefined },
        { path: '/openapi.json', versions: undefined },
      ],
    });
    expect([...translations.versions.keys()]).toEqual([1, 2]);
    const v1 = translations.versions.get(1);
    expect(v1?.served).toBe(3);
    expect(translations.versions.get(2)?.served).toBe(3);
    const { forward, backward } = bodiesOf(v1?.routes.get(ORDER));
    expect(through(forward, { user_id: 'u' })).toEqual({ buyer: 'u', channel: 'web' });
    expect(through(backward, { buyer: 'u', channel: 'web' })).toEqual({ user_id: 'u' });
    // A resource without changes of its own is only forwarded.
    const document = v1?.routes.get('/openapi.json');
    expect([document?.requestBody, document?.answer(200).body, document?.served]).toEqual([undefined, undefined, 3]);
  });

  it('keeps a body key named __proto__ as data when moving keys', () => {
    const { backward } = translationOf([{ resource: ORDER, op: 'rename', field: 'a', to: 'b' }]);
    const body = JSON.parse('{"b":1,"__proto__":{"polluted":true},"c":2}') as Record<string, unknown>;
    expect(JSON.stringify(backward(body))).toBe('{"a":1,"__proto__":{"polluted":true},"c":2}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('applies the renames of one step at once: two fields may swap their names', () => {
    const { forward, backward } = translationOf([
      { resource: ORDER, op: 'rename', field: 'a', to: 'b' },
      { resource: ORDER, op: 'rename', field: 'b', to: 'a' },
    ]);
    expect(JSON.stringify(through(forward, { a: 1, b: 2, c: 3 }))).toBe('{"b":1,"a":2,"c":3}');
    expect(JSON.stringify(through(backward, { b: 1, a: 2, c: 3 }))).toBe('{"a":1,"b":2,"c":3}');
  });

  it('returns the very body when no change applies, and shares what it leaves unchanged', () => {
    const { backward } = translationOf(SPEC_V1);
    const untouched = { id: 'x', nested: { customer_id: 'not this one' } };
    expect(backward(untouched)).toBe(untouched);
    const body = { customer_id: 'u', nested: { deep: true }, lines: [1, 2] };
    const translated = backward(body) as typeof body;
    expect(translated).not.toBe(body);
    expect(translated.nested).toBe(body.nested);
    expect(translated.lines).toBe(body.lines);
  });

  it('keeps the text of a number it does not change, and scales one kept as text by its value', () => {
    const { backward } = translationOf(SPEC_V1);
    const read = readJson('{"id":123456789012345678,"customer_id":-0,"total_cents":1E3,"x":1e400}', 64);
    expect(writeJson(backward(read?.value))).toBe('{"id":123456789012345678,"user_id":-0,"total":10,"x":1e400}');
  });
});

describe('what the translation engine refuses', () => {
  const nested: VersionChange[] = [
    { resource: ORDER, op: 'scale', field: 'lines[].price', to: 'lines[].price_cents', factor: 100 },
    { resource: ORDER, op: 'rename', field: 'lines[].sku', to: 'lines[].article' },
    { resource: ORDER, op: 'remove', field: 'lines[].gift', value: false },
    { resource: ORDER, op: 'rename', field: 'lines', to: 'items' },
  ];

  function refusalOf(apply: (body: unknown) => unknown, text: string): { reason: string; details: string } {
    try {
      apply(readJson(text, 64)?.value);
    } catch (error) {
      if (error instanceof TranslationRefusal) return { reason: error.reason, details: error.details };
      throw error;
    }
    throw new Error(`${text} was translated`);
  }

  it('a scaled value that is no finite number, naming where it is', () => {
    const { forward, backward } = translationOf(nested);
    expect(refusalOf(forward, '{"lines":[{"price":1},{"price":1e307}]}')).toEqual({
      reason: 'not_finite',
      details: '$.lines[1].price: not a finite number when multiplied by 100',
    });
    expect(refusalOf(backward, '{"items":[{"price_cents":1e400}]}')).toEqual({
      reason: 'not_finite',
      details: '$.items[0].price_cents: not a finite number when divided by 100',
    });
  });

  it('two fields that would have one name, whichever comes first', () => {
    const { forward, backward } = translationOf(nested);
    expect(refusalOf(forward, '{"lines":[{"article":"a","sku":"b"}]}')).toEqual({
      reason: 'collision',
      details: '$.lines[0]: "sku" becomes "article", which the body already has',
    });
    expect(refusalOf(backward, '{"items":[],"lines":[]}')).toEqual({
      reason: 'collision',
      details: '$: "items" becomes "lines", which the body already has',
    });
    expect(refusalOf(backward, '{"items":[{"gift":true}]}')).toEqual({
      reason: 'collision',
      details: '$.items[0]: "gift" is already in the body, where a removed field is put back',
    });
  });
});
