import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/paths.mjs';

/**
 * The documentation's links resolve: every relative link of README.md and docs/*.md names a file that
 * exists and, with a #fragment, a heading of that file; every `docs/<page>.md#heading` a code comment
 * points to names a heading too. Headings are what a reader lands on, so renaming one breaks this test
 * until every link to it follows.
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
  if (fragment !== undefined && !anchorsOfFile(file).has(fragment)) return `${target}: no heading #${fragment} in ${relative(repoRoot, file)}`;
  return undefined;
}

const docsDir = join(repoRoot, 'docs');
const markdownFiles = [join(repoRoot, 'README.md'), ...readdirSync(docsDir).filter((name) => name.endsWith('.md')).map((name) => join(docsDir, name))];

/** Source and configuration files, where comments may point into docs/. */
function sourceFiles(): string[] {
  const roots = ['platform', 'gateway', 'services', 'scripts', 'test', 'bench', 'ops'];
  return roots.flatMap((root) =>
    readdirSync(join(repoRoot, root), { recursive: true, encoding: 'utf8' })
      .filter((name) => /\.(ts|mts|mjs|js|yml|yaml)$/.test(name) && !/(^|\/)(node_modules|dist)\//.test(name))
      .map((name) => join(repoRoot, root, name)),
  );
}

describe('documentation links', () => {
  it('finds the headings GitHub makes anchors of', () => {
    expect([...anchorsOf("# A request's path\n```sh\n# not a heading\n```\n## `GET /versions` (public)\n## Notes\n## Notes\n")]).toEqual([
      'a-requests-path',
      'get-versions-public',
      'notes',
      'notes-1',
    ]);
  });

  it.each(markdownFiles.map((file) => [relative(repoRoot, file), file]))('every relative link of %s resolves', (_name, file) => {
    const broken = linksOf(readFileSync(file, 'utf8')).flatMap((target) => brokenLink(file, target) ?? []);
    expect(broken).toEqual([]);
  });

  it('every docs/<page>.md#heading named in a source file resolves', () => {
    const broken: string[] = [];
    let pointers = 0;
    for (const file of sourceFiles()) {
      for (const [target] of readFileSync(file, 'utf8').matchAll(/docs\/[\w-]+\.md#[\w-]+/g)) {
        pointers++;
        const problem = brokenLink(join(repoRoot, 'README.md'), target);
        if (problem !== undefined) broken.push(`${relative(repoRoot, file)}: ${problem}`);
      }
    }
    expect(broken).toEqual([]);
    expect(pointers).toBeGreaterThan(0);
  });
});
