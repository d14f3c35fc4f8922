import { operationParts } from '../ledger.js';

/**
 * What each consumer is told about a deprecated version is what is true for it now (docs/consumers.md#what-counts):
 * its calls count from its last move on, within the window asked (30 days by default), and a call that named no
 * version counts only while such a request of it would still get that version. The reports, the notices, the
 * operators' list and the status page all judge a consumer's calls by these rules.
 */

/** The version a consumer's requests that name none get now: its pin, else the default (registered before pins). */
export const unversionedVersion = (pin: number | null, defaultVersion: number): number => pin ?? defaultVersion;

/**
 * Whether the calls of a ledger operation of `version` are still calls of it: one that named the version (path,
 * header, query, media type, or a form not recorded) always is; one that named none (its pin, the default) only
 * while the consumer's requests that name none still get `version` (`unversioned`), since once its pin or the default
 * moved those requests get the other version.
 */
export function stillCallsVersion(operation: string, version: number, unversioned: number): boolean {
  const { form } = operationParts(operation);
  return (form !== 'pin' && form !== 'default') || unversioned === version;
}

/** From when a consumer's calls count: `sinceMs`, or the last change of its pin (`pinnedAt`) when that is later. */
export function countedFrom(sinceMs: number, pinnedAt: string | null): number {
  return pinnedAt === null ? sinceMs : Math.max(sinceMs, Date.parse(pinnedAt));
}

/**
 * A consumer is done with `version` when its requests that name none get another version and none of its calls of
 * `version` counts (`counted`: its operations still counting, with a call since they count from).
 */
export const doneWith = (version: number, unversioned: number, counted: number): boolean =>
  unversioned !== version && counted === 0;

/**
 * The operations of a consumer's use of `version` that still count at the window `fromMs` (already the later of the
 * window and its last move): those still calls of the version, last called at or after `fromMs`.
 */
export function countedOperations<Operation extends { operation: string; last_seen: string }>(
  operations: readonly Operation[],
  version: number,
  unversioned: number,
  fromMs: number,
): Operation[] {
  return operations.filter(
    (row) => stillCallsVersion(row.operation, version, unversioned) && Date.parse(row.last_seen) >= fromMs,
  );
}

/**
 * The last call of `version` that still counts (epoch ms): of the operations still calls of it, made at or after the
 * consumer's last pin move; -Infinity when none counts.
 */
export function lastCountedCall(
  operations: readonly { operation: string; last_seen: string }[],
  version: number,
  unversioned: number,
  pinnedAt: string | null,
): number {
  const from = countedFrom(Number.NEGATIVE_INFINITY, pinnedAt);
  return Math.max(
    Number.NEGATIVE_INFINITY,
    ...countedOperations(operations, version, unversioned, from).map(({ last_seen }) => Date.parse(last_seen)),
  );
}
