// The tools the tests run that npm cannot install, and how to tell whether one is there. Read by
// test/tools/test-tools.mjs (which `npm test` runs first, to install or report them), test/tools/test-ops.mjs and
// platform/test/support/tools.ts (the vitest files that need one). What it means for a user:
// docs/testing.md#the-tools-npm-test-installs.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** By name: the executables that must be on PATH, the Debian package that provides them, and what needs them. */
export const tools = Object.freeze({
  prometheus: {
    binaries: ['promtool', 'prometheus'],
    debianPackage: 'prometheus',
    neededBy:
      'the promtool checks (npm run test:ops, test/ops/prometheus-fleet-config.test.ts) and the real-Prometheus ' +
      'test (test/ops/prometheus.test.ts)',
  },
  jq: {
    binaries: ['jq'],
    debianPackage: 'jq',
    neededBy:
      "the runbook's deprecated-share one-liner, run as written (gateway/test/status/runbook-share.process.test.ts)",
  },
  kubectl: {
    binaries: ['kubectl'],
    debianPackage: 'kubernetes-client',
    neededBy: 'the Kubernetes manifest checks (kubectl kustomize)',
    // deploy/kubernetes uses kustomize v5 fields (`labels`, `replicas`); Debian 12's kubectl 1.20 bundles v2.
    tooOld: kubectlTooOld,
  },
});

const MIN_KUSTOMIZE_MAJOR = 5;

/** Why the kubectl at `path` cannot render deploy/kubernetes, or undefined when it can. */
function kubectlTooOld(path) {
  const probe = spawnSync(path, ['version', '--client', '-o', 'json'], { encoding: 'utf8', timeout: 30_000 });
  if (probe.error !== undefined || probe.status !== 0)
    return `${path} did not run (${probe.error?.message ?? probe.stderr.trim()})`;
  let version;
  try {
    version = JSON.parse(probe.stdout);
  } catch {
    return `${path} printed no version`;
  }
  const major = Number(/^v(\d+)\./.exec(version.kustomizeVersion ?? '')?.[1] ?? 0);
  if (major >= MIN_KUSTOMIZE_MAJOR) return undefined;
  return (
    `${path} ${version.clientVersion?.gitVersion ?? ''} bundles kustomize ` +
    `${version.kustomizeVersion ?? '(older than v2)'}, deploy/kubernetes needs v${MIN_KUSTOMIZE_MAJOR} (kubectl ` +
    `1.27 or newer; Debian 13's kubernetes-client has it)`
  );
}

/** The command that installs a tool (as root). */
export function installCommand(name) {
  return `apt-get install -y --no-install-recommends ${tools[name].debianPackage}`;
}

/** The absolute path of an executable named `binary` on the PATH given, or undefined. */
export function findOnPath(binary, path = process.env.PATH ?? '') {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, binary);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

/** The executables of a tool that are not on the PATH given. */
function missingBinaries(name, path = process.env.PATH ?? '') {
  return tools[name].binaries.filter((binary) => findOnPath(binary, path) === undefined);
}

/**
 * Why the checks that need a tool cannot run here, with how to enable them; undefined when the tool is there.
 * `CI=true` in `env` makes a missing tool a failure, not a reason to skip: the caller throws it.
 */
export function toolStatus(name, env = process.env) {
  const missing = missingBinaries(name, env.PATH ?? '');
  const tooOld =
    missing.length === 0 ? tools[name].tooOld?.(findOnPath(tools[name].binaries[0], env.PATH ?? '')) : undefined;
  if (missing.length === 0 && tooOld === undefined) return { available: true };
  if (tooOld !== undefined)
    return {
      available: false,
      reason: `${tooOld}; to run ${tools[name].neededBy}, install a newer one`,
      mustFail: env.CI === 'true',
    };
  const reason =
    `${missing.join(' and ')} not found on PATH; to run ${tools[name].neededBy}, ` +
    `install Debian's ${tools[name].debianPackage} (\`sudo ${installCommand(name)}\`) or run \`npm test\` as root, ` +
    `which installs it`;
  return { available: false, reason, mustFail: env.CI === 'true' };
}
