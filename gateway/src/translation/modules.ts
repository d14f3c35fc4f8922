import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { VersionChange } from './changes.js';
import { roundTripProblem, type ChangeModule, type TranslationLimits } from './module-step.js';

/**
 * Loading the `module` changes of a policy (docs/behaviour.md "Versions declared as changes", the escape hatch), at
 * start and at every reload, before the policy is activated: each file is read, imported (a file whose bytes changed
 * since the last load is imported anew: its URL names its content), checked to export `forward` and `backward`
 * functions and `examples` (bodies of the successor), and its round trip checked on those examples (module-step.ts).
 * A problem names the policy's JSON path (`versions.0.changes.3.module`), as every policy problem does.
 */

/** The loaded modules of a policy, by the path its changes name them with. */
export type ChangeModules = ReadonlyMap<string, ChangeModule>;

/** A module that cannot be used, at the JSON path of the change that names it. */
export class ModuleProblem extends Error {
  constructor(
    readonly path: (string | number)[],
    message: string,
  ) {
    super(message);
    this.name = 'ModuleProblem';
  }
}

interface VersionWithChanges {
  readonly version: number;
  readonly changes?: readonly VersionChange[] | undefined;
}

type Exports = Record<string, unknown>;

async function importModule(file: string, bytes: Buffer): Promise<Exports> {
  const url = pathToFileURL(file);
  // The same bytes are the same module (imported once); other bytes under the same name are another.
  url.searchParams.set('sha256', createHash('sha256').update(bytes).digest('hex'));
  return (await import(url.href)) as Exports;
}

/** What is wrong with a module's exports, or undefined. */
function exportsProblem(exports: Exports): string | undefined {
  for (const name of ['forward', 'backward'] as const) {
    if (typeof exports[name] !== 'function') return `exports no function ${name}(body)`;
  }
  if (exports.schema !== undefined && typeof exports.schema !== 'function')
    return 'exports a schema that is no function';
  const examples = exports.examples;
  if (!Array.isArray(examples) || examples.length === 0)
    return 'exports no examples (a non-empty array of bodies of the successor) to check its round trip on';
  return undefined;
}

/**
 * Every module the policy's changes name, loaded relative to the policy file and checked; throws a ModuleProblem
 * at the first that cannot be used.
 */
export async function loadChangeModules(
  versions: readonly VersionWithChanges[],
  policyPath: string,
  limits: TranslationLimits,
): Promise<ChangeModules> {
  const modules = new Map<string, ChangeModule>();
  for (const [versionIndex, entry] of versions.entries()) {
    for (const [changeIndex, change] of (entry.changes ?? []).entries()) {
      if (change.op !== 'module' || modules.has(change.module)) continue;
      const fail = (message: string): never => {
        throw new ModuleProblem(
          ['versions', versionIndex, 'changes', changeIndex, 'module'],
          `version ${entry.version}: ${change.module} ${message}`,
        );
      };
      const file = resolve(dirname(policyPath), change.module);
      let bytes: Buffer;
      try {
        bytes = readFileSync(file);
      } catch (error) {
        return fail(`cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
      }
      let exports: Exports;
      try {
        exports = await importModule(file, bytes);
      } catch (error) {
        return fail(`cannot be loaded (${error instanceof Error ? `${error.name}: ${error.message}` : String(error)})`);
      }
      const problem = exportsProblem(exports);
      if (problem !== undefined) return fail(problem);
      const examples = exports.examples as unknown[];
      for (const [index, example] of examples.entries()) {
        let text: string | undefined;
        try {
          text = JSON.stringify(example);
        } catch {
          text = undefined;
        }
        if (text === undefined) fail(`exports examples[${index}], which is no JSON value`);
      }
      const module: ChangeModule = {
        path: change.module,
        forward: exports.forward as ChangeModule['forward'],
        backward: exports.backward as ChangeModule['backward'],
        schema: exports.schema as ChangeModule['schema'],
        examples,
        sha256: createHash('sha256').update(bytes).digest('hex'),
      };
      const roundTrip = roundTripProblem(module, examples, limits);
      if (roundTrip !== undefined) fail(`does not give back its examples: ${roundTrip}`);
      modules.set(change.module, module);
    }
  }
  return modules;
}
