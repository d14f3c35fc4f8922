import { translationsOf } from '../translation/engine.js';
import { isRawNumber, readJson, unmarkedString } from '../translation/json-text.js';
import { TranslationRefusal } from '../translation/refusal.js';
import type { VersionChange } from '../versions/changes.js';
import type { CompareSettings } from '../versions/compare.js';

/**
 * What the comparison needs of the translation engine, in one place: which versions the gateway serves by
 * translation while a version is compared, and a successor's answer translated back by a version's declarations,
 * read and compared as the engine reads bodies.
 */

interface DeclaredEntry {
  readonly version: number;
  readonly successor?: number | undefined;
  readonly changes?: readonly VersionChange[] | undefined;
  readonly compare?: CompareSettings | undefined;
}

const servedByPolicy = new WeakMap<readonly DeclaredEntry[], readonly DeclaredEntry[]>();

/**
 * The versions as the gateway serves them: a version with `compare` is served by the backend's own route, as before
 * it was declared, so its changes apply to none of its requests; a version declared relative to it is served from
 * it (the chain ends there). The same array for the same policy, so what is compiled per policy stays compiled.
 */
export function servedVersions<Entry extends DeclaredEntry>(versions: readonly Entry[]): readonly Entry[] {
  if (!versions.some((entry) => entry.compare !== undefined)) return versions;
  let served = servedByPolicy.get(versions) as readonly Entry[] | undefined;
  if (served === undefined) {
    served = versions.map((entry) => {
      if (entry.compare === undefined) return entry;
      // Its changes still say what it differs in (the guide, the comparison): only the serving ignores them.
      return { ...entry, changes: undefined };
    });
    servedByPolicy.set(versions, served);
  }
  return served;
}

/** How a compared version's successor answers are turned into its own by the declarations. */
export interface DeclaredTranslation {
  /** The version the backend would serve it from without `compare`: its successor, or the end of the chain. */
  readonly served: number;
  /** Short hash of the declarations: counts start again when they change. */
  readonly digest: string;
  /** A successor's JSON body of the resource translated back; throws ComparisonRefusal where the gateway would 502. */
  backward(template: string, body: unknown): unknown;
}

/** A successor answer the gateway would refuse to translate (a 502 on a translated route): its reason. */
export class ComparisonRefusal extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** What the declarations of `version` in the policy (`versions`, as written) make of its successor's answers. */
export function declaredTranslation(
  versions: readonly DeclaredEntry[],
  version: number,
): DeclaredTranslation | undefined {
  const translation = translationsOf(versions).get(version);
  if (translation === undefined) return undefined;
  return {
    served: translation.served,
    digest: translation.digest,
    backward(template, body) {
      const resource = translation.resources.get(template);
      if (resource === undefined) return body;
      try {
        return resource.backward(body);
      } catch (error) {
        if (error instanceof TranslationRefusal) throw new ComparisonRefusal(error.reason);
        throw error;
      }
    },
  };
}

/**
 * A JSON text read as the engine reads it (numbers it could not write back kept as their text, keys' order kept);
 * undefined when it is no JSON. Throws ComparisonRefusal('depth') past the depth the gateway translates.
 */
export function readBody(text: string, maxDepth: number): { value: unknown } | undefined {
  try {
    return readJson(text, maxDepth);
  } catch (error) {
    if (error instanceof TranslationRefusal) throw new ComparisonRefusal(error.reason);
    throw error;
  }
}

/** A key or string of a body read by `readBody`, as the body wrote it. */
export const nameOf = (key: string): string => unmarkedString(key);

const RAW_PREFIX = 2;

/** A number of a body read by `readBody` as its text, or undefined for any other value. */
export function numberText(value: unknown): string | undefined {
  if (typeof value === 'number') return String(value);
  return isRawNumber(value) ? value.slice(RAW_PREFIX) : undefined;
}

/** A string of a body read by `readBody` as the body wrote it (numbers kept as text are numbers, not strings). */
export function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' && !isRawNumber(value) ? unmarkedString(value) : undefined;
}
