/**
 * `kubectl kustomize <dir>`, exactly as `kubectl apply -k <dir>` renders it (no extra flags), parsed into
 * objects. kubectl is not an npm package: test/tools/tools.mjs says whether a usable one is on PATH (kustomize
 * v5), and the rendering tests run through describeWithTool (skipped with the reason, failed under CI=true).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
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
