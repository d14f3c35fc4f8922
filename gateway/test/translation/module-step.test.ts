// The `module` escape hatch: loaded with its policy and checked, run under the engine's limits.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readJson, writeJson } from '../../src/translation/json-text.js';
import { moduleStep, type ChangeModule } from '../../src/translation/module-step.js';
import { loadChangeModules, ModuleProblem, type ChangeModules } from '../../src/translation/modules.js';
import { TranslationRefusal } from '../../src/translation/refusal.js';
import { ORDERS } from '../support/orders-v1.js';

const LIMITS = { maxDepth: 64, maxBytes: 1024 * 1024 };
/** A policy file beside the test modules: the paths its changes name are relative to it. */
const POLICY = fileURLToPath(new URL('./modules/versions.json', import.meta.url));

const versionsNaming = (...modules: string[]) => [
  { version: 1, changes: modules.map((module) => ({ resource: ORDERS, op: 'module' as const, module })) },
];

async function loaded(module: string): Promise<ChangeModule> {
  const modules: ChangeModules = await loadChangeModules(versionsNaming(module), POLICY, LIMITS);
  return modules.get(module) as ChangeModule;
}

async function problemOf(...modules: string[]): Promise<string> {
  try {
    await loadChangeModules(versionsNaming(...modules), POLICY, LIMITS);
  } catch (error) {
    if (error instanceof ModuleProblem) return `${error.path.join('.')}: ${error.message}`;
    throw error;
  }
  return 'loaded';
}

const through = (apply: (body: unknown) => unknown, text: string): string =>
  writeJson(apply((readJson(text, 64) as { value: unknown }).value));

function refusalOf(apply: (body: unknown) => unknown, text: string): string {
  try {
    through(apply, text);
  } catch (error) {
    if (error instanceof TranslationRefusal) return `${error.reason}: ${error.details}`;
    throw error;
  }
  return 'translated';
}

describe('a module change, loaded', () => {
  it('translates both ways, keeping the text of every value it leaves in its place', async () => {
    const step = moduleStep(await loaded('split-name.mjs'), LIMITS);
    const v2 = '{"id":"u-1","first_name":"Ada","last_name":"Lovelace","balance":123456789012345678,"rate":1.50}';
    expect(through(step.backward, v2)).toBe(
      '{"id":"u-1","balance":123456789012345678,"rate":1.50,"name":"Ada Lovelace"}',
    );
    expect(through(step.forward, '{"id":"u-1","name":"Ada Lovelace","n":1e400}')).toBe(
      '{"id":"u-1","n":1e400,"first_name":"Ada","last_name":"Lovelace"}',
    );
    // What it hands back unchanged is the body itself.
    const body = (readJson('{"id":"x","nested":{"a":-0}}', 64) as { value: unknown }).value;
    expect(step.backward(body)).toBe(body);
  });

  it('gives the module a copy it cannot change', async () => {
    let seen: unknown;
    const module: ChangeModule = {
      path: 'inline.mjs',
      forward: (body) => body,
      backward: (body) => {
        seen = body;
        (body as Record<string, unknown>).changed = true;
        return body;
      },
      schema: undefined,
      examples: [],
      sha256: '',
    };
    expect(refusalOf(moduleStep(module, LIMITS).backward, '{"id":"x"}')).toMatch(
      /^module: \$: inline\.mjs failed backward: TypeError: Cannot add property changed, object is not extensible$/,
    );
    expect(Object.isFrozen(seen)).toBe(true);
  });

  it('is refused, never a crash, when it throws, recurses without end or returns what is no JSON body', async () => {
    const throws = moduleStep(await loaded('throws.mjs'), LIMITS);
    expect(refusalOf(throws.backward, '{"explode":true}')).toBe('module: $: throws.mjs failed backward: Error: boom');
    const recurses = moduleStep(await loaded('recurses.mjs'), LIMITS);
    expect(refusalOf(recurses.backward, '{"recurse":true}')).toBe(
      'module: $: recurses.mjs failed backward: RangeError: Maximum call stack size exceeded',
    );
    expect(refusalOf(recurses.backward, '{"cycle":true}')).toBe(
      'depth: recurses.mjs returned a body nested deeper than 64 levels',
    );
    expect(refusalOf(recurses.backward, '{"function":true}')).toBe(
      'module: $: recurses.mjs returned a function, which is no JSON value',
    );
    expect(refusalOf(recurses.backward, '{"huge":true}')).toBe(
      'too_large: $: recurses.mjs returned a body larger than TRANSLATION_MAX_BYTES (1048576 bytes)',
    );
    expect(refusalOf(recurses.backward, '{"infinite":true}')).toBe(
      'not_finite: $: recurses.mjs returned a number that is not finite',
    );
    expect(through(recurses.backward, '{"id":"fine"}')).toBe('{"id":"fine"}');
  });
});

describe('loading a module change', () => {
  it('names the change and what is wrong: no file, no functions, no examples, a lost field, no end', async () => {
    expect(await problemOf('missing.mjs')).toBe(
      'versions.0.changes.0.module: version 1: missing.mjs cannot be read (ENOENT)',
    );
    expect(await problemOf('split-name.mjs', 'no-examples.mjs')).toBe(
      'versions.0.changes.1.module: version 1: no-examples.mjs exports no examples (a non-empty array of bodies of ' +
        'the successor) to check its round trip on',
    );
    expect(await problemOf('loses-a-field.mjs')).toBe(
      'versions.0.changes.0.module: version 1: loses-a-field.mjs does not give back its examples: example 0: ' +
        '$.balance differs after backward then forward',
    );
    expect(await problemOf('loops.mjs')).toBe(
      'versions.0.changes.0.module: version 1: loops.mjs does not give back its examples: example 0: took longer ' +
        'than 1000 ms',
    );
    expect(await problemOf('split-name.mjs', 'throws.mjs')).toBe('loaded');
  });
});
