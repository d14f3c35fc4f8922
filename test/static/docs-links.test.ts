import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/paths.mjs';

/**
 * The documentation's links resolve: every relative link of a Markdown file of the repository (README.md,
 * docs/*.md, bench/README.md, a package's README) names a file that exists and, with a #fragment, a heading
 * of that file. Source and configuration files point into the docs the same way, and those pointers resolve
 * too: `docs/<page>.md#heading`, `bench/README.md#heading`, and a section named by its title in quotes
 * (`docs/architecture.md "Adding a version 3"`, `README "Configuration"`). Headings are what a reader lands
 * on, so renaming one breaks this test until every link to it follows.
 */

/** GitHub's heading anchor: lower case, punctuation dropped, each space a hyphen; repeats get -1, -2, … */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading?.[1] === undefined) continue;
    const base = heading[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

const anchorCache = new Map<string, Set<string>>();
function anchorsOfFile(path: string): Set<string> {
  let anchors = anchorCache.get(path);
  if (anchors === undefined) {
    anchors = anchorsOf(readFileSync(path, 'utf8'));
    anchorCache.set(path, anchors);
  }
  return anchors;
}

/** Markdown links outside code, as written: `[text](target)` and `![alt](target)`. */
function linksOf(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```$/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1] as string);
}

/** Why `target`, linked from `fromFile`, does not resolve; undefined when it does. */
function brokenLink(fromFile: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined;
  const [path = '', fragment] = target.split('#', 2);
  const file = path === '' ? fromFile : join(dirname(fromFile), path);
  if (!existsSync(file)) return `${target}: no file ${relative(repoRoot, file)}`;
  if (fragment !== undefined && !anchorsOfFile(file).has(fragment))
    return `${target}: no heading #${fragment} in ${relative(repoRoot, file)}`;
  return undefined;
}

/** Never walked: installed packages, build output, git's own files. */
const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.git']);

/** Every file under the repository root that `keep` accepts, by its path relative to the root. */
function repositoryFiles(keep: (path: string) => boolean): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(repoRoot, dir), { withFileTypes: true })) {
      const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) walk(path);
      } else if (keep(path)) found.push(path);
    }
  };
  walk('');
  return found.sort();
}

const markdownFiles = repositoryFiles((path) => path.endsWith('.md')).map((path) => join(repoRoot, path));

/** This file names broken pointers on purpose, to see them reported. */
const thisFile = relative(repoRoot, fileURLToPath(import.meta.url));

/**
 * Source and configuration files, where comments may point into the docs: code, YAML, JSON, HAProxy, shell, Dockerfile,
 * CI.
 */
function sourceFiles(): string[] {
  return repositoryFiles(
    (path) =>
      (/\.(ts|mts|cts|js|mjs|cjs|yml|yaml|json|jsonc|cfg|sh)$/.test(path) ||
        /(^|\/)Dockerfile$/.test(path) ||
        path === '.ci/run') &&
      path !== 'package-lock.json' &&
      path !== thisFile,
  ).map((path) => join(repoRoot, path));
}

/** A documentation page as code comments name it, relative to the repository root ("README" is README.md). */
const PAGE = String.raw`(?:docs/[\w-]+\.md|bench/README\.md|README(?:\.md)?)`;
/** `docs/behaviour.md#server-limits`, `bench/README.md#soak`, `README.md#…`. */
const ANCHOR_POINTER = new RegExp(String.raw`(?<![\w/.-])(${PAGE})#([\w-]+)`, 'g');
/**
 * `docs/architecture.md "Adding a version 3"`, `README "Configuration"`, `bench/README.md, "Users in PostgreSQL"`
 * (quotes may be JSON-escaped).
 */
const TITLE_POINTER = new RegExp(String.raw`(?<![\w/.-])(${PAGE})(?:'s)?,? \\?"([^"\\\n]+)\\?"`, 'g');

/** The repository path of a page as named in a comment. */
function pagePath(page: string): string {
  return join(repoRoot, page === 'README' ? 'README.md' : page);
}

/** Every pointer into the documentation in `text`, each with why it does not resolve (undefined when it does). */
function pointersOf(text: string): { pointer: string; problem: string | undefined }[] {
  const anchored = [...text.matchAll(ANCHOR_POINTER)].map(([pointer, page = '', fragment = '']) => ({
    pointer,
    problem: brokenLink(join(repoRoot, 'README.md'), `${relative(repoRoot, pagePath(page))}#${fragment}`),
  }));
  const titled = [...text.matchAll(TITLE_POINTER)].map(([pointer, page = '', title = '']) => {
    const file = pagePath(page);
    if (!existsSync(file)) return { pointer, problem: `${pointer}: no file ${relative(repoRoot, file)}` };
    const anchor = [...anchorsOf(`# ${title}`)][0] ?? '';
    return {
      pointer,
      problem: anchorsOfFile(file).has(anchor)
        ? undefined
        : `${pointer}: no heading "${title}" in ${relative(repoRoot, file)}`,
    };
  });
  return [...anchored, ...titled];
}

describe('documentation links', () => {
  it('finds the headings GitHub makes anchors of', () => {
    expect([
      ...anchorsOf(
        "# A request's path\n```sh\n# not a heading\n```\n## `GET /versions` (public)\n## Notes\n## Notes\n",
      ),
    ]).toEqual(['a-requests-path', 'get-versions-public', 'notes', 'notes-1']);
  });

  it.each(markdownFiles.map((file) => [relative(repoRoot, file), file]))(
    'every relative link of %s resolves',
    (_name, file) => {
      const broken = linksOf(readFileSync(file, 'utf8')).flatMap((target) => brokenLink(file, target) ?? []);
      expect(broken).toEqual([]);
    },
  );

  it('finds the pointers code comments use, and says which do not resolve', () => {
    const found = pointersOf(
      [
        '// (docs/behaviour.md#server-limits) and docs/behaviour.md#no-such-heading',
        '// docs/architecture.md "Adding a version 3", README "No such section", docs/nowhere.md#x',
        '"description": "… (docs/behaviour.md \\"Server limits\\")."',
        '// (bench/README.md, "Soak") and not src/plugins/README.md "X" nor README.md.bak "Y"',
      ].join('\n'),
    );
    expect(found).toEqual([
      { pointer: 'docs/behaviour.md#server-limits', problem: undefined },
      {
        pointer: 'docs/behaviour.md#no-such-heading',
        problem: 'docs/behaviour.md#no-such-heading: no heading #no-such-heading in docs/behaviour.md',
      },
      { pointer: 'docs/nowhere.md#x', problem: 'docs/nowhere.md#x: no file docs/nowhere.md' },
      { pointer: 'docs/architecture.md "Adding a version 3"', problem: undefined },
      {
        pointer: 'README "No such section"',
        problem: 'README "No such section": no heading "No such section" in README.md',
      },
      { pointer: 'docs/behaviour.md \\"Server limits\\"', problem: undefined },
      { pointer: 'bench/README.md, "Soak"', problem: undefined },
    ]);
  });

  it('checks every Markdown file of the repository, docs/ and bench/README.md included', () => {
    const checked = markdownFiles.map((file) => relative(repoRoot, file));
    const docsPages = readdirSync(join(repoRoot, 'docs')).filter((name) => name.endsWith('.md'));
    expect(checked).toEqual(
      expect.arrayContaining(['README.md', 'bench/README.md', ...docsPages.map((name) => `docs/${name}`)]),
    );
  });

  it('every pointer into the documentation named in a source or configuration file resolves', () => {
    const broken: string[] = [];
    let pointers = 0;
    for (const file of sourceFiles()) {
      for (const { problem } of pointersOf(readFileSync(file, 'utf8'))) {
        pointers++;
        if (problem !== undefined) broken.push(`${relative(repoRoot, file)}: ${problem}`);
      }
    }
    expect(broken).toEqual([]);
    expect(pointers).toBeGreaterThan(0);
  });
});
