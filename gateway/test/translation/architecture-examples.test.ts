// docs/architecture.md "The operations, one example each", run through the engine: each example's changes compiled,
// version 2's answer translated back into what the page says version 1 gets, and version 1's body forward into
// version 2's where the change keeps all of it. When the engine or the page moves, this fails.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { compileTranslations, type RouteTranslation } from '../../src/translation/compile.js';
import type { VersionChange } from '../../src/translation/changes.js';
import { readJson, writeJson } from '../../src/translation/json-text.js';
import { loadChangeModules } from '../../src/translation/modules.js';

const HEADING = '### The operations, one example each';
const page = readFileSync(new URL('../../../docs/architecture.md', import.meta.url), 'utf8');
const section = ((): string => {
  const start = page.indexOf(`\n${HEADING}\n`);
  const rest = page.slice(start + HEADING.length + 2);
  return rest.slice(0, rest.search(/^## /m));
})();

interface Example {
  op: string;
  blocks: { lang: string; body: string }[];
}

/** Each example: its operation (the bold label) and its three code blocks. */
const examples: Example[] = section
  .split(/^\*\*`/m)
  .slice(1)
  .map((part) => ({
    op: part.slice(0, part.indexOf('`')),
    blocks: [...part.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map(([, lang, body]) => ({
      lang: lang ?? '',
      body: body ?? '',
    })),
  }));

const ORDERS = '/orders/:id';
/** The module the example names, as the tests keep it. */
const MODULES_POLICY = fileURLToPath(new URL('./modules/versions.json', import.meta.url));

async function routeOf(declared: unknown): Promise<RouteTranslation> {
  const { resources, changes } = Array.isArray(declared)
    ? { resources: [ORDERS], changes: declared as VersionChange[] }
    : (declared as { resources: { path: string; versions: number[] }[]; changes: VersionChange[] });
  const named = changes.map((change) =>
    change.op === 'module' ? { ...change, module: change.module.replace(/^changes\//, '') } : change,
  );
  const modules = await loadChangeModules([{ version: 1, changes: named }], MODULES_POLICY, {
    maxDepth: 64,
    maxBytes: 1024 * 1024,
  });
  const compiled = compileTranslations(
    {
      versions: [{ version: 1, successor: 2, changes: named }, { version: 2 }],
      resources: resources.map((resource) =>
        typeof resource === 'string' ? { path: resource, versions: undefined } : resource,
      ),
    },
    modules,
  );
  const [first] = compiled.versions.get(1)?.routes.values() ?? [];
  return first as RouteTranslation;
}

const through = (apply: ((body: unknown) => unknown) | undefined, text: string): unknown =>
  JSON.parse(writeJson((apply ?? ((body: unknown) => body))((readJson(text, 64) as { value: unknown }).value)));

/** An `http` block: its request line (if any), status, headers (lower case) and body. */
function exchange(block: string): { request?: string; status?: number; headers: Record<string, string>; body: string } {
  const lines = block.split('\n');
  const request = /^[A-Z]+ \//.test(lines[0] ?? '') ? lines.splice(0, 2)[0] : undefined;
  const status = /^HTTP\/1\.1 (\d{3})/.exec(lines[0] ?? '')?.[1];
  const blank = lines.indexOf('');
  const headerLines = lines.slice(1, blank === -1 ? undefined : blank);
  const headers = Object.fromEntries(
    headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 2)]),
  );
  return {
    ...(request === undefined ? {} : { request }),
    ...(status === undefined ? {} : { status: Number(status) }),
    headers,
    body:
      blank === -1
        ? ''
        : lines
            .slice(blank + 1)
            .join('\n')
            .trim(),
  };
}

describe('docs/architecture.md: one example per operation, as the engine translates it', () => {
  it('has an example of each operation, and of "on": "error"', () => {
    expect(examples.map(({ op }) => op)).toEqual([
      'rename',
      'scale',
      'add',
      'remove',
      'map',
      'move',
      'envelope',
      'status',
      'header',
      'path',
      'link',
      '"on": "error"',
      'module',
    ]);
    for (const { op, blocks } of examples) expect(blocks.length, op).toBe(3);
  });

  it.each(examples.map((example) => [example.op, example] as const))('%s', async (_op, { blocks }) => {
    const [declared, successor, own] = blocks as [Example['blocks'][0], Example['blocks'][0], Example['blocks'][0]];
    const route = await routeOf(JSON.parse(declared.body));
    if (successor.lang === 'json' && own.lang === 'json') {
      expect(through(route.answer(200).body, successor.body)).toEqual(JSON.parse(own.body));
      const forward = through(route.requestBody, own.body);
      // An envelope does not keep the successor's other keys.
      const kept = JSON.parse(successor.body) as Record<string, unknown>;
      const expected = 'meta' in kept ? { data: kept.data } : kept;
      expect(isDeepStrictEqual(forward, expected), JSON.stringify(forward)).toBe(true);
      return;
    }
    const theirs = exchange(successor.body);
    const mine = exchange(own.body);
    if (theirs.request !== undefined && mine.request !== undefined) {
      const path = (request: string) => (request.split(' ')[1] as string).replace(/^\/v\d+/, '');
      expect(route.target(path(mine.request))).toBe(path(theirs.request));
      expect(route.location(theirs.headers.location as string)).toBe(mine.headers.location);
      return;
    }
    const plan = route.answer(theirs.status as number);
    expect(plan.status).toBe(mine.status);
    if (theirs.body !== '') expect(through(plan.body, theirs.body)).toEqual(JSON.parse(mine.body));
    const headers: Record<string, string | undefined> = { ...theirs.headers };
    route.answerHeaders?.(headers);
    expect(Object.fromEntries(Object.entries(headers).filter(([, value]) => value !== undefined))).toEqual(
      mine.headers,
    );
  });
});
