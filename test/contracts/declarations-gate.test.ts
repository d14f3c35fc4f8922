import { execFile } from 'node:child_process';
import { copyFileSync, cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileTranslations } from '../../gateway/src/translation/compile.js';
import { deriveDocument } from '../../gateway/src/translation/derive-document.js';
import { loadPolicyFile } from '../../gateway/src/versions/policy-file.js';
import { ORDERS, ORDERS_V1_CHANGES } from '../../gateway/test/support/orders-v1.js';
import { repoRoot } from '../../scripts/paths.mjs';

// The contract gate on each operation of the second edition (docs/client-documents.md#contract-guard): with the committed
// version 1 document derived by the right declarations, `npm run openapi:update` (its script, on copies) finds the
// snapshots up to date; a declaration made wrong fails it (exit 1), naming what the documents do not show.

const shipped = JSON.parse(readFileSync(join(repoRoot, 'ops/versions.json'), 'utf8')) as {
  versions: Record<string, unknown>[];
  resources?: (string | { path: string })[];
};
const MODULES = join(repoRoot, 'test/contracts/modules');

type Change = Record<string, unknown>;

/**
 * These tests are about the orders: every other resource the policy ships, and version 1's changes of it, stay as
 * shipped (docs/architecture.md "Adding a resource").
 */
const ORDERS_AND_DOCUMENT = new Set<string>([ORDERS, '/openapi.json']);
const otherResources = (shipped.resources ?? []).filter(
  (resource) => !ORDERS_AND_DOCUMENT.has(typeof resource === 'string' ? resource : resource.path),
);
const otherChanges = (
  (shipped.versions.find((entry) => entry.version === 1)?.changes as Change[] | undefined) ?? []
).filter((change) => change.resource !== ORDERS);

/**
 * ops/versions.json with version 1's orders declared by `changes` (and the orders' `resources`), its modules beside
 * it, in a new directory.
 */
function policyWith(changes: Change[], resources?: unknown[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'policy-'));
  for (const change of changes)
    if (change.op === 'module') copyFileSync(join(MODULES, String(change.module)), join(dir, String(change.module)));
  const versions = shipped.versions.map((entry) =>
    entry.version === 1 ? { ...entry, changes: [...changes, ...otherChanges] } : entry,
  );
  const file = join(dir, 'versions.json');
  const listed = resources === undefined ? {} : { resources: [...resources, ...otherResources] };
  writeFileSync(file, JSON.stringify({ ...shipped, ...listed, versions }));
  return file;
}

/** The committed snapshots, v1.json replaced by what the policy at `policy` derives from the committed v2.json. */
async function snapshotsDerivedBy(policy: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-derived-'));
  cpSync(join(repoRoot, 'openapi'), dir, { recursive: true });
  const { file, modules } = await loadPolicyFile(policy);
  const steps = compileTranslations(file, modules).chain(1).steps;
  const v2 = JSON.parse(readFileSync(join(dir, 'v2.json'), 'utf8')) as object;
  writeFileSync(join(dir, 'v1.json'), `${JSON.stringify(deriveDocument(v2, steps), null, 2)}\n`);
  return dir;
}

function runGate(snapshots: string, policy: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['scripts/openapi-update.mjs', '--snapshots', snapshots, '--policy', policy],
      { cwd: repoRoot },
      (err, stdout, stderr) => {
        resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr });
      },
    );
  });
}

const [rename, scale] = ORDERS_V1_CHANGES as unknown as [Change, Change, Change];
const on = (resource: string, changes: readonly Change[]) => changes.map((change) => ({ ...change, resource }));
const DERIVED = "v1.json (derived from v2 by the policy's changes): BREAKING: ";

interface Scenario {
  /** Version 1 declared right: the committed v1.json is what these derive. */
  right: Change[];
  /** One of them made wrong. */
  wrong: Change[];
  resources?: unknown[];
  wrongResources?: unknown[];
  /** What the gate says of the wrong one. */
  says: string;
}

const SCENARIOS: Record<string, Scenario> = {
  move: {
    right: [rename, scale, { resource: ORDERS, op: 'move', field: 'money.currency', to: 'currency' }],
    wrong: [rename, scale, { resource: ORDERS, op: 'move', field: 'money.currency', to: 'currency_code' }],
    says: "version 1's changes.2 (move on /orders/:id): version 2's document has no field that becomes money.currency",
  },
  envelope: {
    right: [...ORDERS_V1_CHANGES],
    wrong: [...ORDERS_V1_CHANGES, { resource: ORDERS, op: 'envelope', field: 'data' }],
    says: "version 1's changes.3 (envelope on /orders/:id): version 2's bodies hold nothing under data",
  },
  status: {
    right: [...ORDERS_V1_CHANGES, { resource: ORDERS, op: 'status', from: 404, to: 410 }],
    wrong: [...ORDERS_V1_CHANGES, { resource: ORDERS, op: 'status', from: 409, to: 410 }],
    says: "version 1's changes.3 (status on /orders/:id): version 2's document answers no status 409",
  },
  header: {
    right: [...ORDERS_V1_CHANGES],
    wrong: [...ORDERS_V1_CHANGES, { resource: ORDERS, op: 'header', name: 'Total-Count', to: 'X-Total-Count' }],
    says: "version 1's changes.3 (header on /orders/:id): version 2's document has no header Total-Count",
  },
  path: {
    resources: [{ path: '/purchases/:id', versions: [1] }, { path: ORDERS, versions: [2] }, '/openapi.json'],
    right: [...on('/purchases/:id', ORDERS_V1_CHANGES), { resource: '/purchases/:id', op: 'path', to: ORDERS }],
    wrongResources: [
      { path: '/purchases/:id', versions: [1] },
      { path: ORDERS, versions: [2] },
      { path: '/no-such-resource/:id', versions: [2] },
      '/openapi.json',
    ],
    wrong: [
      ...on('/purchases/:id', ORDERS_V1_CHANGES),
      { resource: '/purchases/:id', op: 'path', to: '/no-such-resource/:id' },
    ],
    says: "version 1's changes.3 (path on /purchases/:id): version 2's document has no path /no-such-resource/:id",
  },
  link: {
    right: [...ORDERS_V1_CHANGES, { resource: ORDERS, op: 'link', field: 'id' }],
    wrong: [...ORDERS_V1_CHANGES, { resource: ORDERS, op: 'link', field: 'next' }],
    says: "version 1's changes.3 (link on /orders/:id): version 2's document has no field that becomes next",
  },
  '"on": "error"': {
    right: [...ORDERS_V1_CHANGES, { resource: ORDERS, op: 'rename', field: 'reason', to: 'details', on: 'error' }],
    wrong: [...ORDERS_V1_CHANGES, { resource: ORDERS, op: 'rename', field: 'reason', to: 'detail', on: 'error' }],
    says: "version 1's changes.3 (rename on /orders/:id): version 2's document has no field that becomes reason",
  },
  module: {
    right: [...ORDERS_V1_CHANGES, { resource: ORDERS, op: 'module', module: 'currency-lower.mjs' }],
    wrong: [...ORDERS_V1_CHANGES, { resource: ORDERS, op: 'module', module: 'currency-dropped.mjs' }],
    says:
      "version 1's changes.3 (module on /orders/:id): currency-dropped.mjs does not give back version 2's example 0: " +
      '$.currency differs after backward then forward',
  },
};

describe('the contract gate on the second edition of the change language', () => {
  it.each(Object.entries(SCENARIOS))(
    '%s: accepts the committed document the right declarations derive, and fails on a wrong one',
    async (_op, { right, wrong, resources, wrongResources, says }) => {
      const snapshots = await snapshotsDerivedBy(policyWith(right, resources));
      expect(await runGate(snapshots, policyWith(right, resources))).toEqual({
        code: 0,
        stdout: 'Snapshots are up to date.\n',
        stderr: '',
      });
      const before = readFileSync(join(snapshots, 'v1.json'), 'utf8');
      const run = await runGate(snapshots, policyWith(wrong, wrongResources ?? resources));
      expect(run.code).toBe(1);
      expect(run.stdout).toContain(`${DERIVED}${says}\n`);
      expect(run.stderr).toMatch(/^Refused: the differences marked BREAKING/);
      expect(readFileSync(join(snapshots, 'v1.json'), 'utf8')).toBe(before);
    },
    60_000,
  );
});
