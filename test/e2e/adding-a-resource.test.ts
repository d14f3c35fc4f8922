import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify, stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/paths.mjs';
import { startProcessStack, type ProcessStack } from './process-stack.js';
import { addResource, kubernetesSync, newResourceTests, openapiUpdate, RESOURCE_FILES } from './recipes.js';
import { copyRepository } from './repository-copy.js';
import { registerScenarios } from './scenarios.js';

/**
 * docs/architecture.md "Adding a resource", followed literally: an `/invoices/:id` resource served by the backend
 * in version 2, declared in the policy as changes for version 1, and a seed file. Its code blocks are applied to a copy of the repository where the section says,
 * its two commands run there (the OpenAPI snapshots, the Kubernetes copy of the policy), the copy's tests that
 * a resource touches run unchanged beside the section's new test, and the copy's built backend and gateway
 * answer the resource in every form and pass the shared end-to-end scenarios. When the code moves so the
 * section's steps no longer work, this fails. A block the repository already holds stays as it is: once an
 * invoices resource has been added by this section, the copy is the repository itself, and the test checks
 * that.
 */

const POLICY = 'ops/versions.json';
const { routes: ROUTES, app: APP, test: NEW_TEST } = RESOURCE_FILES;

/**
 * What a resource touches, run in the copy as they are: the list docs/testing.md gives for a new resource (the
 * backend's configuration, document and seed tests, the contract checks of the updated documents, the migration
 * guide's tests, the shipped policy's test, the Kubernetes manifests), the section's new test among them.
 */
const TOUCHED_TESTS = newResourceTests('invoices');

const V1_INVOICE = { id: 'inv-1001', order_id: 'ord-1001', amount: 19.99 };
const V2_INVOICE = { id: 'inv-1001', order_id: 'ord-1001', amount_cents: 1999, currency: 'EUR' };

const run = promisify(execFile);

/** The repository already has the resource: the section was followed here, and the commands' output is committed. */
const committed = readFileSync(join(repoRoot, 'openapi/v2.json'), 'utf8').includes('"/v2/invoices/{id}"');

let copy: string;
let openapiUpdateOutput: string;
let kubernetesSyncOutput: string;
let stack: ProcessStack;

beforeAll(async () => {
  // The Kubernetes manifests' test holds their memory to the recorded measurement.
  copy = copyRepository('adding-a-resource-', [
    'services/users-orders/test',
    'gateway/test',
    'test',
    'deploy',
    'bench/results/container-memory.json',
    'bench/results/kubernetes-sizing.json',
    'vitest.config.ts',
    'eslint.config.js',
    // The contract tests lint the documents; the Kubernetes tests read the Dockerfile and their docs pages.
    '.spectral.yaml',
    'redocly.yaml',
    'Dockerfile',
    'docs',
  ]);
  addResource(copy);
  // Steps 5 and 6, as documented: builds, then writes the snapshots (exit 1 on a breaking difference); then the
  // Kubernetes copy.
  openapiUpdateOutput = await openapiUpdate(copy);
  kubernetesSyncOutput = await kubernetesSync(copy);
  stack = await startProcessStack({ root: copy });
}, 300_000);

afterAll(async () => {
  await stack?.stop();
  if (copy !== undefined) rmSync(copy, { recursive: true, force: true });
});

describe('"Adding a resource" in docs/architecture.md', () => {
  it(
    'npm run openapi:update adds the invoice paths and tag to v2 and to v1 derived from it, as non-breaking changes ' +
      '(or finds them committed)',
    () => {
      expect(openapiUpdateOutput).not.toContain('BREAKING');
      for (const version of [1, 2]) {
        // Version 1's document is derived from version 2's by the policy's changes, and says so.
        expect(openapiUpdateOutput).toMatch(
          committed
            ? /^Snapshots are up to date\.$/m
            : new RegExp(
                `^openapi/v${version}\\.json( \\(derived from v2 by the policy's changes\\))?: non-breaking:`,
                'm',
              ),
        );
        const document = JSON.parse(readFileSync(join(copy, `openapi/v${version}.json`), 'utf8')) as {
          info: { description: string };
          paths: Record<string, unknown>;
          tags: { name: string }[];
        };
        expect(Object.keys(document.paths)).toEqual(
          expect.arrayContaining([`/v${version}/invoices/{id}`, `/api/v${version}/invoices/{id}`]),
        );
        expect(document.tags.map(({ name }) => name)).toContain('invoices');
        expect(document.info.description).toContain(
          `invoices at /v${version}/invoices/{id} and /api/v${version}/invoices/{id}`,
        );
      }
    },
  );

  it(
    'npm run k8s:sync writes the Kubernetes copy of the policy (or finds it up to date), equal to ' +
      'ops/versions.json',
    () => {
      expect(kubernetesSyncOutput).toContain(
        `deploy/kubernetes/base/policy/versions.json: ${committed ? 'up to date with' : 'written from'} ` +
          `ops/versions.json`,
      );
      expect(readFileSync(join(copy, 'deploy/kubernetes/base/policy/versions.json'), 'utf8')).toBe(
        readFileSync(join(copy, POLICY), 'utf8'),
      );
    },
  );

  it(
    "leaves the tests as they are: the tests a resource touches pass on the copy, and so does the section's new " +
      'test',
    async () => {
      const vitest = await run(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...TOUCHED_TESTS], {
        cwd: copy,
        encoding: 'utf8',
      });
      expect(stripVTControlCharacters(vitest.stdout)).toMatch(/Test Files {2}(\d+) passed \(\1\)/);
      expect(stripVTControlCharacters(vitest.stdout)).toContain(NEW_TEST);
    },
    300_000,
  );

  it('gives code that type-checks and passes ESLint, as npm run typecheck and npm run lint see it', async () => {
    // The section's files with what they import, under the repository's compiler options.
    writeFileSync(
      join(copy, 'tsconfig.section.json'),
      JSON.stringify({ extends: './tsconfig.json', include: [ROUTES, APP, NEW_TEST] }),
    );
    await run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.section.json'], {
      cwd: copy,
      encoding: 'utf8',
    });
    await run(process.execPath, ['node_modules/eslint/bin/eslint.js', ROUTES, APP, NEW_TEST], {
      cwd: copy,
      encoding: 'utf8',
    });
  }, 300_000);

  it.each([
    ['/v1/invoices/inv-1001', {}, '1', V1_INVOICE, '/v1/invoices/:id'],
    ['/api/v1/invoices/inv-1001', {}, '1', V1_INVOICE, '/api/v1/invoices/:id'],
    ['/v2/invoices/inv-1001', {}, '2', V2_INVOICE, '/v2/invoices/:id'],
    ['/api/v2/invoices/inv-1001', {}, '2', V2_INVOICE, '/api/v2/invoices/:id'],
    ['/invoices/inv-1001', { 'api-version': '2' }, '2', V2_INVOICE, '/invoices/:id'],
  ])(
    'GET %s %j answers version %s from the seed file with its headers, counted under the route label of its form',
    async (path, headers, version, body, label) => {
      const res = await fetch(`${stack.gatewayUrl}${path}`, { headers });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual(body);
      expect(res.headers.get('api-version')).toBe(version);
      expect(res.headers.get('api-supported-versions')).toBe('2');
      expect(res.headers.get('deprecation')).toBe(version === '1' ? 'true' : null);
      if (version === '1')
        expect(res.headers.get('link')).toBe(`<${path.replace('/v1/', '/v2/')}>; rel="successor-version"`);
      const metrics = await (await fetch(`${stack.gatewayAdminUrl}/metrics`)).text();
      expect(metrics).toContain(`http_requests_total{method="GET",route="${label}",status_code="200"}`);
    },
  );

  it('serves every invoice of the seed file', async () => {
    const res = await fetch(`${stack.gatewayUrl}/v2/invoices/inv-1002`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: 'inv-1002', order_id: 'ord-1002', amount_cents: 4500, currency: 'USD' });
  });

  it(
    'answers an unknown invoice as an unknown order is answered: JSON 404 bare, text/plain under /api, both with ' +
      'the version headers',
    async () => {
      const bare = await fetch(`${stack.gatewayUrl}/v2/invoices/inv-9999`);
      expect(bare.status).toBe(404);
      expect(await bare.json()).toEqual({ error: 'invoice not found', code: 404 });
      expect(bare.headers.get('api-version')).toBe('2');
      const api = await fetch(`${stack.gatewayUrl}/api/v2/invoices/inv-9999`);
      expect(api.status).toBe(404);
      expect(api.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(await api.text()).toBe('invoice not found');
      expect(api.headers.get('api-version')).toBe('2');
      const unserved = await fetch(`${stack.gatewayUrl}/v2/invoices`);
      expect(unserved.status).toBe(404);
    },
  );

  it('still serves the orders as before', async () => {
    const res = await fetch(`${stack.gatewayUrl}/v2/orders/ord-1001`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: 'ord-1001', customer_id: 'user-1', total_cents: 1999, currency: 'EUR' });
  });
});

describe('"Adding a resource": the shared scenarios against the copy', () => {
  registerScenarios(() => stack);
});
