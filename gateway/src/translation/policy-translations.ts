import { compileTranslations, type CompiledTranslations } from './compile.js';
import type { VersionChange } from './changes.js';
import type { ChangeModules } from './modules.js';
import type { TranslationLimits } from './module-step.js';
import type { ListedResource } from './templates.js';

/**
 * A policy's translations, compiled when it is activated: as the gateway serves them, and as declared. They differ
 * only while a version is compared with the code it replaces (`compare`, docs/declared-versions.md#comparing-a-declaration-with-the-code-it-replaces):
 * the gateway serves that version from the backend's own route, and the comparison translates by its declarations.
 */

interface DeclaredEntry {
  readonly version: number;
  readonly successor?: number | undefined;
  readonly changes?: readonly VersionChange[] | undefined;
  /** `compare` (versions/compare.ts): only whether it is set matters here. */
  readonly compare?: object | undefined;
}

/**
 * The versions as the gateway serves them: a version with `compare` is served by the backend's own route, as before
 * it was declared, so its changes apply to none of its requests; a version declared relative to it is served from
 * it (the chain ends there).
 */
function servedVersions<Entry extends DeclaredEntry>(versions: readonly Entry[]): readonly Entry[] {
  // Its changes still say what it differs in (the guide, the comparison): only the serving ignores them.
  return versions.map((entry) => (entry.compare === undefined ? entry : { ...entry, changes: undefined }));
}

/** A policy's translations: as the gateway serves them, and as declared (what a comparison translates by). */
export interface PolicyTranslations {
  /** Its versions declared as changes, a version with `compare` left out: it is served by its own route. */
  readonly served: CompiledTranslations;
  /** Every version's declarations as written; `served` itself when no version has `compare`. */
  readonly declared: CompiledTranslations;
}

/** Compiles a validated policy's translations (translation/compile.ts), served and declared. */
export function compilePolicyTranslations(
  policy: { readonly versions: readonly DeclaredEntry[]; readonly resources: readonly ListedResource[] },
  modules?: ChangeModules,
  limits?: TranslationLimits,
): PolicyTranslations {
  if (!policy.versions.some((entry) => entry.compare !== undefined)) {
    const compiled = compileTranslations(policy, modules, limits);
    return { served: compiled, declared: compiled };
  }
  return {
    served: compileTranslations({ ...policy, versions: servedVersions(policy.versions) }, modules, limits),
    declared: compileTranslations(policy, modules, limits),
  };
}
