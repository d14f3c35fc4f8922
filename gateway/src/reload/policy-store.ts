import { createResourceRouter, type RoutedPolicyInForce } from '../resources/router.js';
import type { PolicySource } from '../versions/policy-file.js';
import { createVersionPolicy } from '../versions/policy.js';

/** A validated policy and the router built from its resources: replaced together on a reload. */
type ActivePolicy = RoutedPolicyInForce['current'];

export type ReloadResult = { readonly ok: true } | { readonly ok: false; readonly reason: string };

export interface PolicyStore extends RoutedPolicyInForce {
  /** The policy requests are answered with now; a request reads it once, on arrival. */
  readonly current: ActivePolicy;
  /**
   * Re-reads the policy file; an invalid one changes nothing and says why. SIGHUP, `POST /-/reload` and
   * the file watch (policy-watch.ts) all come through here.
   */
  reload(): ReloadResult;
}

function activate({ file, sha256 }: PolicySource): ActivePolicy {
  const policy = createVersionPolicy(file);
  return { policy, router: createResourceRouter(policy.resources, policy.versions, policy.schemes), sha256 };
}

/**
 * Holds the active policy. `read` returns the validated policy file or throws an Error whose message
 * names the file and the JSON path of the problem; `onReload` hears every outcome (log, metrics).
 */
export function createPolicyStore(initial: PolicySource, read: () => PolicySource, onReload: (result: ReloadResult) => void): PolicyStore {
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
