import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import rootPackage from '../../package.json' with { type: 'json' };
import { repoRoot } from '../../scripts/paths.mjs';

/**
 * Each test helper has one home (docs/testing.md#test-helpers): a package's helpers that other tests may use live in
 * its `test/support/` (the shared kit, `platform/test/support/`, is the platform's); its other test files are its
 * own. A package's tests import nothing from the root `test/`, which serves the suites that span processes. So a
 * package's suite runs, and moves, on its own.
 */

const SHARED_KIT = 'platform/test/support/';
/** The list of external tools `npm test` installs (test/tools), read by the kit's `tools.ts`: a script, not a helper. */
const TOOL_LIST = 'test/tools/tools.mjs';

/** Every test-side module under `dir` (TypeScript and JavaScript), as paths from the repository root. */
function modulesUnder(dir: string): string[] {
  return readdirSync(join(repoRoot, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.(ts|mts|mjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .map((entry) => relative(repoRoot, join(entry.parentPath, entry.name)));
}

/** The repository paths `file` imports by relative specifier (`.js` read as the `.ts` beside it). */
function relativeImports(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(join(repoRoot, file), 'utf8'), true, true);
  return importedFiles
    .map(({ fileName }) => fileName)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => relative(repoRoot, resolve(repoRoot, dirname(file), specifier.replace(/\.js$/, '.ts'))));
}

/** `file → target` for each import of `files` that `allowed` refuses. */
function crossings(files: readonly string[], allowed: (file: string, target: string) => boolean): string[] {
  return files.flatMap((file) =>
    relativeImports(file)
      .filter((target) => !allowed(file, target))
      .map((target) => `${file} → ${target}`),
  );
}

const packages = rootPackage.workspaces;
const packageOf = (path: string): string | undefined => packages.find((dir) => path.startsWith(`${dir}/`));

/** A package's test files other than its `test/support/` are imported only from within the package. */
const mayReach = (file: string, target: string): boolean => {
  const owner = packageOf(target);
  return (
    owner === undefined ||
    owner === packageOf(file) ||
    !target.startsWith(`${owner}/test/`) ||
    target.startsWith(`${owner}/test/support/`)
  );
};

/** ...and a package's test file imports nothing of the root `test/` (the kit reads the tool list). */
const packageTestMayImport = (file: string, target: string): boolean =>
  mayReach(file, target) && (!target.startsWith('test/') || (file.startsWith(SHARED_KIT) && target === TOOL_LIST));

describe('test helpers, one home each', () => {
  it.each(packages)(
    "%s's tests import no root test/ module and no other package's tests but its test/support/",
    (dir) => {
      expect(crossings(modulesUnder(`${dir}/test`), packageTestMayImport)).toEqual([]);
    },
  );

  it("the root suites import a package's tests only from its test/support/", () => {
    expect(crossings(modulesUnder('test'), mayReach)).toEqual([]);
  });

  it('names an import across the line', () => {
    expect(packageTestMayImport('gateway/test/a.test.ts', 'test/support/repo-file.ts')).toBe(false);
    expect(packageTestMayImport('gateway/test/a.test.ts', 'services/users-orders/test/helpers.ts')).toBe(false);
    expect(packageTestMayImport('gateway/test/a.test.ts', 'platform/test/support/eventually.mjs')).toBe(true);
    expect(packageTestMayImport('client/test/a.test.ts', 'gateway/test/support/helpers.ts')).toBe(true);
    expect(packageTestMayImport('gateway/test/a.test.ts', 'gateway/src/app.ts')).toBe(true);
    expect(packageTestMayImport('platform/test/support/tools.ts', TOOL_LIST)).toBe(true);
    expect(mayReach('test/e2e/a.test.ts', 'gateway/test/notices/fixture.ts')).toBe(false);
    expect(mayReach('test/e2e/a.test.ts', 'gateway/test/support/helpers.ts')).toBe(true);
    expect(mayReach('test/e2e/a.test.ts', 'gateway/src/app.ts')).toBe(true);
  });
});
