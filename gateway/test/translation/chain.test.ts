// One rule for who serves a version (translation/chain.ts), the same in the engine, the derived documents, the
// migration guide and the contract gate: a version with `changes` (an empty list too) is served by its successor.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildMigrationGuide } from '../../src/changes/guide.js';
import { chainOf } from '../../src/translation/chain.js';
import { compileTranslations } from '../../src/translation/compile.js';
import { translatedVersions } from '../../src/translation/derive-document.js';
import { versionPolicyFileSchema } from '../../src/versions/policy-file.js';
import { startDocumentBackend, ordersDocument, type DocumentBackend } from '../support/documents.js';
import { buildTestGateway, type TestGateway } from '../support/helpers.js';
import { ORDERS, ORDERS_V1_CHANGES } from '../support/orders-v1.js';

const v1 = { version: 1, status: 'deprecated', announced: '2026-06-01', sunset: '2027-01-01T00:00:00Z', successor: 2 };
/** Version 1 declared as nothing changed: the same representation as version 2's. */
const nothingChanged = {
  default_version: 2,
  versions: [
    { ...v1, changes: [] },
    { version: 2, status: 'current' },
  ],
};
const resources = [
  { path: ORDERS, versions: undefined },
  { path: '/openapi.json', versions: undefined },
];

describe('changes: [] ("nothing changed") means the successor serves the version, everywhere', () => {
  const versions = [
    { version: 1, successor: 2, changes: [] },
    { version: 2, successor: 3, changes: ORDERS_V1_CHANGES },
    { version: 3 },
    { version: 4, successor: 5 },
  ];

  it('in the chain: down to the first version without changes; one without changes is served as itself', () => {
    expect(chainOf(versions, 1)).toEqual({
      served: 3,
      steps: [
        { version: 1, successor: 2, changes: [] },
        { version: 2, successor: 3, changes: ORDERS_V1_CHANGES },
      ],
    });
    expect(chainOf(versions, 3)).toEqual({ served: 3, steps: [] });
    // A successor without changes is no declaration: the backend serves version 4.
    expect(chainOf(versions, 4)).toEqual({ served: 4, steps: [] });
    expect(chainOf(versions, 9)).toEqual({ served: 9, steps: [] });
  });

  it('in the engine: the version is translated, from its successor, its bodies as they are', () => {
    const compiled = compileTranslations({
      versions: nothingChanged.versions.map((entry) => ({ ...entry })),
      resources,
    });
    const translation = compiled.versions.get(1);
    expect(translation?.served).toBe(2);
    const route = translation?.routes.get(ORDERS);
    expect([route?.requestBody, route?.answer(200).body, route?.answerHeaders, route?.target('/orders/x')]).toEqual([
      undefined,
      undefined,
      undefined,
      '/orders/x',
    ]);
    expect(compiled.chain(1).steps.map((step) => step.version)).toEqual([1]);
  });

  it('in the documents and the contract gate: derived from the successor, the same but for the version', () => {
    const compiled = compileTranslations({
      versions: nothingChanged.versions.map((entry) => ({ ...entry })),
      resources,
    });
    const gate = translatedVersions(compiled);
    expect(gate.versions).toEqual([1]);
    const { from, document, problems } = gate.derive(1, (version) => (version === 2 ? ordersDocument(2) : undefined));
    expect([from, problems]).toEqual([2, []]);
    const paths = Object.keys((document as { paths: object }).paths);
    expect(paths).toEqual(Object.keys(ordersDocument(2).paths as object).map((path) => path.replace('/v2/', '/v1/')));
  });

  it('in the guide: nothing declared, and no field differs between the documents', () => {
    const compiled = compileTranslations({
      versions: nothingChanged.versions.map((entry) => ({ ...entry })),
      resources,
    });
    const before = translatedVersions(compiled).derive(1, () => ordersDocument(2)).document as object;
    const guide = buildMigrationGuide(1, 2, before, ordersDocument(2), [], resources);
    expect([guide.breaking_changes, guide.compatible_changes]).toEqual([0, 0]);
  });

  it('in the policy file: changes, even none, need a successor', () => {
    const result = versionPolicyFileSchema.safeParse({
      default_version: 2,
      versions: [{ version: 2, status: 'current', changes: [] }],
    });
    expect(result.success ? [] : result.error.issues.map((issue) => issue.message)).toEqual([
      'version 2: changes need a successor to change into',
    ]);
  });
});

describe('changes: [] at the gateway', () => {
  let backend: DocumentBackend;
  let gateway: TestGateway;
  beforeEach(async () => {
    backend = await startDocumentBackend();
    // The backend serves only version 2's document: version 1's is derived.
    backend.documents.delete('/v1/openapi.json');
    gateway = await buildTestGateway(backend.url, { policy: nothingChanged });
  });
  afterEach(async () => {
    await gateway.app.close();
    await backend.close();
  });

  it("serves /v1 from the backend's /v2 with API-Version-Requested: 1, the body as it came", async () => {
    const res = await gateway.app.inject({ method: 'GET', url: '/v1/orders/ord-1001' });
    expect([res.statusCode, res.body, res.headers['api-version']]).toEqual([200, '{}', '1']);
    const seen = backend.seen.at(-1);
    expect([seen?.url, seen?.headers['api-version-requested']]).toEqual(['/v2/orders/ord-1001', '1']);
  });

  it("derives /v1/openapi.json and the guide from the backend's version 2 document", async () => {
    const document = await gateway.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(document.statusCode).toBe(200);
    expect(document.json<{ info: { version: string } }>().info.version).toBe('1');
    const guide = await gateway.app.inject({ method: 'GET', url: '/versions/1/changes' });
    expect(guide.statusCode).toBe(200);
    expect(guide.json<{ breaking_changes: number }>().breaking_changes).toBe(0);
    expect(new Set(backend.seen.map(({ url }) => url))).toEqual(new Set(['/v2/openapi.json']));
  });
});
