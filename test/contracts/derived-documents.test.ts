import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { VersionChange } from '../../gateway/src/translation/changes.js';
import { deriveDocument } from '../../gateway/src/translation/derive-document.js';
import { ORDERS_V1_CHANGES, stepsOf } from '../../gateway/test/support/orders-v1.js';
import { repoRoot } from '../../scripts/paths.mjs';

// The contract gate for versions declared as changes (docs/client-documents.md#contract-guard): their committed
// document must be what the declarations derive from the newest one. Run as `npm run openapi:update` runs
// (npm test has built dist/ already), on copies of the snapshots and of the policy file.

const shipped = JSON.parse(readFileSync(join(repoRoot, 'ops/versions.json'), 'utf8')) as {
  versions: { version: number; changes?: VersionChange[] }[];
  resources: (string | { path: string; versions: number[] })[];
};

/**
 * Version 1's changes with the orders' ones as a test gives them: these tests are about the orders, and the
 * shipped changes of every other resource stay as declared (docs/architecture.md "Adding a resource").
 */
function v1ChangesWith(orders: VersionChange[]): VersionChange[] {
  const others = (shipped.versions.find((entry) => entry.version === 1)?.changes ?? []).filter(
    (change) => change.resource !== '/orders/:id',
  );
  return [...orders, ...others];
}

/**
 * A temporary directory with the committed snapshots, v1.json replaced by the document the right declarations derive.
 */
function snapshotsDerivedRight(): string {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-derived-'));
  cpSync(join(repoRoot, 'openapi'), dir, { recursive: true });
  const v2 = JSON.parse(readFileSync(join(dir, 'v2.json'), 'utf8')) as object;
  const steps = stepsOf(v1ChangesWith(ORDERS_V1_CHANGES), shipped.resources);
  writeFileSync(join(dir, 'v1.json'), `${JSON.stringify(deriveDocument(v2, steps), null, 2)}\n`);
  return dir;
}

/** ops/versions.json with the orders of version 1 declared as `changes`, in a temporary file. */
function policyWith(changes: VersionChange[]): string {
  const file = join(mkdtempSync(join(tmpdir(), 'policy-')), 'versions.json');
  const versions = shipped.versions.map((entry) =>
    entry.version === 1 ? { ...entry, changes: v1ChangesWith(changes) } : entry,
  );
  writeFileSync(file, JSON.stringify({ ...shipped, versions }));
  return file;
}

function runGate(
  snapshots: string,
  policy: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['scripts/openapi-update.mjs', '--snapshots', snapshots, '--policy', policy, ...args],
      { cwd: repoRoot },
      (err, stdout, stderr) => {
        resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr });
      },
    );
  });
}

describe('the contract gate on a version declared as changes', () => {
  it('accepts the committed document the declarations derive from the newest one', async () => {
    const run = await runGate(snapshotsDerivedRight(), policyWith(ORDERS_V1_CHANGES));
    expect(run).toEqual({ code: 0, stdout: 'Snapshots are up to date.\n', stderr: '' });
  });

  it('accepts it in another key order: documents are compared as JSON', async () => {
    const dir = snapshotsDerivedRight();
    const file = join(dir, 'v1.json');
    const document = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    const reordered = Object.fromEntries(Object.entries(document).reverse());
    writeFileSync(file, JSON.stringify(reordered));
    expect((await runGate(dir, policyWith(ORDERS_V1_CHANGES))).stdout).toBe('Snapshots are up to date.\n');
  });

  it('refuses a declaration that renames to the wrong field, naming each difference', async () => {
    const wrong = ORDERS_V1_CHANGES.map((change) => (change.op === 'rename' ? { ...change, to: 'client_id' } : change));
    const dir = snapshotsDerivedRight();
    const before = readFileSync(join(dir, 'v1.json'), 'utf8');
    const run = await runGate(dir, policyWith(wrong));
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      "v1.json (derived from v2 by the policy's changes): BREAKING: [Removed] property `user_id` in Response 200 " +
        'content (application/json)',
    );
    expect(run.stdout).toContain(
      "v1.json (derived from v2 by the policy's changes): non-breaking: [Added] property `customer_id` in Response " +
        '200 content (application/json)',
    );
    expect(run.stderr).toMatch(/^Refused: the differences marked BREAKING/);
    expect(readFileSync(join(dir, 'v1.json'), 'utf8')).toBe(before);
  });

  it('refuses a scale that leaves the decimal an integer: a changed type', async () => {
    const unscaled = ORDERS_V1_CHANGES.map((change) =>
      change.op === 'scale'
        ? { resource: change.resource, op: 'rename' as const, field: 'total', to: 'total_cents' }
        : change,
    );
    const run = await runGate(snapshotsDerivedRight(), policyWith(unscaled));
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/v1\.json \(derived from v2 by the policy's changes\): BREAKING: .*`total`/);
  });

  it('writes the derived document with openapi:update, and then finds nothing left to do', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'openapi-derived-'));
    cpSync(join(repoRoot, 'openapi'), dir, { recursive: true });
    const policy = policyWith(ORDERS_V1_CHANGES);
    expect((await runGate(dir, policy)).code).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'v1.json'), 'utf8'))).toEqual(
      JSON.parse(readFileSync(join(snapshotsDerivedRight(), 'v1.json'), 'utf8')),
    );
    expect((await runGate(dir, policy)).stdout).toBe('Snapshots are up to date.\n');
  });

  it('answers a policy file it cannot use with its error and exit 2', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'policy-')), 'versions.json');
    writeFileSync(file, '{"versions": []}');
    const run = await runGate(join(repoRoot, 'openapi'), file);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('API_VERSIONS_FILE');
  });
});
