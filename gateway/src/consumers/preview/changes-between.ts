import type { GuideChange } from '../../changes/guide.js';
import type { MigrationGuides } from '../../changes/guides.js';
import type { VersionPolicy } from '../../versions/policy.js';

/**
 * What an upgrade preview reads of the migration guides, in one place: every declared change and every removed
 * operation on the way from one version to a later one, step by step along the successors, per operation.
 */

/** One declared change, or one operation the step's successor does not have, on one operation of a step. */
export interface StepChange {
  /** The step: from this version to its successor. */
  readonly from: number;
  readonly to: number;
  /** The operation as the step's version names it (`GET /v1/orders/{id}`). */
  readonly method: string;
  readonly path: string;
  /** The operation across versions and forms: `GET /orders/{}` (operationKey). */
  readonly key: string;
  /** Where the step's successor serves it (`/v2/purchases/{id}` after an endpoint rename), and under which key. */
  readonly successorPath: string;
  readonly successorKey: string;
  readonly change: GuideChange;
  /** The successor does not have the operation: a consumer calling it cannot move. */
  readonly removal: boolean;
}

export type ChangesBetween =
  | { readonly ok: true; readonly changes: readonly StepChange[] }
  | { readonly ok: false; readonly status: 502 | 504; readonly reason: string };

/** `/v1` or `/api/v1` at the start of a path of `version`, the `/api` captured. */
export const ownPrefix = (version: number): RegExp => new RegExp(`^(/api)?/v${version}(?=/|$)`);

/**
 * An operation across the places that name it: the method, then the path without `/api`, without its version
 * segment, and with its parameters unnamed (`GET /v1/orders/{id}` and `GET /orders/{orderId}` are `GET /orders/{}`).
 */
export function operationKey(method: string, path: string, version: number): string {
  const rest = path.replace(ownPrefix(version), '').replace(/\{[^}]*\}/g, '{}');
  return `${method} ${rest === '' ? '/' : rest}`;
}

/**
 * An operation as one step's version has it: its key (operationKey) and its path below the version
 * (`/orders/{id}`).
 */
export interface OperationAt {
  readonly key: string;
  readonly template: string;
}

/** A change of the operation `key` names, or of its GET when it is a HEAD: a HEAD answers as its GET does. */
export const changesOperation = (change: StepChange, key: string): boolean =>
  change.key === key || (change.method === 'GET' && key === `HEAD${change.key.slice('GET'.length)}`);

/**
 * Where the step's successor has an operation of the step's version: where the step's endpoint rename of it (of its
 * GET, for a HEAD) moves it, else where it was. The one rule that follows a consumer's call through the steps, both
 * to the changes each later step declares on it and to what it sends for the target version.
 */
export function oneStepOn(ofStep: readonly StepChange[], at: OperationAt): OperationAt {
  for (const change of ofStep) {
    if (change.successorKey === change.key || !changesOperation(change, at.key)) continue;
    const method = at.key.slice(0, at.key.indexOf(' '));
    return {
      key: `${method}${change.successorKey.slice(change.method.length)}`,
      template: change.successorPath.replace(ownPrefix(change.to), ''),
    };
  }
  return at;
}

/** An operation of the first step's version followed through every step of `changes` (oneStepOn). */
export function followedOperation(changes: readonly StepChange[], at: OperationAt): OperationAt {
  for (const step of new Set(changes.map((change) => change.from)))
    at = oneStepOn(
      changes.filter((change) => change.from === step),
      at,
    );
  return at;
}

/**
 * The versions from `from` to `to` along the successors (`[1, 2, 3]`), or undefined when `to` is not reached from
 * `from` that way. `[from]` when they are the same.
 */
export function stepsBetween(policy: VersionPolicy, from: number, to: number): number[] | undefined {
  const path = [from];
  for (let version = from; version !== to;) {
    const successor = policy.versions.find((entry) => entry.version === version)?.successor;
    if (successor === undefined || path.includes(successor)) return undefined;
    path.push(successor);
    version = successor;
  }
  return path;
}

/**
 * The declared changes and removed operations of each step of `versions` (stepsBetween's), from the guides of the
 * policy in force; an operation's `/api` form repeats its bare form's, so each change is listed once per operation.
 */
export async function changesBetween(
  guides: MigrationGuides,
  policy: VersionPolicy,
  versions: readonly number[],
  requestId: string,
): Promise<ChangesBetween> {
  const changes: StepChange[] = [];
  for (let i = 0; i + 1 < versions.length; i++) {
    const from = versions[i] as number;
    const outcome = await guides.get(policy, from, requestId);
    if (!outcome.ok) {
      // Each step has a successor, so a guide is missing only when the backend's documents are.
      if (outcome.status === 404) return { ok: false, status: 502, reason: outcome.reason };
      return { ok: false, status: outcome.status, reason: outcome.reason };
    }
    const { guide } = outcome.rendered;
    const listed = new Set<string>();
    for (const operation of guide.operations) {
      if (operation.method === '*') continue;
      const key = operationKey(operation.method, operation.path, guide.version);
      for (const change of operation.changes) {
        const removal = change.kind === 'endpoint' && change.change === 'removed';
        if (change.declared !== true && !removal) continue;
        const successorKey = operationKey(operation.method, operation.successor_path, guide.successor);
        // An endpoint rename names the form's own paths: the same rename of the operation in each form.
        const id = `${key}\n${change.change === 'endpoint renamed' ? successorKey : JSON.stringify(change)}`;
        if (listed.has(id)) continue;
        listed.add(id);
        changes.push({
          from,
          to: guide.successor,
          method: operation.method,
          path: operation.path,
          key,
          successorPath: operation.successor_path,
          successorKey,
          change,
          removal,
        });
      }
    }
  }
  return { ok: true, changes };
}
