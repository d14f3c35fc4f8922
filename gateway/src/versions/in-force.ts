import type { Clock } from '@version-router/platform/clock';
import { compilePolicyTranslations } from '../translation/policy-translations.js';
import { defaultTranslationLimits, type CompiledTranslations } from '../translation/compile.js';
import type { TranslationLimits } from '../translation/module-step.js';
import { problemAtReload } from './load-rules.js';
import type { PolicySource } from './policy-file.js';
import { createVersionPolicy, type VersionPolicy } from './policy.js';
import { createResourceRouter, type ResourceRouter } from './router.js';

export type ReloadResult = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/**
 * The policy in force: the validated policy (its versions declared as changes compiled), the router built from its
 * resources, the routes that serve the translated versions, and which file content it is, replaced together on a
 * reload. A request
 * reads `current` once, on arrival, so a reload never changes the policy under a request in flight.
 */
export interface PolicyInForce<Routes = unknown> {
  readonly current: {
    readonly policy: VersionPolicy;
    readonly router: ResourceRouter;
    /** The forwarding of those versions' routes (the app's `prepare`: proxy/translated/), built when activated. */
    readonly translatedRoutes: Routes;
    /** Which content this is (policy-file.ts `policyDigest`): the file's and its modules'. */
    readonly sha256: string;
    /** The file's own bytes' digest, which the file watch compares. */
    readonly fileSha256: string;
  };
  /**
   * Re-reads the policy file (and its modules); an invalid one changes nothing and says why. SIGHUP,
   * `POST /-/reload` and the file watch (watch.ts) all come through here, one reload at a time. Beyond the file's
   * own rules, the moment matters (load-rules.ts): a removed default_version, a new brownout window too soon for its
   * notice, a backdated announcement or move of the default is refused.
   */
  reload(): Promise<ReloadResult>;
  /**
   * Reads the policy file (and its modules) and says whether a reload would apply it: nothing is changed, logged or
   * counted.
   */
  validate(): Promise<ReloadResult>;
}

export interface PolicyInForceOptions<Routes> {
  /** The policy main.ts read at start. */
  readonly initial: PolicySource;
  /** Reads and validates the policy file again, its modules loaded; rejects with the reason. */
  readonly read: () => Promise<PolicySource>;
  /** Hears every reload's outcome (log, metrics). */
  readonly onReload: (result: ReloadResult) => void;
  readonly clock: Clock;
  /** TRANSLATION_MAX_DEPTH and TRANSLATION_MAX_BYTES, which a module's results are held to. */
  readonly limits?: TranslationLimits;
  /** Builds the forwarding of a policy's translated routes (the app's: proxy/translated/forwarding.ts). */
  readonly prepare: (translations: CompiledTranslations) => Routes;
}

const refusal = (err: unknown): ReloadResult => ({
  ok: false,
  reason: err instanceof Error ? err.message : String(err),
});

/** Holds the policy in force; each policy is compiled once, when it is activated. */
export function createPolicyInForce<Routes>({
  initial,
  read,
  onReload,
  clock,
  limits = defaultTranslationLimits(),
  prepare,
}: PolicyInForceOptions<Routes>): PolicyInForce<Routes> {
  const activate = ({ file, sha256, modules }: PolicySource, fileSha256: string): PolicyInForce<Routes>['current'] => {
    // Its versions declared as changes are compiled now, once (translation/compile.ts).
    const translations = compilePolicyTranslations(file, modules, limits);
    const policy = createVersionPolicy(file, translations);
    return {
      policy,
      router: createResourceRouter(file.resources, policy.versions, policy.schemes),
      translatedRoutes: prepare(translations.served),
      sha256,
      fileSha256,
    };
  };
  let current = activate(initial, initial.fileSha256 ?? initial.sha256);
  let queue: Promise<unknown> = Promise.resolve();

  /** The file's content, validated against the rules of the moment and the policy in force; rejects with why not. */
  const readValid = async (): Promise<PolicySource> => {
    const source = await read();
    const problem = problemAtReload(source.file, clock(), current.policy);
    if (problem !== undefined) throw new Error(`API_VERSIONS_FILE is invalid at ${problem.path}: ${problem.message}`);
    return source;
  };

  const reloadOnce = async (): Promise<ReloadResult> => {
    let result: ReloadResult;
    try {
      const source = await readValid();
      current = activate(source, source.fileSha256 ?? source.sha256);
      result = { ok: true };
    } catch (err) {
      result = refusal(err);
    }
    onReload(result);
    return result;
  };

  return {
    get current() {
      return current;
    },
    reload() {
      const next = queue.then(reloadOnce);
      queue = next;
      return next;
    },
    async validate() {
      try {
        const source = await readValid();
        compilePolicyTranslations(source.file, source.modules, limits);
        return { ok: true };
      } catch (err) {
        return refusal(err);
      }
    },
  };
}
