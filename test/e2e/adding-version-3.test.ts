import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual, promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/paths.mjs';
import { startProcessStack, type ProcessStack } from './process-stack.js';
import { copyRepository, sectionCodeBlocks } from './repository-copy.js';
import { registerScenarios } from './scenarios.js';

/**
 * docs/architecture.md "Adding a version 3", followed literally: its code blocks are applied to a copy of
 * the repository where the section says, the copy is built and its contract updated with the documented
 * command, and its built backend and gateway run the shared end-to-end scenarios (which read the copy's
 * policy, so v3 is one more current version there) and the v3 assertions below. When the code moves so the section's
 * steps no longer
 * work, this fails.
 */

const SECTION = '## Adding a version 3';
const PRESENTERS = 'services/users-orders/src/orders/presenters.ts';
const POLICY = 'ops/versions.json';
/** Where the section puts the schema (below `orderV2Schema`) and the presenter (last entry of orderPresenters). */
const PREVIOUS_SCHEMA = 'export const orderV2Schema';
const PRESENTERS_MAP = 'export const orderPresenters';

const DEMO_ORDER = 'ord-1001';
const V2_ORDER = { id: DEMO_ORDER, customer_id: 'user-1', total_cents: 1999, currency: 'EUR' };
const V3_ORDER = { id: DEMO_ORDER, customer_id: 'user-1', total: { cents: 1999, currency: 'EUR' } };

interface SectionBlocks {
  schema: string;
  presenter: string;
  policyEntry: string;
}

/** The section's code blocks: two `ts` (schema, presenter entry) and one `json` (policy entry), in that order. */
function sectionBlocks(): SectionBlocks {
  const code = sectionCodeBlocks(SECTION);
  expect(
    code.map(({ lang }) => lang),
    'the section shows the schema, the presenter entry and the policy entry',
  ).toEqual(['ts', 'ts', 'json']);
  const [schema, presenter, policyEntry] = code.map(({ body }) => body) as [string, string, string];
  return { schema, presenter, policyEntry };
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
    const previous = text.indexOf(PREVIOUS_SCHEMA);
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

/** Step 2: the entry appended to `versions`, unless the policy lists it already (as for step 1). */
function addPolicyEntry(copy: string, { policyEntry }: SectionBlocks): void {
  const file = join(copy, POLICY);
  const policy = JSON.parse(readFileSync(file, 'utf8')) as { versions: unknown[] };
  const entry: unknown = JSON.parse(policyEntry);
  if (policy.versions.some((listed) => isDeepStrictEqual(listed, entry))) return;
  policy.versions.push(entry);
  writeFileSync(file, `${JSON.stringify(policy, null, 2)}\n`);
}

let copy: string;
let openapiUpdate: string;
let stack: ProcessStack;

beforeAll(async () => {
  copy = copyRepository('adding-version-3-');
  const blocks = sectionBlocks();
  addPresenter(copy, blocks);
  addPolicyEntry(copy, blocks);
  // Step 3, as documented: builds, then writes the snapshots (exit 1 on a breaking difference).
  const { stdout } = await promisify(execFile)('npm', ['run', '--silent', 'openapi:update'], {
    cwd: copy,
    encoding: 'utf8',
  });
  openapiUpdate = stdout;
  stack = await startProcessStack({ root: copy });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  if (copy !== undefined) rmSync(copy, { recursive: true, force: true });
});

describe('"Adding a version 3" in docs/architecture.md', () => {
  it(
    'npm run openapi:update adds openapi/v3.json as the only, non-breaking, difference (or finds it ' + 'committed)',
    () => {
      const committed = existsSync(join(repoRoot, 'openapi/v3.json'));
      expect(openapiUpdate).toContain(
        committed
          ? 'Snapshots are up to date.'
          : 'openapi/v3.json: non-breaking: version 3 is new: its document has no snapshot yet',
      );
      expect(openapiUpdate).not.toContain('BREAKING');
      for (const version of [1, 2]) {
        expect(readFileSync(join(copy, `openapi/v${version}.json`), 'utf8')).toBe(
          readFileSync(join(repoRoot, `openapi/v${version}.json`), 'utf8'),
        );
      }
      const document = JSON.parse(readFileSync(join(copy, 'openapi/v3.json'), 'utf8')) as {
        info: { version: string };
        paths: Record<string, unknown>;
      };
      expect(document.info.version).toBe('3');
      expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/v3/orders/{id}', '/api/v3/orders/{id}']));
    },
  );

  it.each([
    ['/v3/orders/ord-1001', {}],
    ['/api/v3/orders/ord-1001', {}],
    ['/orders/ord-1001', { 'api-version': '3' }],
  ])('GET %s %j answers the v3 representation with the v3 headers', async (path, headers) => {
    const res = await fetch(`${stack.gatewayUrl}${path}`, { headers });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual(V3_ORDER);
    expect(res.headers.get('api-version')).toBe('3');
    expect(res.headers.get('api-supported-versions')).toBe('2, 3');
    expect(res.headers.get('api-deprecated-versions')).toBe('1');
    expect(res.headers.get('vary')).toMatch(/API-Version/);
    for (const name of ['deprecation', 'sunset', 'link']) expect(res.headers.get(name)).toBeNull();
  });

  it("keeps v3 errors the backend's own: JSON 404 bare, text/plain under /api, both with API-Version: 3", async () => {
    const bare = await fetch(`${stack.gatewayUrl}/v3/orders/ord-missing`);
    expect(bare.status).toBe(404);
    expect(await bare.json()).toEqual({ error: 'order not found', code: 404 });
    expect(bare.headers.get('api-version')).toBe('3');
    const api = await fetch(`${stack.gatewayUrl}/api/v3/orders/ord-missing`);
    expect(api.status).toBe(404);
    expect(api.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await api.text()).toBe('order not found');
    expect(api.headers.get('api-version')).toBe('3');
  });

  it('still serves v2 as before, and v1 still names v2 as its successor', async () => {
    const v2 = await fetch(`${stack.gatewayUrl}/v2/orders/ord-1001`);
    expect(v2.status).toBe(200);
    expect(await v2.json()).toEqual(V2_ORDER);
    expect(v2.headers.get('api-version')).toBe('2');
    const v1 = await fetch(`${stack.gatewayUrl}/v1/orders/ord-1001`);
    expect(v1.status).toBe(200);
    expect(v1.headers.get('link')).toBe('</v2/orders/ord-1001>; rel="successor-version"');
  });

  it('serves the v3 OpenAPI document through the gateway, and counts v3 traffic', async () => {
    const res = await fetch(`${stack.gatewayUrl}/openapi.json`, { headers: { 'api-version': '3' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('api-version')).toBe('3');
    expect(((await res.json()) as { info: { version: string } }).info.version).toBe('3');
    const metrics = await (await fetch(`${stack.gatewayAdminUrl}/metrics`)).text();
    expect(metrics).toMatch(
      /^api_version_requests_total\{version="3",deprecated="false",selected_by="path",status_code="200"\} [1-9]/m,
    );
    expect(metrics).toMatch(
      /^api_version_requests_total\{version="3",deprecated="false",selected_by="header",status_code="200"\} [1-9]/m,
    );
  });
});

describe('"Adding a version 3": the shared scenarios against the copy', () => {
  registerScenarios(() => stack);
});
