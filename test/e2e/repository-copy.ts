/**
 * What the scripted checks of the "Adding …" sections of docs/architecture.md share: the section's code blocks, and
 * a copy of the repository to apply them to, build and run.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, symlinkSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { repoRoot } from '../../scripts/paths.mjs';

export interface CodeBlock {
  lang: string;
  body: string;
}

/** The `ts` and `json` fenced blocks of the docs/architecture.md section under `heading` ("## …"), in order. */
export function sectionCodeBlocks(heading: string): CodeBlock[] {
  const doc = readFileSync(join(repoRoot, 'docs/architecture.md'), 'utf8');
  const start = doc.indexOf(`\n${heading}\n`);
  expect(start, `docs/architecture.md has a "${heading}" section`).toBeGreaterThan(-1);
  const rest = doc.slice(start + heading.length + 2);
  const end = rest.search(/^## /m);
  const section = end === -1 ? rest : rest.slice(0, end);
  return [...section.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)]
    .map(([, lang, body]) => ({ lang: lang ?? '', body: body ?? '' }))
    .filter(({ lang }) => lang === 'ts' || lang === 'json');
}

/** The packages of the two processes: what the sections edit and the build compiles. */
const PROCESS_PACKAGES = ['gateway', 'services/users-orders'];

/**
 * What the build and the two processes read, plus `extra` files and folders (tests to run in the copy).
 * node_modules is linked, not copied; its @version-router/platform links to this repository's platform/,
 * which the sections do not touch, and platform/ and client/ are linked too so `tsc -b` finds those projects
 * built. Each process package's dist/ is copied only as tsc's incremental state, so the build recompiles
 * what the edits changed instead of everything. Its build info is dated back: file times are coarse, and an edit within the same tick as
 * the copy would look older to `tsc -b`, which would then skip the build (it compares times first, then the
 * recorded file hashes). With `keepTimes`, every file keeps its time instead: the copy's build compiles what the
 * repository's would, plus what is edited after the copy (test/e2e/npm-start-progress.test.ts).
 */
export function copyRepository(
  prefix: string,
  extra: readonly string[] = [],
  { keepTimes = false }: { keepTimes?: boolean } = {},
): string {
  const copy = mkdtempSync(join(tmpdir(), prefix));
  const packageFiles = PROCESS_PACKAGES.flatMap((dir) =>
    ['package.json', 'tsconfig.build.json', 'src'].map((file) => join(dir, file)),
  );
  const paths = [
    'package.json',
    'tsconfig.json',
    'tsconfig.build.json',
    ...packageFiles,
    'services/users-orders/tools',
    'ops',
    'openapi',
    'scripts',
    ...extra,
  ];
  for (const path of paths)
    cpSync(join(repoRoot, path), join(copy, path), { recursive: true, preserveTimestamps: keepTimes });
  for (const dir of PROCESS_PACKAGES) {
    const buildInfo = join(dir, 'dist/.tsbuildinfo');
    if (!existsSync(join(repoRoot, buildInfo))) continue;
    cpSync(join(repoRoot, dir, 'dist'), join(copy, dir, 'dist'), { recursive: true, preserveTimestamps: keepTimes });
    if (!keepTimes) utimesSync(join(copy, buildInfo), 0, 0);
  }
  symlinkSync(join(repoRoot, 'node_modules'), join(copy, 'node_modules'), 'dir');
  symlinkSync(join(repoRoot, 'platform'), join(copy, 'platform'), 'dir');
  symlinkSync(join(repoRoot, 'client'), join(copy, 'client'), 'dir');
  return copy;
}
