import type { VersionChange } from './changes.js';

/**
 * Who serves a version (docs/behaviour.md "Versions declared as changes"), the one rule the engine, the derived
 * documents, the migration guide, the contract gate and the policy file's loop check all follow: a version that
 * has `changes` (an empty list too: "nothing changed") is declared as changes and served by its successor, down the
 * chain to the first version without `changes`, which the backend serves.
 */

/** What the rule needs of a policy's version entry. */
export interface ChainEntry {
  readonly version: number;
  readonly successor?: number | undefined;
  readonly changes?: readonly VersionChange[] | undefined;
}

/** A version declared as changes: it has `changes`, and a successor to change into (the policy file insists). */
export const isDeclared = (entry: ChainEntry | undefined): entry is ChainEntry & { successor: number } =>
  entry?.changes !== undefined && entry.successor !== undefined;

/** One step down a chain: `version` is served by `successor` through `changes`. */
interface ChainStep {
  readonly version: number;
  readonly successor: number;
  readonly changes: readonly VersionChange[];
}

/** Where a version's answers come from: the version the backend serves, and the steps between, oldest first. */
interface Chain {
  readonly served: number;
  /** v1 → v2, then v2 → v3: requests go through them in this order, answers in the other. Empty: served itself. */
  readonly steps: readonly ChainStep[];
}

/**
 * Follows `successor` from `version` while a version is declared as changes. A version the policy does not list
 * is served as itself. The length bound only guards against a loop the policy file refuses (`loopOf`).
 */
export function chainOf(versions: readonly ChainEntry[], version: number): Chain {
  const byVersion = new Map(versions.map((entry) => [entry.version, entry]));
  const steps: ChainStep[] = [];
  let served = version;
  for (let entry = byVersion.get(version); isDeclared(entry) && steps.length < versions.length;) {
    steps.push({ version: entry.version, successor: entry.successor, changes: entry.changes ?? [] });
    served = entry.successor;
    entry = byVersion.get(served);
  }
  return { served, steps };
}

/** The version a chain from `version` comes back to (a loop the policy file refuses), or undefined. */
export function loopOf(versions: readonly ChainEntry[], version: number): number | undefined {
  const byVersion = new Map(versions.map((entry) => [entry.version, entry]));
  const seen = new Set<number>();
  for (let entry = byVersion.get(version); isDeclared(entry); entry = byVersion.get(entry.successor)) {
    seen.add(entry.version);
    if (seen.has(entry.successor)) return entry.successor;
  }
  return undefined;
}
