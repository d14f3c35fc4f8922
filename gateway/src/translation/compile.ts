import { createHash } from 'node:crypto';
import { DEFAULT_TRANSLATION_MAX_BYTES, DEFAULT_TRANSLATION_MAX_DEPTH } from './limits.js';
import { isListedFor, type ListedResource } from './templates.js';
import { bodyStep, inOrder, isObject, unchanged, type Apply, type BodyStep } from './body-plan.js';
import {
  BODY_KINDS,
  LINK_HEADER_FIELD,
  bodyKindOf,
  shortDescription,
  type BodyKind,
  type VersionChange,
} from './changes.js';
import { chainOf, isDeclared, type ChainEntry } from './chain.js';
import { numericValue } from './json-text.js';
import { moduleStep, type TranslationLimits } from './module-step.js';
import type { ChangeModules } from './modules.js';
import { renamedPath, rewriteLinkTargets, stepPaths, type StepPaths } from './paths.js';
import { TranslationRefusal } from './refusal.js';

/**
 * A policy's versions declared as changes, compiled once when the policy is activated (docs/architecture.md "The
 * translation engine"): for each version step and resource what its changes do (`CompiledStep`), and for each
 * version and resource the translation of its requests and answers down the chain to the version the backend
 * serves (`RouteTranslation`). The gateway's routes, the derived documents (derive-document.ts) and the migration
 * guide read these; a request only looks them up.
 */

/** A header a `header` change renames: its name in the successor (lower case) and in this version (as declared). */
interface HeaderRename {
  readonly successor: string;
  readonly own: string;
}

/** One resource in one version step: where the successor serves it, and what changes on the way. */
export interface StepResource {
  /** The resource as this version lists it. */
  readonly template: string;
  /** Where the successor serves it (a `path` change's `to`, else the same template). */
  readonly successorTemplate: string;
  /** Its changes, as declared. */
  readonly changes: readonly VersionChange[];
  /** Its bodies, per kind: 2xx answers and request bodies (`success`), error envelopes (`error`). */
  readonly bodies: Readonly<Record<BodyKind, BodyStep>>;
  /** The successor's status → this version's. */
  readonly statuses: ReadonlyMap<number, number>;
  readonly headers: readonly HeaderRename[];
  /** A `link` of the Link header: its targets name this version. */
  readonly linkHeader: boolean;
}

/** One version declared as changes, and its successor. */
export interface CompiledStep {
  readonly version: number;
  readonly successor: number;
  readonly changes: readonly VersionChange[];
  /** The paths of this API between the two (versions, and the resources a `path` change moved). */
  readonly paths: StepPaths;
  /** Every resource this version lists, by its template. */
  readonly resources: ReadonlyMap<string, StepResource>;
  /** The policy's resources this version does not list (no path of its document). */
  readonly unlisted: readonly string[];
  /** The modules its `module` changes name (a module's schema is part of the derived documents). */
  readonly modules: ChangeModules;
}

/** What an answer of the serving version becomes: this version's status, and its body's translation (if any). */
interface AnswerPlan {
  readonly status: number;
  readonly body: Apply | undefined;
}

/** The headers of an answer (or a request), lower-case names, as reply-from hands them over. */
type Headers = Record<string, string | string[] | number | undefined>;

/** How one resource of a version declared as changes is served: from where, and what changes on the way. */
export interface RouteTranslation {
  readonly version: number;
  readonly template: string;
  readonly served: number;
  readonly servedTemplate: string;
  /** Request bodies, oldest step first; undefined when no step changes them. */
  readonly requestBody: Apply | undefined;
  /** Whether some answer's body changes (so answers with a body are read whole). */
  readonly answerBodies: boolean;
  /** What an answer with the serving version's `status` becomes. */
  answer(status: number): AnswerPlan;
  /** The serving version's answer headers renamed as this version's (in place); throws a collision refusal. */
  readonly answerHeaders: ((headers: Headers) => void) | undefined;
  /** This version's request headers renamed as the serving version's (in place); throws a collision refusal. */
  readonly requestHeaders: ((headers: Headers) => void) | undefined;
  /** The serving version's Link header as this version's, when a step declares its links; else undefined. */
  readonly linkHeader: ((value: string) => string) | undefined;
  /** A Location (or any URL) naming the serving version, as this version's; anything else as it is. */
  readonly location: (url: string) => string;
  /** A request's path below its version (`/orders/x`) as the serving version's (`/purchases/x`). */
  readonly target: (rest: string) => string;
  /** The changes on the way, oldest step first, in a few words each (a trace's attribute). */
  readonly described: readonly string[];
}

/** How a version declared as changes is served. */
export interface VersionTranslation {
  /** The first version down the chain of successors that is not declared as changes: the backend serves it. */
  readonly served: number;
  /** Every resource the version lists, by template. */
  readonly routes: ReadonlyMap<string, RouteTranslation>;
  /** Short hash of the chain's changes (and modules): part of this version's ETags, which change when they do. */
  readonly digest: string;
}

export interface CompiledTranslations {
  /** By version, the versions declared as changes. */
  readonly versions: ReadonlyMap<number, VersionTranslation>;
  /** By version, its step to its successor. */
  readonly steps: ReadonlyMap<number, CompiledStep>;
  /** The steps from `version` to the version serving it, oldest first (none for a version served as itself). */
  chain(version: number): { readonly served: number; readonly steps: readonly CompiledStep[] };
}

/** What compiling needs of a policy: its versions and resources. */
interface PolicyOfTranslations {
  readonly versions: readonly ChainEntry[];
  readonly resources: readonly ListedResource[];
}

/** TRANSLATION_MAX_DEPTH and TRANSLATION_MAX_BYTES when unset. */
export const defaultTranslationLimits = (): TranslationLimits => ({
  maxDepth: DEFAULT_TRANSLATION_MAX_DEPTH,
  maxBytes: DEFAULT_TRANSLATION_MAX_BYTES,
});

const bodyKindOfStatus = (status: number): BodyKind | undefined =>
  status >= 200 && status < 300 ? 'success' : status >= 400 ? 'error' : undefined;

/** An error envelope's `code` (the status, by this API's convention) follows a `status` change. */
function statusCode(from: number, to: number): Apply {
  return (body) => {
    if (!isObject(body) || !Object.hasOwn(body, 'code') || numericValue(body.code) !== from) return body;
    const out: Record<string, unknown> = {};
    for (const key in body) out[key] = key === 'code' ? to : body[key];
    return out;
  };
}

function compileStep(
  entry: ChainEntry & { successor: number },
  resources: readonly ListedResource[],
  modules: ChangeModules,
  limits: TranslationLimits,
): CompiledStep {
  const changes = entry.changes ?? [];
  const renames = changes.flatMap((change) => (change.op === 'path' ? [{ from: change.resource, to: change.to }] : []));
  const paths = stepPaths(entry.version, entry.successor, renames);
  const context = {
    paths,
    moduleStep: (change: Extract<VersionChange, { op: 'module' }>) => {
      const module = modules.get(change.module);
      if (module === undefined) throw new Error(`module ${change.module} was not loaded with its policy`);
      return moduleStep(module, limits);
    },
  };
  const byTemplate = new Map<string, StepResource>();
  for (const { path: template } of resources.filter((resource) => isListedFor(resource, entry.version))) {
    const own = changes.filter((change) => change.resource === template);
    const bodies = Object.fromEntries(
      BODY_KINDS.map((kind) => [
        kind,
        bodyStep(
          own.filter((change) => bodyKindOf(change) === kind),
          context,
        ),
      ]),
    ) as Record<BodyKind, BodyStep>;
    const statuses = new Map<number, number>();
    const headers: HeaderRename[] = [];
    let successorTemplate = template;
    let linkHeader = false;
    for (const change of own) {
      if (change.op === 'status') statuses.set(change.from, change.to);
      else if (change.op === 'header') headers.push({ successor: change.name.toLowerCase(), own: change.to });
      else if (change.op === 'path') successorTemplate = change.to;
      else if (change.op === 'link' && change.field === LINK_HEADER_FIELD) linkHeader = true;
    }
    byTemplate.set(template, { template, successorTemplate, changes: own, bodies, statuses, headers, linkHeader });
  }
  const unlisted = resources.filter((resource) => !isListedFor(resource, entry.version)).map(({ path }) => path);
  return {
    version: entry.version,
    successor: entry.successor,
    changes,
    paths,
    resources: byTemplate,
    unlisted,
    modules,
  };
}

/** Renames headers one step at a time; a header this version's name is already taken by is a collision. */
function headerRenaming(steps: readonly (readonly { from: string; to: string }[])[]): (headers: Headers) => void {
  return (headers) => {
    for (const renames of steps) {
      const found: [string, Headers[string]][] = [];
      for (const { from } of renames) {
        if (headers[from] === undefined) continue;
        found.push([from, headers[from]]);
        headers[from] = undefined;
      }
      for (const [from, value] of found) {
        const to = (renames.find((rename) => rename.from === from) as { to: string }).to;
        if (headers[to] !== undefined) {
          throw new TranslationRefusal('collision', `the header ${from} becomes ${to}, which is there already`);
        }
        headers[to] = value;
      }
    }
  };
}

/** One resource of one version, served down its chain of `steps` (oldest first, each with the resource's step). */
function compileRoute(
  version: number,
  template: string,
  served: number,
  steps: readonly { step: CompiledStep; resource: StepResource }[],
): RouteTranslation {
  const newestFirst = [...steps].reverse();
  const servedTemplate = steps.at(-1)?.resource.successorTemplate ?? template;
  const requestBody = inOrder(steps.map(({ resource }) => resource.bodies.success.forward));

  const planOf = (status: number): AnswerPlan => {
    let current = status;
    const applies: Apply[] = [];
    for (const { resource } of newestFirst) {
      const kind = bodyKindOfStatus(current);
      if (kind !== undefined) applies.push(resource.bodies[kind].backward);
      const mapped = resource.statuses.get(current);
      if (mapped !== undefined) {
        applies.push(statusCode(current, mapped));
        current = mapped;
      }
    }
    const body = inOrder(applies);
    return { status: current, body: body === unchanged ? undefined : body };
  };
  // Only a status some step names can change on the way; any other keeps its kind, so one plan per kind serves it.
  const named = new Set(steps.flatMap(({ resource }) => [...resource.statuses].flat()));
  const plans = new Map([...named].map((status) => [status, planOf(status)]));
  const byKind = { success: planOf(200), error: planOf(500), none: planOf(100) };
  const answerBodies = [...plans.values(), byKind.success, byKind.error].some((plan) => plan.body !== undefined);

  const renames = (direction: 'backward' | 'forward') => {
    const list = (direction === 'backward' ? newestFirst : steps)
      .map(({ resource }) =>
        resource.headers.map(({ successor, own }) =>
          direction === 'backward'
            ? { from: successor, to: own.toLowerCase() }
            : { from: own.toLowerCase(), to: successor },
        ),
      )
      .filter((list) => list.length > 0);
    return list.length === 0 ? undefined : headerRenaming(list);
  };
  const linkSteps = newestFirst.filter(({ resource }) => resource.linkHeader).map(({ step }) => step.paths);
  const locate = (url: string): string => newestFirst.reduce((at, { step }) => step.paths.backward(at), url);

  return {
    version,
    template,
    served,
    servedTemplate,
    requestBody: requestBody === unchanged ? undefined : requestBody,
    answerBodies,
    answer: (status) => {
      const plan = plans.get(status);
      if (plan !== undefined) return plan;
      const kind = bodyKindOfStatus(status);
      return kind === undefined ? { status, body: byKind.none.body } : { status, body: byKind[kind].body };
    },
    answerHeaders: renames('backward'),
    requestHeaders: renames('forward'),
    linkHeader:
      linkSteps.length === 0
        ? undefined
        : (value) => rewriteLinkTargets(value, (url) => linkSteps.reduce((at, paths) => paths.backward(at), url)),
    location: locate,
    target: (rest) =>
      servedTemplate === template ? rest : (renamedPath(rest, { from: template, to: servedTemplate }) ?? rest),
    described: steps.flatMap(({ resource }) => resource.changes.map(shortDescription)),
  };
}

/**
 * Every version declared as changes of a validated policy, with its steps and routes. `modules` are the policy's
 * loaded modules (modules.ts); `limits` the translation's (TRANSLATION_MAX_DEPTH, TRANSLATION_MAX_BYTES), which a
 * module's results are held to.
 */
export function compileTranslations(
  policy: PolicyOfTranslations,
  modules: ChangeModules = new Map(),
  limits: TranslationLimits = defaultTranslationLimits(),
): CompiledTranslations {
  const steps = new Map<number, CompiledStep>();
  for (const entry of policy.versions) {
    if (isDeclared(entry)) steps.set(entry.version, compileStep(entry, policy.resources, modules, limits));
  }
  const chain = (version: number) => {
    const { served, steps: links } = chainOf(policy.versions, version);
    return { served, steps: links.map((link) => steps.get(link.version) as CompiledStep) };
  };

  const versions = new Map<number, VersionTranslation>();
  for (const version of steps.keys()) {
    const { served, steps: chainSteps } = chain(version);
    const routes = new Map<string, RouteTranslation>();
    for (const template of (steps.get(version) as CompiledStep).resources.keys()) {
      const path: { step: CompiledStep; resource: StepResource }[] = [];
      let at = template;
      for (const step of chainSteps) {
        const resource = step.resources.get(at);
        // The policy file insists that each successor serves the resource; a gap ends the chain.
        if (resource === undefined) break;
        path.push({ step, resource });
        at = resource.successorTemplate;
      }
      routes.set(template, compileRoute(version, template, served, path));
    }
    const declared = JSON.stringify(chainSteps.map((step) => step.changes));
    const moduleBytes = chainSteps
      .flatMap((step) => step.changes)
      .flatMap((change) => (change.op === 'module' ? [modules.get(change.module)?.sha256 ?? ''] : []));
    const digest = createHash('sha256').update(declared).update(moduleBytes.join(',')).digest('hex').slice(0, 8);
    versions.set(version, { served, routes, digest });
  }
  return { versions, steps, chain };
}
