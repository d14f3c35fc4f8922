// The OpenAPI snapshot gate: a build tool, not part of the running backend (the image ships dist/src only).
// `npm run openapi:update` (scripts/openapi-update.mjs) runs its compiled form; the contract tests import it.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
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
export async function generateDocuments(
  presenters: ReadonlyMap<number, OrderPresenter> = orderPresenters,
): Promise<Map<number, object>> {
  const app = await buildApp({ logger: createLogger('silent', 'openapi'), clock: Date.now, presenters });
  try {
    const documents = new Map<number, object>();
    for (const version of presenters.keys()) {
      const response = await app.inject({ method: 'GET', url: documentPaths(version)[0] });
      if (response.statusCode !== 200)
        throw new Error(`GET ${documentPaths(version)[0]} answered ${response.statusCode}`);
      documents.set(version, response.json<object>());
    }
    return documents;
  } finally {
    await app.close();
  }
}

/** What the gate reports of one difference (the classifier's structured position is for the migration guide). */
type GateChange = Pick<ContractChange, 'compatibility' | 'description' | 'path'>;

/**
 * The versions the policy declares as changes (docs/behaviour.md#contract-guard): the backend does not serve
 * their documents, the gateway derives them from a successor's. The gate derives them the same way and
 * holds the committed snapshot to that. Built from the policy file by the caller (the gateway's derivation).
 */
export interface TranslatedVersions {
  readonly versions: readonly number[];
  /**
   * Version n's document, from the document of the version the chain ends at (`from`); undefined when that has none.
   * `problems`: what the version's own declarations claim that the documents do not show (each one breaking).
   */
  derive(
    version: number,
    documentOf: (version: number) => object | undefined,
  ): { from: number; document: object | undefined; problems?: readonly string[] };
}

/** How one version's document (generated, or derived for a translated version) differs from its committed snapshot. */
export interface SnapshotDiff {
  version: number;
  file: string;
  /** The text to commit: the generated or derived document, or undefined when the version has none any more. */
  generated: string | undefined;
  /** The version whose document this one is derived from (by the policy's changes); undefined for a generated one. */
  derivedFrom: number | undefined;
  /**
   * Nothing to write: the generated text equals the committed one byte for byte; a derived document equals it as JSON.
   */
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

function parsed(text: string | undefined): object | undefined {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as object;
  } catch {
    return undefined;
  }
}

/** The differences between a snapshot and its document, classified; an empty list means formatting only. */
function classify(
  version: number,
  committed: string | undefined,
  document: object | undefined,
  derivedFrom: number | undefined,
): GateChange[] {
  if (document === undefined) {
    if (derivedFrom !== undefined)
      return [
        {
          compatibility: 'breaking',
          description: `version ${version}'s document cannot be derived: no document of version ${derivedFrom}`,
          path: '',
        },
      ];
    return [
      {
        compatibility: 'breaking',
        description: `version ${version} is no longer served: every endpoint of it is removed`,
        path: '',
      },
    ];
  }
  if (committed === undefined)
    return [
      {
        compatibility: 'non-breaking',
        description: `version ${version} is new: its document has no snapshot yet`,
        path: '',
      },
    ];
  const before = parsed(committed);
  if (before === undefined) return [{ compatibility: 'breaking', description: 'the snapshot is not JSON', path: '' }];
  const changes = compareDocuments(before, document);
  return changes.length === 0
    ? [{ compatibility: 'non-breaking', description: 'formatting only: the documents are equal as JSON', path: '' }]
    : changes;
}

/**
 * Compares every document with its snapshot in `dir`, and every snapshot with what there is: the backend's
 * generated document of each version it serves that is not translated, and for each translated version the
 * document derived from the newest one (as this update leaves it: generated, else committed). A translated
 * version's own document from the backend, where it still serves one, is not compared: the declarations are.
 */
export async function diffSnapshots(
  dir: string,
  presenters?: ReadonlyMap<number, OrderPresenter>,
  translated?: TranslatedVersions,
): Promise<SnapshotDiff[]> {
  const generated = await generateDocuments(presenters);
  const translatedVersions = new Set(translated?.versions ?? []);
  for (const version of translatedVersions) generated.delete(version);
  const versions = [...new Set([...generated.keys(), ...translatedVersions, ...committedVersions(dir)])].sort(
    (a, b) => a - b,
  );
  const documentOf = (version: number): object | undefined =>
    generated.get(version) ?? parsed(readCommitted(snapshotFile(dir, version)));
  return versions.map((version) => {
    const file = snapshotFile(dir, version);
    const committed = readCommitted(file);
    let document: object | undefined;
    let derivedFrom: number | undefined;
    let unchanged: boolean;
    let problems: GateChange[] = [];
    let same = false;
    if (translatedVersions.has(version) && translated !== undefined) {
      const derived = translated.derive(version, documentOf);
      document = derived.document;
      derivedFrom = derived.from;
      problems = (derived.problems ?? []).map((description) => ({ compatibility: 'breaking', description, path: '' }));
      same = document !== undefined && isDeepStrictEqual(parsed(committed), document);
      unchanged = same && problems.length === 0;
    } else {
      document = generated.get(version);
      unchanged = committed === (document === undefined ? undefined : formatDocument(document));
    }
    const text = document === undefined ? undefined : formatDocument(document);
    return {
      version,
      file,
      generated: text,
      derivedFrom,
      unchanged,
      changes: unchanged ? [] : [...problems, ...(same ? [] : classify(version, committed, document, derivedFrom))],
    };
  });
}

/**
 * One line per difference, breaking ones first, as the test and `npm run openapi:update` print them (paths relative to
 * the working directory).
 */
export function describeDiffs(diffs: readonly SnapshotDiff[]): string {
  const lines: string[] = [];
  for (const diff of diffs) {
    const ordered = [...diff.changes].sort(
      (a, b) => Number(b.compatibility === 'breaking') - Number(a.compatibility === 'breaking'),
    );
    for (const change of ordered) {
      const derived =
        diff.derivedFrom === undefined ? '' : ` (derived from v${diff.derivedFrom} by the policy's changes)`;
      lines.push(
        `${relative(process.cwd(), diff.file)}${derived}: ` +
          `${change.compatibility === 'breaking' ? 'BREAKING' : 'non-breaking'}: ` +
          `${change.description}${change.path === '' ? '' : ` (at ${change.path})`}`,
      );
    }
  }
  return lines.join('\n');
}

export function hasBreaking(diffs: readonly SnapshotDiff[]): boolean {
  return diffs.some((diff) => diff.changes.some((change) => change.compatibility === 'breaking'));
}

/** Writes the generated and derived documents over the snapshots and removes those of versions that have none. */
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
