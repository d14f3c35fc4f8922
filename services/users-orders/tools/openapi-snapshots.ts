// The OpenAPI snapshot gate: a build tool, not part of the running backend (the image ships dist/src only).
// `npm run openapi:update` (scripts/openapi-update.mjs) runs its compiled form; the contract tests import it.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { createLogger } from '@version-router/platform/logger';
import { buildApp } from '../src/app.js';
import { compareDocuments, type ContractChange } from '@version-router/platform/compatibility';
import { documentPaths } from '../src/contract/openapi.js';
import { orderPresenters, type OrderPresenter } from '../src/orders/presenters.js';

/** The committed document of each version: `openapi/v{n}.json`, formatted so a review shows line diffs. */
function snapshotFile(dir: string, version: number): string {
  return join(dir, `v${version}.json`);
}

function formatDocument(document: object): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

/**
 * Each version's document as the backend publishes it, from a fresh app (documents do not depend on data).
 * Tests pass other presenters to see how a change would be judged.
 */
export async function generateDocuments(presenters: ReadonlyMap<number, OrderPresenter> = orderPresenters): Promise<Map<number, object>> {
  const app = await buildApp({ logger: createLogger('silent', 'openapi'), clock: Date.now, presenters });
  try {
    const documents = new Map<number, object>();
    for (const version of presenters.keys()) {
      const response = await app.inject({ method: 'GET', url: documentPaths(version)[0] });
      if (response.statusCode !== 200) throw new Error(`GET ${documentPaths(version)[0]} answered ${response.statusCode}`);
      documents.set(version, response.json<object>());
    }
    return documents;
  } finally {
    await app.close();
  }
}

/** What the gate reports of one difference (the classifier's structured position is for the migration guide). */
type GateChange = Pick<ContractChange, 'compatibility' | 'description' | 'path'>;

/** How one version's generated document differs from its committed snapshot. */
export interface SnapshotDiff {
  version: number;
  file: string;
  /** The text to commit: the generated document, or undefined when the version is no longer generated. */
  generated: string | undefined;
  /** The generated text equals the committed one byte for byte. */
  unchanged: boolean;
  changes: GateChange[];
}

function committedVersions(dir: string): number[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((name) => /^v([1-9][0-9]*)\.json$/.exec(name)?.[1] ?? []).map(Number);
}

function readCommitted(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** Compares every generated document with its snapshot in `dir`, and every snapshot with what is generated. */
export async function diffSnapshots(dir: string, presenters?: ReadonlyMap<number, OrderPresenter>): Promise<SnapshotDiff[]> {
  const generated = await generateDocuments(presenters);
  const versions = [...new Set([...generated.keys(), ...committedVersions(dir)])].sort((a, b) => a - b);
  return versions.map((version) => {
    const file = snapshotFile(dir, version);
    const document = generated.get(version);
    const text = document === undefined ? undefined : formatDocument(document);
    const committed = readCommitted(file);
    if (committed === text) return { version, file, generated: text, unchanged: true, changes: [] };
    let changes: GateChange[];
    if (document === undefined) {
      changes = [{ compatibility: 'breaking', description: `version ${version} is no longer served: every endpoint of it is removed`, path: '' }];
    } else if (committed === undefined) {
      changes = [{ compatibility: 'non-breaking', description: `version ${version} is new: its document has no snapshot yet`, path: '' }];
    } else {
      changes = compareDocuments(JSON.parse(committed) as object, document);
      if (changes.length === 0) changes = [{ compatibility: 'non-breaking', description: 'formatting only: the documents are equal as JSON', path: '' }];
    }
    return { version, file, generated: text, unchanged: false, changes };
  });
}

/** One line per difference, breaking ones first, as the test and `npm run openapi:update` print them (paths relative to the working directory). */
export function describeDiffs(diffs: readonly SnapshotDiff[]): string {
  const lines: string[] = [];
  for (const diff of diffs) {
    const ordered = [...diff.changes].sort((a, b) => Number(b.compatibility === 'breaking') - Number(a.compatibility === 'breaking'));
    for (const change of ordered) {
      lines.push(`${relative(process.cwd(), diff.file)}: ${change.compatibility === 'breaking' ? 'BREAKING' : 'non-breaking'}: ${change.description}${change.path === '' ? '' : ` (at ${change.path})`}`);
    }
  }
  return lines.join('\n');
}

export function hasBreaking(diffs: readonly SnapshotDiff[]): boolean {
  return diffs.some((diff) => diff.changes.some((change) => change.compatibility === 'breaking'));
}

/** Writes the generated documents over the snapshots and removes those of versions no longer generated. */
export function writeSnapshots(diffs: readonly SnapshotDiff[]): string[] {
  const touched: string[] = [];
  for (const diff of diffs) {
    if (diff.unchanged) continue;
    if (diff.generated === undefined) {
      rmSync(diff.file);
    } else {
      mkdirSync(dirname(diff.file), { recursive: true });
      writeFileSync(diff.file, diff.generated);
    }
    touched.push(diff.file);
  }
  return touched;
}
