import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify, stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProcessStack, type ProcessStack } from './process-stack.js';
import { copyRepository, sectionCodeBlocks } from './repository-copy.js';

/**
 * docs/architecture.md "Adding a resource", followed literally: an `/invoices/:id` resource with two
 * presenters. Its code blocks are applied to a copy of the repository where the section says, the contract is
 * updated with the documented command, the tests the section says need no change run in the copy unchanged,
 * and the copy's built backend and gateway answer the resource in every form. When the code moves so the
 * section's steps no longer work, this fails.
 */

const SECTION = '## Adding a resource';
const ROUTES = 'services/users-orders/src/invoices/routes.ts';
const APP = 'services/users-orders/src/app.ts';
const POLICY = 'ops/versions.json';
/** The registration goes below this one: after the contract plugin, with the other routes. */
const ORDER_ROUTES_REGISTRATION = 'await app.register(orderRoutes';
/** The tests step 6 says need no change, and the contract checks of the updated documents. */
const UNCHANGED_TESTS = ['gateway/test/versions/policy-file.test.ts', 'services/users-orders/test/contract/openapi.test.ts', 'test/contracts/snapshots.test.ts', 'test/contracts/openapi-valid.test.ts'];

const V1_INVOICE = { id: 'inv-1001', order_id: 'ord-1001', amount: 19.99 };
const V2_INVOICE = { id: 'inv-1001', order_id: 'ord-1001', amount_cents: 1999, currency: 'EUR' };

const run = promisify(execFile);

/** Step 1, the new file; step 2, its import after app.ts's last import and its registration below the order routes'; step 3, the policy keys. */
function applySection(copy: string): void {
  const code = sectionCodeBlocks(SECTION);
  expect(code.map(({ lang }) => lang), 'the section shows the routes file, the import, the registration and the policy keys').toEqual(['ts', 'ts', 'ts', 'json']);
  const [routes, importLine, registration, policyKeys] = code.map(({ body }) => body) as [string, string, string, string];
  mkdirSync(dirname(join(copy, ROUTES)), { recursive: true });
  writeFileSync(join(copy, ROUTES), routes);

  const appFile = join(copy, APP);
  const lines = readFileSync(appFile, 'utf8').split('\n');
  const lastImport = lines.findLastIndex((line) => line.startsWith('import '));
  lines.splice(lastImport + 1, 0, importLine.trimEnd());
  const orderRoutes = lines.findIndex((line) => line.includes(ORDER_ROUTES_REGISTRATION));
  expect(orderRoutes, `${APP} registers the order routes`).toBeGreaterThan(-1);
  lines.splice(orderRoutes + 1, 0, registration.trimEnd());
  writeFileSync(appFile, lines.join('\n'));

  const policyFile = join(copy, POLICY);
  const policy = JSON.parse(readFileSync(policyFile, 'utf8')) as Record<string, unknown>;
  writeFileSync(policyFile, `${JSON.stringify({ ...policy, ...(JSON.parse(policyKeys) as Record<string, unknown>) }, null, 2)}\n`);
}

let copy: string;
let openapiUpdate: string;
let stack: ProcessStack;

beforeAll(async () => {
  copy = copyRepository('adding-a-resource-', ['gateway/test', 'services/users-orders/test', 'test/contracts', 'test/vitest-shared.ts', 'vitest.config.ts', 'eslint.config.js']);
  applySection(copy);
  // Step 4, as documented: builds, then writes the snapshots (exit 1 on a breaking difference).
  openapiUpdate = (await run('npm', ['run', '--silent', 'openapi:update'], { cwd: copy, encoding: 'utf8' })).stdout;
  stack = await startProcessStack({ root: copy });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  if (copy !== undefined) rmSync(copy, { recursive: true, force: true });
});

describe('"Adding a resource" in docs/architecture.md', () => {
  it('npm run openapi:update adds the invoice paths and tag to v1 and v2 as non-breaking changes', () => {
    expect(openapiUpdate).not.toContain('BREAKING');
    for (const version of [1, 2]) {
      expect(openapiUpdate).toContain(`openapi/v${version}.json: non-breaking:`);
      const document = JSON.parse(readFileSync(join(copy, `openapi/v${version}.json`), 'utf8')) as { info: { description: string }; paths: Record<string, unknown>; tags: { name: string }[] };
      expect(Object.keys(document.paths)).toEqual(expect.arrayContaining([`/v${version}/invoices/{id}`, `/api/v${version}/invoices/{id}`]));
      expect(document.tags.map(({ name }) => name)).toEqual(['users', 'orders', 'invoices']);
      expect(document.info.description).toContain(`invoices at /v${version}/invoices/{id} and /api/v${version}/invoices/{id}`);
    }
  });

  it('leaves the tests as they are: the policy, document and contract tests pass on the copy, and its code passes ESLint', async () => {
    const vitest = await run(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...UNCHANGED_TESTS], { cwd: copy, encoding: 'utf8' });
    expect(stripVTControlCharacters(vitest.stdout)).toMatch(/Test Files {2}4 passed \(4\)/);
    await run(process.execPath, ['node_modules/eslint/bin/eslint.js', ROUTES, APP], { cwd: copy, encoding: 'utf8' });
  }, 120_000);

  it.each([
    ['/v1/invoices/inv-1001', {}, '1', V1_INVOICE, '/v1/invoices/:id'],
    ['/api/v1/invoices/inv-1001', {}, '1', V1_INVOICE, '/api/v1/invoices/:id'],
    ['/v2/invoices/inv-1001', {}, '2', V2_INVOICE, '/v2/invoices/:id'],
    ['/api/v2/invoices/inv-1001', {}, '2', V2_INVOICE, '/api/v2/invoices/:id'],
    ['/invoices/inv-1001', { 'api-version': '2' }, '2', V2_INVOICE, '/invoices/:id'],
  ])('GET %s %j answers version %s with its headers, counted under the route label of its form', async (path, headers, version, body, label) => {
    const res = await fetch(`${stack.gatewayUrl}${path}`, { headers });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(body);
    expect(res.headers.get('api-version')).toBe(version);
    expect(res.headers.get('api-supported-versions')).toBe('2');
    expect(res.headers.get('deprecation')).toBe(version === '1' ? 'true' : null);
    if (version === '1') expect(res.headers.get('link')).toBe(`<${path.replace('/v1/', '/v2/')}>; rel="successor-version"`);
    const metrics = await (await fetch(`${stack.gatewayAdminUrl}/metrics`)).text();
    expect(metrics).toContain(`http_requests_total{method="GET",route="${label}",status_code="200"}`);
  });

  it('answers an unknown invoice with the backend\'s JSON 404 and the version headers, and a version without invoices with 404', async () => {
    const missing = await fetch(`${stack.gatewayUrl}/v2/invoices/inv-9999`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'invoice not found', code: 404 });
    expect(missing.headers.get('api-version')).toBe('2');
    const unserved = await fetch(`${stack.gatewayUrl}/v2/invoices`);
    expect(unserved.status).toBe(404);
  });

  it('still serves the orders as before', async () => {
    const res = await fetch(`${stack.gatewayUrl}/v2/orders/ord-1001`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: 'ord-1001', customer_id: 'user-1', total_cents: 1999, currency: 'EUR' });
  });
});
