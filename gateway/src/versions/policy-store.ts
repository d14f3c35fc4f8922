import { createResourceRouter, type ResourceRouter } from '../resources/router.js';
import type { PolicyFile } from './policy-file.js';
import { createVersionPolicy, type VersionPolicy } from './policy.js';

/** A validated policy and the router built from its resources: replaced together on a reload. */
interface ActivePolicy {
  readonly policy: VersionPolicy;
  readonly router: ResourceRouter;
}

export type ReloadResult = { readonly ok: true } | { readonly ok: false; readonly reason: string };

export interface PolicyStore {
  /** The policy requests are answered with now; a request reads it once, on arrival. */
  readonly current: ActivePolicy;
  /** Re-reads the policy file; an invalid one changes nothing and says why. */
  reload(): ReloadResult;
}

function activate(file: PolicyFile): ActivePolicy {
  const policy = createVersionPolicy(file);
  return { policy, router: createResourceRouter(policy.resources, policy.versions, policy.schemes) };
}

/**
 * Holds the active policy. `read` returns the validated policy file or throws an Error whose message
 * names the file and the JSON path of the problem; `onReload` hears every outcome (log, metrics).
 */
export function createPolicyStore(initial: PolicyFile, read: () => PolicyFile, onReload: (result: ReloadResult) => void): PolicyStore {
  let current = activate(initial);
  return {
    get current() {
      return current;
    },
    reload() {
      let result: ReloadResult;
      try {
        current = activate(read());
        result = { ok: true };
      } catch (err) {
        result = { ok: false, reason: err instanceof Error ? err.message : String(err) };
      }
      onReload(result);
      return result;
    },
  };
}
