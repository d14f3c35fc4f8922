import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isDeepStrictEqual, promisify, stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/paths.mjs';
import { startProcessStack, type ProcessStack } from './process-stack.js';
import { copyRepository, sectionCodeBlocks } from './repository-copy.js';
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

const SECTION = '## Adding a resource';
const ROUTES = 'services/users-orders/src/invoices/routes.ts';
const APP = 'services/users-orders/src/app.ts';
const SEED = 'ops/seed/invoices.json';
const POLICY = 'ops/versions.json';
const NEW_TEST = 'services/users-orders/test/invoices/routes.test.ts';
/** The registration goes below this one: after the contract plugin, with the other routes. */
const ORDER_ROUTES_REGISTRATION = 'await app.register(orderRoutes';

/**
 * What a resource touches, run in the copy as they are: the backend's configuration, document and seed
 * tests, the contract checks of the updated documents, the migration guide's tests (they read the committed
 * documents), the shipped policy's test, and the Kubernetes manifests (they compare the policy's copy).
 */
const TOUCHED_TESTS = [
  'services/users-orders/test/config.test.ts',
  'services/users-orders/test/contract/openapi.test.ts',
  'services/users-orders/test/resources/seeds.test.ts',
  'test/contracts/snapshots.test.ts',
  'test/contracts/openapi-valid.test.ts',
  'gateway/test/changes/guide.test.ts',
  'gateway/test/changes/routes.test.ts',
  'gateway/test/versions/policy-file.test.ts',
  'test/kubernetes/manifests.test.ts',
];

const V1_INVOICE = { id: 'inv-1001', order_id: 'ord-1001', amount: 19.99 };
const V2_INVOICE = { id: 'inv-1001', order_id: 'ord-1001', amount_cents: 1999, currency: 'EUR' };

const run = promisify(execFile);

interface SectionBlocks {
  routes: string;
  importLine: string;
  registration: string;
  seed: string;
  policyKeys: string;
  v1Changes: string;
  test: string;
}

/**
 * The section's code blocks, in order: the routes file, the import, the registration, the seed file, the policy keys,
 * version 1's changes of the resource, the new test.
 */
function sectionBlocks(): SectionBlocks {
  const code = sectionCodeBlocks(SECTION);
  expect(
    code.map(({ lang }) => lang),
    'the section shows the routes file, the import, the registration, the seed file, the policy keys, version ' +
      "1's changes and the test",
  ).toEqual(['ts', 'ts', 'ts', 'json', 'json', 'json', 'ts']);
  const [routes, importLine, registration, seed, policyKeys, v1Changes, test] = code.map(({ body }) => body) as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  return { routes, importLine, registration, seed, policyKeys, v1Changes, test };
}

function writeFile(copy: string, path: string, text: string): void {
  mkdirSync(dirname(join(copy, path)), { recursive: true });
  writeFileSync(join(copy, path), text);
}

/**
 * Steps 1 to 4 and the test of step 8: the new files as the blocks give them; the import after app.ts's last
 * import and the registration below the order routes', the policy keys and version 1's changes of the resource,
 * unless they are there already.
 */
function applySection(copy: string, blocks: SectionBlocks): void {
  writeFile(copy, ROUTES, blocks.routes);
  writeFile(copy, SEED, blocks.seed);
  writeFile(copy, NEW_TEST, blocks.test);

  const appFile = join(copy, APP);
  const lines = readFileSync(appFile, 'utf8').split('\n');
  const has = (block: string) => lines.some((line) => line === block.trimEnd());
  if (!has(blocks.importLine))
    lines.splice(lines.findLastIndex((line) => line.startsWith('import ')) + 1, 0, blocks.importLine.trimEnd());
  if (!has(blocks.registration)) {
    const orderRoutes = lines.findIndex((line) => line.includes(ORDER_ROUTES_REGISTRATION));
    expect(orderRoutes, `${APP} registers the order routes`).toBeGreaterThan(-1);
    lines.splice(orderRoutes + 1, 0, blocks.registration.trimEnd());
  }
  writeFileSync(appFile, lines.join('\n'));

  const policyFile = join(copy, POLICY);
  const policy = JSON.parse(readFileSync(policyFile, 'utf8')) as Record<string, unknown>;
  const added = JSON.parse(blocks.v1Changes) as unknown[];
  policy.versions = (policy.versions as { version: number; changes?: unknown[] }[]).map((entry) => {
    if (entry.version !== 1) return entry;
    const changes = entry.changes ?? [];
    const missing = added.filter((change) => !changes.some((listed) => isDeepStrictEqual(listed, change)));
    return { ...entry, changes: [...changes, ...missing] };
  });
  const keys = JSON.parse(blocks.policyKeys) as Record<string, unknown>;
  writeFileSync(policyFile, `${JSON.stringify({ ...policy, ...keys }, null, 2)}\n`);
}

/** The repository already has the resource: the section was followed here, and the commands' output is committed. */
const committed = readFileSync(join(repoRoot, 'openapi/v2.json'), 'utf8').includes('"/v2/invoices/{id}"');

let copy: string;
let openapiUpdate: string;
let kubernetesSync: string;
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
  ]);
  applySection(copy, sectionBlocks());
  // Steps 5 and 6, as documented: builds, then writes the snapshots (exit 1 on a breaking difference); then the
  // Kubernetes copy.
  openapiUpdate = (await run('npm', ['run', '--silent', 'openapi:update'], { cwd: copy, encoding: 'utf8' })).stdout;
  kubernetesSync = (await run('npm', ['run', '--silent', 'k8s:sync'], { cwd: copy, encoding: 'utf8' })).stdout;
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
      expect(openapiUpdate).not.toContain('BREAKING');
      for (const version of [1, 2]) {
        // Version 1's document is derived from version 2's by the policy's changes, and says so.
        expect(openapiUpdate).toMatch(
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
      expect(kubernetesSync).toContain(
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
      const vitest = await run(
        process.execPath,
        ['node_modules/vitest/vitest.mjs', 'run', ...TOUCHED_TESTS, NEW_TEST],
        {
          cwd: copy,
          encoding: 'utf8',
        },
      );
      const files = TOUCHED_TESTS.length + 1;
      expect(stripVTControlCharacters(vitest.stdout)).toMatch(
        new RegExp(`Test Files {2}${files} passed \\(${files}\\)`),
      );
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
