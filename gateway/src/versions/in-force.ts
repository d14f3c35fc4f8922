import type { Clock } from '@version-router/platform/clock';
import { problemAtReload } from './load-rules.js';
import type { PolicySource } from './policy-file.js';
import { createVersionPolicy, type VersionPolicy } from './policy.js';
import { createResourceRouter, type ResourceRouter } from './router.js';

export type ReloadResult = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/**
 * The policy in force: the validated policy, the router built from its resources and which file content it
 * is, replaced together on a reload. A request reads `current` once, on arrival, so a reload never changes
 * the policy under a request in flight.
 */
export interface PolicyInForce {
  readonly current: {
    readonly policy: VersionPolicy;
    readonly router: ResourceRouter;
    /** Which file content this is (policy-file.ts `policyDigest`). */
    readonly sha256: string;
  };
  /**
   * Re-reads the policy file; an invalid one changes nothing and says why. SIGHUP, `POST /-/reload` and the
   * file watch (watch.ts) all come through here. Beyond the file's own rules, the moment matters
   * (load-rules.ts): a removed default_version, a new brownout window too soon for its notice, a backdated
   * announcement or move of the default is refused.
   */
  reload(): ReloadResult;
  /** Reads the policy file and says whether a reload would apply it: nothing is changed, logged or counted. */
  validate(): ReloadResult;
}

function activate({ file, sha256 }: PolicySource): PolicyInForce['current'] {
  const policy = createVersionPolicy(file);
  return { policy, router: createResourceRouter(policy.resources, policy.versions, policy.schemes), sha256 };
}

/**
 * Holds the policy in force. `read` returns the validated policy file or throws an Error whose message names
 * the file and the JSON path of the problem; `onReload` hears every outcome (log, metrics).
 */
export function createPolicyInForce(
  initial: PolicySource,
  read: () => PolicySource,
  onReload: (result: ReloadResult) => void,
  clock: Clock,
): PolicyInForce {
  let current = activate(initial);
  /** The file's content, validated against the rules of the moment and the policy in force; throws why not. */
  const readValid = (): PolicySource => {
    const source = read();
    const problem = problemAtReload(source.file, clock(), current.policy);
    if (problem !== undefined) throw new Error(`API_VERSIONS_FILE is invalid at ${problem.path}: ${problem.message}`);
    return source;
  };
  const refusal = (err: unknown): ReloadResult => ({
    ok: false,
    reason: err instanceof Error ? err.message : String(err),
  });
  return {
    get current() {
      return current;
    },
    reload() {
      let result: ReloadResult;
      try {
        current = activate(readValid());
        result = { ok: true };
      } catch (err) {
        result = refusal(err);
      }
      onReload(result);
      return result;
    },
    validate() {
      try {
        readValid();
        return { ok: true };
      } catch (err) {
        return refusal(err);
      }
    },
  };
}
