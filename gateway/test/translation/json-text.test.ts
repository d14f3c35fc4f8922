import { describe, expect, it } from 'vitest';
import { readJson, writeJson } from '../../src/translation/json-text.js';
import { TranslationRefusal } from '../../src/translation/refusal.js';

const again = (text: string, maxDepth = 64): string =>
  writeJson((readJson(text, maxDepth) as { value: unknown }).value);

function refusalOf(read: () => unknown): TranslationRefusal {
  try {
    read();
  } catch (error) {
    if (error instanceof TranslationRefusal) return error;
    throw error;
  }
  throw new Error('not refused');
}

describe('JSON text read for translation and written again', () => {
  it.each([
    '123456789012345678',
    '-0',
    '1e400',
    '-1e400',
    '1E5',
    '1e-7',
    '0.0000001',
    '1.50',
    '2.0',
    '9007199254740993',
    '0.30000000000000004',
    '1.7976931348623157e308',
  ])('keeps the number %s as it was written', (number) => {
    expect(again(`{"a":${number},"b":[${number}]}`)).toBe(`{"a":${number},"b":[${number}]}`);
  });

  it('leaves a number JavaScript writes back the same on the plain parse', () => {
    const read = readJson('{"a":19.99,"b":-5,"c":0.000001,"d":123456789012345}', 64) as { value: { a: unknown } };
    expect(typeof read.value.a).toBe('number');
    expect(writeJson(read.value)).toBe('{"a":19.99,"b":-5,"c":0.000001,"d":123456789012345}');
  });

  it('keeps integer-like keys where they were, escaped ones and keys starting with NUL included', () => {
    expect(again('{"b":1,"10":2,"2":3,"a":{"1":4,"0":5}}')).toBe('{"b":1,"10":2,"2":3,"a":{"1":4,"0":5}}');
    expect(again('{"z":1,"\\u0031":2}')).toBe('{"z":1,"1":2}');
    expect(again('{"\\u0000":1,"\\u0000\\u0000x":2,"3":["\\u0000v"],"v":"\\u0000"}')).toBe(
      '{"\\u0000":1,"\\u0000\\u0000x":2,"3":["\\u0000v"],"v":"\\u0000"}',
    );
  });

  it('does not take a string inside a value for a key', () => {
    expect(again('["a","1",{"k":"2\\":\\"","3":1}]')).toBe('["a","1",{"k":"2\\":\\"","3":1}]');
  });

  it('refuses nesting deeper than the limit where it passes it, objects and arrays alike', () => {
    expect(refusalOf(() => readJson('{"a":[{"b":[1]}]}', 3)).details).toBe(
      'nested deeper than 3 levels at position 11',
    );
    expect(refusalOf(() => readJson('['.repeat(1_000_000), 64)).reason).toBe('depth');
    expect(again('{"a":[{"b":[1]}]}', 4)).toBe('{"a":[{"b":[1]}]}');
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    expect(again('{"a":"[[[[","b":"\\"[[[","c":"\\\\"}', 1)).toBe('{"a":"[[[[","b":"\\"[[[","c":"\\\\"}');
  });

  it('says a text is not JSON by returning nothing, whatever it holds', () => {
    for (const text of ['', '{"a":', '{"a":"unterminated', '{"1":}', '[1,]', 'NaN', '{"a":01}', '\u{feff}{}'])
      expect(readJson(text, 64)).toBeUndefined();
  });
});
