/**
 * `kubectl kustomize <dir>`, exactly as `kubectl apply -k <dir>` renders it (no extra flags), parsed into
 * objects. kubectl is not an npm package: test/tools/tools.mjs says whether a usable one is on PATH (kustomize
 * v5), and the rendering tests run through describeWithTool (skipped with the reason, failed under CI=true).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { repoRoot } from '../../scripts/paths.mjs';

/** A rendered object: what every manifest has, the rest left to the schema check. */
export interface ManifestObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

/** Renders a kustomization (a directory relative to the repository root); throws with kubectl's message. */
export function render(directory: string): ManifestObject[] {
  const result = spawnSync('kubectl', ['kustomize', join(repoRoot, directory)], { encoding: 'utf8', timeout: 60_000 });
  if (result.error || result.status !== 0) {
    throw new Error(`kubectl kustomize ${directory} failed: ${result.error?.message ?? result.stderr.trim()}`);
  }
  return parseAllDocuments(result.stdout).map((document) => {
    if (document.errors.length > 0) throw new Error(`kubectl kustomize ${directory}: ${document.errors[0]?.message}`);
    return document.toJS() as ManifestObject;
  });
}

/** The fields of a kustomization that name other kustomizations or files by path. */
const PATH_FIELDS = ['resources', 'components', 'transformers', 'generators'] as const;

/**
 * Renders a copy of a kustomization (a directory relative to the repository root) after `edit` changed its
 * kustomization.yaml, as an operator's edit of it would render: its files copied to a temporary directory, its
 * references to other directories (`../…`) pointed back at the originals.
 */
export function renderEdited(
  directory: string,
  edit: (kustomization: Record<string, unknown>) => void,
): ManifestObject[] {
  const original = join(repoRoot, directory);
  const copy = mkdtempSync(join(tmpdir(), 'kustomization-'));
  try {
    cpSync(original, copy, { recursive: true });
    const file = join(copy, 'kustomization.yaml');
    const kustomization = parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    for (const field of PATH_FIELDS) {
      const entries = kustomization[field];
      if (!Array.isArray(entries)) continue;
      kustomization[field] = entries.map((entry: unknown) =>
        typeof entry === 'string' && entry.startsWith('..') ? relative(copy, resolve(original, entry)) : entry,
      );
    }
    edit(kustomization);
    writeFileSync(file, stringify(kustomization));
    return render(relative(repoRoot, copy));
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}
