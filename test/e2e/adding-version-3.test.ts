import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual, promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/paths.mjs';
import { startProcessStack, type ProcessStack } from './process-stack.js';
import { copyRepository, sectionCodeBlocks } from './repository-copy.js';

/**
 * docs/architecture.md "Adding a version 3", followed literally: its code blocks are applied to a copy of
 * the repository where the section says (v3's presenter next to v2's, version 2 declared as changes to 3,
 * version 3 listed), its contract is updated with the documented command, v2's presenter is deleted as step 5
 * says and the command run again, and the copy's built backend (serving v3 only) and gateway answer v3 from the
 * backend and v2 and v1 translated from it. When the code moves so the section's steps no longer work, this
 * fails.
 */

const SECTION = '## Adding a version 3';
const PRESENTERS = 'services/users-orders/src/orders/presenters.ts';
const POLICY = 'ops/versions.json';
/** Where the section puts the schema (below `orderV2Schema`) and the presenter (last entry of orderPresenters). */
const PREVIOUS_SCHEMA = '/** Order, version 2 representation';
const PREVIOUS_SCHEMA_DECLARATION = 'export const orderV2Schema';
const PRESENTERS_MAP = 'export const orderPresenters';

const DEMO_ORDER = 'ord-1001';
const V1_ORDER = { id: DEMO_ORDER, user_id: 'user-1', total: 19.99 };
const V2_ORDER = { id: DEMO_ORDER, customer_id: 'user-1', total_cents: 1999, currency: 'EUR' };
const V3_ORDER = { data: { id: DEMO_ORDER, customer: { id: 'user-1' }, amount_cents: 1999, currency: 'EUR' } };

interface SectionBlocks {
  schema: string;
  presenter: string;
  v2Entry: string;
  v3Entry: string;
}

/** The section's code blocks: two `ts` (schema, presenter entry), two `json` (v2's new entry, v3's), in order. */
function sectionBlocks(): SectionBlocks {
  const code = sectionCodeBlocks(SECTION);
  expect(
    code.map(({ lang }) => lang),
    'the section shows the schema, the presenter entry and the two policy entries',
  ).toEqual(['ts', 'ts', 'json', 'json']);
  const [schema, presenter, v2Entry, v3Entry] = code.map(({ body }) => body) as [string, string, string, string];
  return { schema, presenter, v2Entry, v3Entry };
}

/**
 * Step 1: the schema after the statement that declares orderV2Schema, the presenter before the `]);` that
 * closes orderPresenters. A block the file already holds word for word stays as it is: once a version 3 has
 * been added by this section, the copy is the repository itself, and the test checks that.
 */
function addPresenter(copy: string, { schema, presenter }: SectionBlocks): void {
  const file = join(copy, PRESENTERS);
  let text = readFileSync(file, 'utf8');
  if (!text.includes(schema)) {
    const previous = text.indexOf(PREVIOUS_SCHEMA_DECLARATION);
    const previousEnd = text.indexOf(';\n', previous);
    expect(previous > -1 && previousEnd > -1, `${PRESENTERS} declares orderV2Schema in one statement`).toBe(true);
    text = `${text.slice(0, previousEnd + 2)}\n${schema}${text.slice(previousEnd + 2)}`;
  }
  if (!text.includes(presenter)) {
    const map = text.indexOf(PRESENTERS_MAP);
    const close = text.indexOf('\n]);', map);
    expect(map > -1 && close > -1, 'orderPresenters is a Map literal closed by "]);"').toBe(true);
    text = `${text.slice(0, close + 1)}${presenter}${text.slice(close + 1)}`;
  }
  writeFileSync(file, text);
}

/** Step 2: version 2's entry replaced, version 3's appended, unless the policy lists them already (as for step 1). */
function declareVersion2(copy: string, { v2Entry, v3Entry }: SectionBlocks): void {
  const file = join(copy, POLICY);
  const policy = JSON.parse(readFileSync(file, 'utf8')) as { versions: { version: number }[] };
  const [v2, v3] = [JSON.parse(v2Entry), JSON.parse(v3Entry)] as [{ version: number }, { version: number }];
  policy.versions = policy.versions.map((entry) => (entry.version === 2 ? v2 : entry));
  if (!policy.versions.some((entry) => isDeepStrictEqual(entry, v3))) policy.versions.push(v3);
  writeFileSync(file, `${JSON.stringify(policy, null, 2)}\n`);
}

/**
 * Step 5: orderV2Schema (with its doc comment) and its entry of orderPresenters deleted, when the file still has
 * them.
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

const run = promisify(execFile);
/** What `npm run openapi:update` says of the snapshots (the build it starts with says what it compiles first). */
const openapiUpdate = async (cwd: string) =>
  (await run('npm', ['run', '--silent', 'openapi:update'], { cwd, encoding: 'utf8' })).stdout
    .split('\n')
    .filter((line) => !line.startsWith('build: '))
    .join('\n');

let copy: string;
/** What `npm run openapi:update` printed after steps 1 and 2, and after step 5. */
let firstUpdate: string;
let secondUpdate: string;
let stack: ProcessStack;
/** Version 2's sunset as the section writes it, in the form of the Sunset header. */
let v2Sunset: string;

beforeAll(async () => {
  copy = copyRepository('adding-version-3-');
  const blocks = sectionBlocks();
  addPresenter(copy, blocks);
  declareVersion2(copy, blocks);
  // Step 3, as documented: builds, then writes the snapshots (exit 1 on a breaking difference).
  firstUpdate = await openapiUpdate(copy);
  deleteVersion2Presenter(copy);
  secondUpdate = await openapiUpdate(copy);
  // On the section's dates, whatever today is: the clock starts the day after version 2's announcement.
  const v2 = JSON.parse(blocks.v2Entry) as { announced: string; sunset: string };
  v2Sunset = new Date(Date.parse(v2.sunset)).toUTCString();
  const clockStart = new Date(Date.parse(v2.announced) + 86_400_000).toISOString();
  stack = await startProcessStack({ root: copy, gatewayEnv: { GATEWAY_CLOCK_START: clockStart } });
}, 300_000);

afterAll(async () => {
  await stack?.stop();
  if (copy !== undefined) rmSync(copy, { recursive: true, force: true });
});

const gateway = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${stack.gatewayUrl}${path}`, { headers });

describe('"Adding a version 3" in docs/architecture.md', () => {
  it('npm run openapi:update writes openapi/v3.json and derives v2 and v1 from it, nothing breaking', () => {
    const committed = existsSync(join(repoRoot, 'openapi/v3.json'));
    if (!committed) {
      expect(firstUpdate).toContain(
        'openapi/v3.json: non-breaking: version 3 is new: its document has no snapshot yet',
      );
    }
    expect(firstUpdate).not.toContain('BREAKING');
    // Step 5 changes no document: version 2's was derived from version 3's already.
    expect(secondUpdate).toBe('Snapshots are up to date.\n');
    const document = (version: number) =>
      JSON.parse(readFileSync(join(copy, `openapi/v${version}.json`), 'utf8')) as {
        info: { version: string };
        paths: Record<string, unknown>;
      };
    expect(document(3).info.version).toBe('3');
    expect(Object.keys(document(3).paths)).toEqual(expect.arrayContaining(['/v3/orders/{id}', '/api/v3/orders/{id}']));
    for (const version of [1, 2]) {
      expect(document(version).info.version).toBe(String(version));
      expect(Object.keys(document(version).paths)).toEqual(
        expect.arrayContaining([`/v${version}/orders/{id}`, `/api/v${version}/orders/{id}`]),
      );
    }
    expect(JSON.stringify(document(2))).toContain('"total_cents"');
    expect(JSON.stringify(document(2))).not.toContain('"amount_cents"');
    // Version 2's order is unwrapped and its customer an id again, as the backend's own v2 document had it.
    const order = (document(2).paths['/v2/orders/{id}'] as { get: { responses: Record<string, unknown> } }).get
      .responses['200'] as { content: { 'application/json': { schema: { properties: object; required: string[] } } } };
    const schema = order.content['application/json'].schema;
    expect(Object.keys(schema.properties)).toEqual(['id', 'customer_id', 'total_cents', 'currency']);
    expect(schema.required).toEqual(['id', 'customer_id', 'total_cents', 'currency']);
  });

  it('leaves a backend that serves only v3: its own 404 for v2 and v1 orders', async () => {
    for (const path of ['/v2/orders/ord-1001', '/v1/orders/ord-1001', '/v2/openapi.json']) {
      const res = await fetch(`${stack.backend.apiUrl}${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.json()).toEqual({ error: 'not found', code: 404 });
    }
    expect(await (await fetch(`${stack.backend.apiUrl}/v3/orders/ord-1001`)).json()).toEqual(V3_ORDER);
  });

  it.each([
    ['/v3/orders/ord-1001', {}],
    ['/api/v3/orders/ord-1001', {}],
    ['/orders/ord-1001', { 'api-version': '3' }],
  ])('GET %s %j answers the v3 representation with the v3 headers', async (path, headers) => {
    const res = await gateway(path, headers);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual(V3_ORDER);
    expect(res.headers.get('api-version')).toBe('3');
    expect(res.headers.get('api-supported-versions')).toBe('3');
    expect(res.headers.get('api-deprecated-versions')).toBe('1, 2');
    expect(res.headers.get('vary')).toMatch(/API-Version/);
    for (const name of ['deprecation', 'sunset', 'link']) expect(res.headers.get(name)).toBeNull();
  });

  it.each([
    ['/v2/orders/ord-1001', {}, '</v3/orders/ord-1001>'],
    ['/api/v2/orders/ord-1001', {}, '</api/v3/orders/ord-1001>'],
    ['/orders/ord-1001', { 'api-version': '2' }, '</v3/orders/ord-1001>'],
    // default_version stays 2, as the section says.
    ['/orders/ord-1001', {}, '</v3/orders/ord-1001>'],
  ])('GET %s %j answers v2 as before, translated from v3, deprecated in favour of v3', async (path, headers, link) => {
    const res = await gateway(path, headers);
    expect(res.status).toBe(200);
    // Unwrapped, the customer's id in the place of the customer, the amount renamed: v2's bytes as before.
    expect(await res.text()).toBe(JSON.stringify(V2_ORDER));
    expect(res.headers.get('api-version')).toBe('2');
    expect(res.headers.get('deprecation')).toBe('true');
    expect(res.headers.get('sunset')).toBe(v2Sunset);
    expect(res.headers.get('link')).toBe(`${link}; rel="successor-version"`);
  });

  it.each([
    ['/v1/orders/ord-1001', {}, '</v2/orders/ord-1001>'],
    ['/api/v1/orders/ord-1001', {}, '</api/v2/orders/ord-1001>'],
    ['/orders/ord-1001', { 'api-version': '1' }, '</v2/orders/ord-1001>'],
  ])('GET %s %j answers SPEC’s v1 through both translations, v2 still its successor', async (path, headers, link) => {
    const res = await gateway(path, headers);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(JSON.stringify(V1_ORDER));
    expect(res.headers.get('api-version')).toBe('1');
    expect(res.headers.get('link')).toBe(`${link}; rel="successor-version"`);
  });

  it("keeps errors the backend's own in every version: JSON 404 bare, text/plain under /api", async () => {
    for (const version of [1, 2, 3]) {
      const bare = await gateway(`/v${version}/orders/ord-missing`);
      expect(bare.status).toBe(404);
      expect(await bare.json()).toEqual({ error: 'order not found', code: 404 });
      expect(bare.headers.get('api-version')).toBe(String(version));
      const api = await gateway(`/api/v${version}/orders/ord-missing`);
      expect(api.status).toBe(404);
      expect(api.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await api.text()).toBe('order not found');
    }
  });

  it('serves each version’s OpenAPI document through the gateway, v2’s and v1’s derived, as committed', async () => {
    for (const version of [1, 2, 3]) {
      const res = await gateway('/openapi.json', { 'api-version': String(version) });
      expect(res.status).toBe(200);
      expect(res.headers.get('api-version')).toBe(String(version));
      const document = (await res.json()) as { info: { version: string }; paths: Record<string, unknown> };
      expect(document.info.version).toBe(String(version));
      expect(Object.keys(document.paths)).toEqual(
        expect.arrayContaining([`/v${version}/orders/{id}`, `/api/v${version}/orders/{id}`]),
      );
    }
  });

  it('counts each version as the one the client asked for', async () => {
    const metrics = await (await fetch(`${stack.gatewayAdminUrl}/metrics`)).text();
    expect(metrics).toMatch(
      /^api_version_requests_total\{version="3",deprecated="false",selected_by="path",status_code="200"\} [1-9]/m,
    );
    expect(metrics).toMatch(
      /^api_version_requests_total\{version="2",deprecated="true",selected_by="header",status_code="200"\} [1-9]/m,
    );
    expect(metrics).toMatch(
      /^api_version_requests_total\{version="1",deprecated="true",selected_by="path",status_code="200"\} [1-9]/m,
    );
  });
});
