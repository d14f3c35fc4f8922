import type { CompiledTranslations, RouteTranslation } from '../translation/compile.js';
import { isRawNumber, readJson, unmarkedString } from '../translation/json-text.js';
import { TranslationRefusal } from '../translation/refusal.js';

/**
 * What the comparison needs of the translation engine, in one place: which versions the gateway serves by
 * translation while a version is compared, and a successor's answer translated back by a version's declarations,
 * read and compared as the engine reads bodies.
 */

/** How a compared version's successor answers are turned into its own by the declarations. */
export interface DeclaredTranslation {
  /** The version the backend would serve it from without `compare`: its successor, or the end of the chain. */
  readonly served: number;
  /** Short hash of the declarations: counts start again when they change. */
  readonly digest: string;
  /** The resource as the declarations serve it (its successor's path, its answers); undefined if not listed. */
  route(template: string): RouteTranslation | undefined;
  /**
   * What a translated route makes of the serving version's answer with `status`: this version's status, and the
   * translation of its body when the declarations change it, which throws ComparisonRefusal where the gateway
   * would 502.
   */
  answer(template: string, status: number): { status: number; body: ((body: unknown) => unknown) | undefined };
}

/** A successor answer the gateway would refuse to translate (a 502 on a translated route): its reason. */
export class ComparisonRefusal extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** What the declarations of `version` (`declared`: the policy's, as written) make of its successor's answers. */
export function declaredTranslation(declared: CompiledTranslations, version: number): DeclaredTranslation | undefined {
  const translation = declared.versions.get(version);
  if (translation === undefined) return undefined;
  return {
    served: translation.served,
    digest: translation.digest,
    route: (template) => translation.routes.get(template),
    answer(template, status) {
      const route = translation.routes.get(template);
      if (route === undefined) return { status, body: undefined };
      const plan = route.answer(status);
      const apply = plan.body;
      if (apply === undefined) return { status: plan.status, body: undefined };
      return {
        status: plan.status,
        body(body) {
          try {
            return apply(body);
          } catch (error) {
            if (error instanceof TranslationRefusal) throw new ComparisonRefusal(error.reason);
            throw error;
          }
        },
      };
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
