/**
 * `kubectl kustomize <dir>`, exactly as `kubectl apply -k <dir>` renders it (no extra flags), parsed into
 * objects. kubectl is not an npm package: `npm test` installs Debian's `kubernetes-client` where it runs as
 * root; elsewhere the rendering tests are skipped with the reason, and fail instead under CI=true.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from '../../scripts/paths.mjs';

const INSTALL = 'apt-get install -y kubernetes-client';
/** The kustomization fields used here (`labels`, `replicas`, per-generator options) need kustomize v5: kubectl 1.27+. */
const MIN_KUSTOMIZE_MAJOR = 5;

export type Kubectl = { found: true; bin: string } | { found: false; reason: string };

/** kubectl on PATH (or KUBECTL), with a kustomize new enough for deploy/kubernetes. */
export function findKubectl(): Kubectl {
  const bin = process.env.KUBECTL ?? 'kubectl';
  const probe = spawnSync(bin, ['version', '--client', '-o', 'json'], { encoding: 'utf8', timeout: 30_000 });
  if (probe.error || probe.status !== 0) {
    const why = probe.error?.message ?? `exit code ${probe.status}: ${probe.stderr.trim()}`;
    return { found: false, reason: `kubectl is needed to render deploy/kubernetes but ${JSON.stringify(bin)} did not run (${why}); install it: ${INSTALL}` };
  }
  const version = JSON.parse(probe.stdout) as { kustomizeVersion?: string; clientVersion?: { gitVersion?: string } };
  const major = Number(/^v(\d+)\./.exec(version.kustomizeVersion ?? '')?.[1] ?? 0);
  if (major < MIN_KUSTOMIZE_MAJOR) {
    return {
      found: false,
      reason:
        `${bin} ${version.clientVersion?.gitVersion ?? '(unknown version)'} bundles ${version.kustomizeVersion === undefined ? 'an older kustomize' : `kustomize ${version.kustomizeVersion}`}; ` +
        `deploy/kubernetes needs kustomize v${MIN_KUSTOMIZE_MAJOR} (kubectl 1.27 or newer; Debian 13's \`${INSTALL}\`)`,
    };
  }
  return { found: true, bin };
}

/** A rendered object: what every manifest has, the rest left to the schema check. */
export interface ManifestObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

/** Renders a kustomization (a directory relative to the repository root); throws with kubectl's message. */
export function render(bin: string, directory: string): ManifestObject[] {
  const result = spawnSync(bin, ['kustomize', join(repoRoot, directory)], { encoding: 'utf8', timeout: 60_000 });
  if (result.error || result.status !== 0) {
    throw new Error(`kubectl kustomize ${directory} failed: ${result.error?.message ?? result.stderr.trim()}`);
  }
  return parseAllDocuments(result.stdout).map((document) => {
    if (document.errors.length > 0) throw new Error(`kubectl kustomize ${directory}: ${document.errors[0]?.message}`);
    return document.toJS() as ManifestObject;
  });
}
