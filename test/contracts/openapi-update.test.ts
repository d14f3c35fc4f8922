import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/paths.mjs';

const committed = join(repoRoot, 'openapi');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `npm run openapi:update` without its build step (npm test has built dist/ already), on a copy of the snapshots. */
function runUpdate(snapshots: string, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['scripts/openapi-update.mjs', '--snapshots', snapshots, ...args],
      { cwd: repoRoot },
      (err, stdout, stderr) => {
        resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr });
      },
    );
  });
}

/** A copy of the committed snapshots in which one document was edited, as if the code had changed the other way. */
function snapshotsWith(
  version: number,
  edit: (document: Record<string, unknown>) => void,
): { dir: string; file: string; before: string } {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
  cpSync(committed, dir, { recursive: true });
  const file = join(dir, `v${version}.json`);
  const document = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  edit(document);
  const before = `${JSON.stringify(document, null, 2)}\n`;
  writeFileSync(file, before);
  return { dir, file, before };
}

/**
 * The snapshot lists an order field the code no longer returns: the generated document removed it. Version 2's
 * snapshot, the one the backend generates (version 1's is derived from it by the policy's changes).
 */
function withLegacyField(document: Record<string, unknown>): void {
  const paths = document.paths as Record<
    string,
    {
      get: {
        responses: Record<
          string,
          { content: Record<string, { schema: { properties: Record<string, unknown>; required: string[] } }> }
        >;
      };
    }
  >;
  const schema = paths['/v2/orders/{id}']?.get.responses['200']?.content['application/json']?.schema;
  if (schema === undefined) throw new Error('no v2 order schema in the snapshot');
  schema.properties.legacy = { type: 'string' };
  schema.required.push('legacy');
}

describe('npm run openapi:update', () => {
  it('refuses a breaking difference with exit 1, lists it, and leaves the snapshot as it was', async () => {
    const { dir, file, before } = snapshotsWith(2, withLegacyField);
    const run = await runUpdate(dir);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      'v2.json: BREAKING: [Removed] property `legacy` in Response 200 content (application/json)',
    );
    expect(run.stderr).toMatch(/^Refused: the differences marked BREAKING would break clients/);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('writes a breaking difference with --allow-breaking', async () => {
    const { dir, file } = snapshotsWith(2, withLegacyField);
    const run = await runUpdate(dir, '--allow-breaking');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`updated ${file}`);
    expect(readFileSync(file, 'utf8')).toBe(readFileSync(join(committed, 'v2.json'), 'utf8'));
  });

  it('writes a non-breaking difference, and then finds nothing left to do', async () => {
    const { dir, file } = snapshotsWith(2, (document) => {
      (document.info as Record<string, unknown>).description = 'an older wording';
    });
    const run = await runUpdate(dir);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('v2.json: non-breaking: [Replaced] document metadata (info.description)');
    expect(run.stdout).toContain(`updated ${file}`);
    expect(readFileSync(file, 'utf8')).toBe(readFileSync(join(committed, 'v2.json'), 'utf8'));
    const again = await runUpdate(dir);
    expect(again).toEqual({ code: 0, stdout: 'Snapshots are up to date.\n', stderr: '' });
  });

  it('answers an unknown option with its usage and exit 2', async () => {
    const run = await runUpdate(committed, '--force');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("Unknown option '--force'");
    expect(run.stderr).toContain('usage: npm run openapi:update [-- --allow-breaking]');
  });
});
