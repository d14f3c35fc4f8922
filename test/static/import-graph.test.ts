import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/paths.mjs';

/**
 * The code's import graph stays a layering (docs/architecture.md#where-each-concern-lives): no module
 * imports itself back through others, and in the gateway no capability folder imports from a folder that
 * depends on it, so each folder can be read, tested and changed from the bottom up.
 */

/** Every TypeScript source file under `dir`, as paths relative to the repository root. */
function sourceFiles(dir: string): string[] {
  return readdirSync(join(repoRoot, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => relative(repoRoot, join(entry.parentPath, entry.name)));
}

/** file → the files of the same tree it imports (relative specifiers only: packages are other trees). */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(join(repoRoot, file), 'utf8'), true, false);
    const targets = importedFiles
      .map(({ fileName }) => fileName)
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => relative(repoRoot, resolve(repoRoot, dirname(file), specifier.replace(/\.js$/, '.ts'))))
      .filter((target) => known.has(target));
    graph.set(file, targets);
  }
  return graph;
}

/** The strongly connected components with more than one node (or a node importing itself): Tarjan's algorithm. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node) as number, low.get(target) as number));
      } else if (onStack.has(target)) low.set(node, Math.min(low.get(node) as number, index.get(target) as number));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** The graph between the folders directly under `root` (a file directly in `root` stands for itself). */
function folderGraph(graph: ReadonlyMap<string, readonly string[]>, root: string): Map<string, string[]> {
  const folderOf = (file: string): string => relative(root, file).split('/')[0] as string;
  const folders = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    const edges = folders.get(from) ?? new Set<string>();
    for (const target of targets) if (folderOf(target) !== from) edges.add(folderOf(target));
    folders.set(from, edges);
  }
  return new Map([...folders].map(([folder, edges]) => [folder, [...edges]]));
}

const trees = ['platform/src', 'services/users-orders/src', 'gateway/src'];

describe('the import graph', () => {
  it.each(trees)('%s has no import cycle between modules', (tree) => {
    expect(cycles(importGraph(sourceFiles(tree)))).toEqual([]);
  });

  it("the gateway's folders form no cycle: none imports from a folder that depends on it", () => {
    expect(cycles(folderGraph(importGraph(sourceFiles('gateway/src')), 'gateway/src'))).toEqual([]);
  });

  it('finds a cycle where there is one, between modules and between folders', () => {
    const graph = new Map([
      ['t/a/one.ts', ['t/b/two.ts']],
      ['t/b/two.ts', ['t/b/three.ts']],
      ['t/b/three.ts', ['t/a/four.ts']],
      ['t/a/four.ts', []],
    ]);
    expect(cycles(graph)).toEqual([]);
    expect(cycles(folderGraph(graph, 't'))).toEqual([['a', 'b']]);
    graph.set('t/a/four.ts', ['t/a/one.ts']);
    expect(cycles(graph)).toEqual([['t/a/four.ts', 't/a/one.ts', 't/b/three.ts', 't/b/two.ts']]);
  });
});
