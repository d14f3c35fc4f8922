/**
 * The "Adding a resource" and "Adding a version 3" sections of docs/architecture.md as edits of a copy of the
 * repository (test/e2e/repository-copy.ts): each applies the section's code blocks where its prose says, so the
 * tests that follow them (adding-a-resource, adding-version-3, both-recipes) check the section as written. A block
 * the copy already holds stays as it is: once a section has been followed in the repository itself, applying it
 * again changes nothing.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isDeepStrictEqual, promisify } from 'node:util';
import { expect } from 'vitest';
import { readRepoFile } from '../support/repo-file.js';
import { sectionCodeBlocks } from './repository-copy.js';

const run = promisify(execFile);

/** `npm run openapi:update` in the copy: what it printed (it exits 1 on a breaking difference). */
export const openapiUpdate = async (cwd: string): Promise<string> =>
  (await run('npm', ['run', '--silent', 'openapi:update'], { cwd, encoding: 'utf8' })).stdout;

/** `npm run k8s:sync` in the copy: what it printed. */
export const kubernetesSync = async (cwd: string): Promise<string> =>
  (await run('npm', ['run', '--silent', 'k8s:sync'], { cwd, encoding: 'utf8' })).stdout;

const POLICY = 'ops/versions.json';

interface PolicyFile {
  resources?: string[];
  versions: { version: number; changes?: unknown[] }[];
}

const readPolicy = (copy: string) => JSON.parse(readFileSync(join(copy, POLICY), 'utf8')) as PolicyFile;
const writePolicy = (copy: string, policy: PolicyFile) =>
  writeFileSync(join(copy, POLICY), `${JSON.stringify(policy, null, 2)}\n`);

function writeFile(copy: string, path: string, text: string): void {
  mkdirSync(dirname(join(copy, path)), { recursive: true });
  writeFileSync(join(copy, path), text);
}

/** The files "Adding a resource" writes or edits. */
export const RESOURCE_FILES = {
  routes: 'services/users-orders/src/invoices/routes.ts',
  app: 'services/users-orders/src/app.ts',
  seed: 'ops/seed/invoices.json',
  test: 'services/users-orders/test/invoices/routes.test.ts',
} as const;

/** The registration goes below this one: after the contract plugin, with the other routes. */
const ORDER_ROUTES_REGISTRATION = 'await app.register(orderRoutes';

interface ResourceBlocks {
  routes: string;
  importLine: string;
  registration: string;
  seed: string;
  template: string;
  v1Changes: string;
  test: string;
}

/**
 * "Adding a resource"'s code blocks, in order: the routes file, the import, the registration, the seed file, the
 * template added to `resources`, version 1's changes of the resource, the new test.
 */
function resourceBlocks(): ResourceBlocks {
  const code = sectionCodeBlocks('## Adding a resource');
  expect(
    code.map(({ lang }) => lang),
    'the section shows the routes file, the import, the registration, the seed file, the template, version ' +
      "1's changes and the test",
  ).toEqual(['ts', 'ts', 'ts', 'json', 'json', 'json', 'ts']);
  const [routes, importLine, registration, seed, template, v1Changes, test] = code.map(({ body }) => body) as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  return { routes, importLine, registration, seed, template, v1Changes, test };
}

/**
 * Steps 1 to 4 and the test of step 8: the new files as the blocks give them; the import after app.ts's last
 * import and the registration below the order routes'; the template appended to the policy's `resources` and
 * version 1's changes of the resource appended to its changes.
 */
export function addResource(copy: string, blocks: ResourceBlocks = resourceBlocks()): void {
  writeFile(copy, RESOURCE_FILES.routes, blocks.routes);
  writeFile(copy, RESOURCE_FILES.seed, blocks.seed);
  writeFile(copy, RESOURCE_FILES.test, blocks.test);

  const appFile = join(copy, RESOURCE_FILES.app);
  const lines = readFileSync(appFile, 'utf8').split('\n');
  const has = (block: string) => lines.some((line) => line === block.trimEnd());
  if (!has(blocks.importLine))
    lines.splice(lines.findLastIndex((line) => line.startsWith('import ')) + 1, 0, blocks.importLine.trimEnd());
  if (!has(blocks.registration)) {
    const orderRoutes = lines.findIndex((line) => line.includes(ORDER_ROUTES_REGISTRATION));
    expect(orderRoutes, `${RESOURCE_FILES.app} registers the order routes`).toBeGreaterThan(-1);
    lines.splice(orderRoutes + 1, 0, blocks.registration.trimEnd());
  }
  writeFileSync(appFile, lines.join('\n'));

  const policy = readPolicy(copy);
  expect(policy.resources, `${POLICY} lists its resources, for the step to append to`).toBeInstanceOf(Array);
  const template = JSON.parse(blocks.template) as string;
  const resources = policy.resources ?? [];
  if (!resources.includes(template)) policy.resources = [...resources, template];
  const added = JSON.parse(blocks.v1Changes) as unknown[];
  policy.versions = policy.versions.map((entry) => {
    if (entry.version !== 1) return entry;
    const changes = entry.changes ?? [];
    const missing = added.filter((change) => !changes.some((listed) => isDeepStrictEqual(listed, change)));
    return { ...entry, changes: [...changes, ...missing] };
  });
  writePolicy(copy, policy);
}

/**
 * The tests docs/testing.md lists for a new resource ("Which tests to run for a change"), `<resource>` as
 * `resource`: what the recipe says to run, and what its test runs in the copy.
 */
export function newResourceTests(resource: string): string[] {
  const row = readRepoFile('docs/testing.md')
    .split('\n')
    .find((line) => line.startsWith('| a new resource '));
  expect(row, 'docs/testing.md lists the tests of a new resource').toBeDefined();
  const command = /`npx vitest run ([^`]+)`/.exec(row ?? '');
  expect(command, 'the row names one `npx vitest run` command').not.toBeNull();
  return (command?.[1] ?? '').split(' ').map((path) => path.replace('<resource>', resource));
}

const PRESENTERS = 'services/users-orders/src/orders/presenters.ts';
/** Where "Adding a version 3" puts the schema (below `orderV2Schema`) and the presenter (last of orderPresenters). */
const PREVIOUS_SCHEMA = '/** Order, version 2 representation';
const PREVIOUS_SCHEMA_DECLARATION = 'export const orderV2Schema';
const PRESENTERS_MAP = 'export const orderPresenters';

interface Version3Blocks {
  schema: string;
  presenter: string;
  v2Entry: string;
  v3Entry: string;
}

/** "Adding a version 3"'s code blocks: two `ts` (schema, presenter entry), two `json` (v2's new entry, v3's). */
export function version3Blocks(): Version3Blocks {
  const code = sectionCodeBlocks('## Adding a version 3');
  expect(
    code.map(({ lang }) => lang),
    'the section shows the schema, the presenter entry and the two policy entries',
  ).toEqual(['ts', 'ts', 'json', 'json']);
  const [schema, presenter, v2Entry, v3Entry] = code.map(({ body }) => body) as [string, string, string, string];
  return { schema, presenter, v2Entry, v3Entry };
}

/**
 * Steps 1 and 2: the schema after the statement that declares orderV2Schema, the presenter before the `]);` that
 * closes orderPresenters; version 2's policy entry replaced by its declaration as changes to 3, version 3's
 * appended.
 */
function addVersion3(copy: string, blocks: Version3Blocks = version3Blocks()): void {
  const file = join(copy, PRESENTERS);
  let text = readFileSync(file, 'utf8');
  if (!text.includes(blocks.schema)) {
    const previous = text.indexOf(PREVIOUS_SCHEMA_DECLARATION);
    const previousEnd = text.indexOf(';\n', previous);
    expect(previous > -1 && previousEnd > -1, `${PRESENTERS} declares orderV2Schema in one statement`).toBe(true);
    text = `${text.slice(0, previousEnd + 2)}\n${blocks.schema}${text.slice(previousEnd + 2)}`;
  }
  if (!text.includes(blocks.presenter)) {
    const map = text.indexOf(PRESENTERS_MAP);
    const close = text.indexOf('\n]);', map);
    expect(map > -1 && close > -1, 'orderPresenters is a Map literal closed by "]);"').toBe(true);
    text = `${text.slice(0, close + 1)}${blocks.presenter}${text.slice(close + 1)}`;
  }
  writeFileSync(file, text);

  const policy = readPolicy(copy);
  const [v2, v3] = [JSON.parse(blocks.v2Entry), JSON.parse(blocks.v3Entry)] as [
    { version: number },
    { version: number },
  ];
  policy.versions = policy.versions.map((entry) => (entry.version === 2 ? v2 : entry));
  if (!policy.versions.some((entry) => isDeepStrictEqual(entry, v3))) policy.versions.push(v3);
  writePolicy(copy, policy);
}

/**
 * "Adding a version 3" step 5: orderV2Schema (with its doc comment) and its entry of orderPresenters deleted, when
 * the file still has them.
 */
function deleteVersion2Presenter(copy: string): void {
  const file = join(copy, PRESENTERS);
  let text = readFileSync(file, 'utf8');
  const start = text.indexOf(PREVIOUS_SCHEMA);
  if (start > -1) {
    const end = text.indexOf(';\n', text.indexOf(PREVIOUS_SCHEMA_DECLARATION, start));
    text = `${text.slice(0, start)}${text.slice(end + 3)}`;
  }
  const entry = /\n {2}\[\n {4}2,\n[\s\S]*?\n {2}\],\n/.exec(text);
  if (entry !== null) text = `${text.slice(0, entry.index + 1)}${text.slice(entry.index + entry[0].length)}`;
  expect(text, `${PRESENTERS} keeps no version 2 presenter`).not.toMatch(/orderV2Schema|\[\s*2,/);
  writeFileSync(file, text);
}

/**
 * "Adding a version 3" as a whole: steps 1 and 2, the contract of step 3, step 5's deletion and the contract
 * again. What the two runs of `npm run openapi:update` printed.
 */
export async function followVersion3(
  copy: string,
  blocks: Version3Blocks = version3Blocks(),
): Promise<{ firstUpdate: string; secondUpdate: string }> {
  addVersion3(copy, blocks);
  const firstUpdate = await openapiUpdate(copy);
  deleteVersion2Presenter(copy);
  const secondUpdate = await openapiUpdate(copy);
  return { firstUpdate, secondUpdate };
}

/** The clock the gateway of a copy runs on after "Adding a version 3": the day after version 2's announcement. */
export function version3ClockStart(blocks: Version3Blocks = version3Blocks()): string {
  const v2 = JSON.parse(blocks.v2Entry) as { announced: string };
  return new Date(Date.parse(v2.announced) + 86_400_000).toISOString();
}
