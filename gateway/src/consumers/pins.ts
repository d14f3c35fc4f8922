import { HttpError } from '@version-router/platform/errors';
import { imfFixdate } from '../versions/headers.js';
import type { VersionAnswer, VersionPolicy } from '../versions/policy.js';
import type { KeyCheck } from './authenticate.js';
import type { Ledger } from './ledger.js';
import type { PinRecord } from './store.js';

/** How long after a move its consumer may roll it back. */
export const ROLLBACK_WINDOW_MS = 72 * 3_600_000;

/**
 * The version a request is served (docs/consumers.md#pins): a version it names wins; else, with a valid key,
 * its consumer's pin; else default_version (`named`, as the policy resolved it). The pin is a field of the key
 * entry the key check already found: no store round trip per request.
 */
export function withPin(policy: VersionPolicy, named: VersionAnswer, check: KeyCheck, nowMs: number): VersionAnswer {
  if (named.selectedBy !== 'default' || typeof check !== 'object' || check.pin === null) return named;
  return policy.resolvePin(check.pin, nowMs);
}

/** The pin a consumer gets at registration without asking for one: the newest current version. */
export function newestCurrent(policy: VersionPolicy, nowMs: number): number {
  const current = policy.versions.filter((entry) => policy.phaseOf(entry, nowMs) === 'current');
  return current.at(-1)?.version ?? policy.defaultAt(nowMs);
}

/**
 * Why `consumerId` may not pin `version` at `nowMs`, or undefined when it may: a version the policy does not
 * list or has removed is 422 (the details name the versions one may pin); a deprecated version closed to new
 * consumers is 403 unless the consumer used it before it closed (as a request to it would be refused).
 */
export function pinRefusal(
  policy: VersionPolicy,
  ledger: Ledger,
  consumerId: string,
  version: number,
  nowMs: number,
): HttpError | undefined {
  const pinnable = policy.versions.filter((entry) => policy.phaseOf(entry, nowMs) !== 'removed');
  const entry = pinnable.find((listed) => listed.version === version);
  if (entry === undefined) {
    const versions = pinnable.map((listed) => listed.version).join(', ');
    return new HttpError(422, 'unsupported version', `versions one may pin: ${versions}`);
  }
  const closed = entry.closed_to_new;
  if (closed === undefined || policy.phaseOf(entry, nowMs) !== 'deprecated' || nowMs < closed) return undefined;
  const firstUse = ledger.firstUseOf(consumerId, version);
  if (firstUse !== undefined && firstUse < closed) return undefined;
  return new HttpError(
    403,
    'version closed to new consumers',
    `version ${version} takes no new consumers since ${imfFixdate(closed)}; use version ${entry.successor}`,
  );
}

/** A consumer's pin as `GET /consumer` answers it: the record, and until when its last move can be rolled back. */
export interface PinView extends PinRecord {
  rollback_until: string | null;
}

export function pinView(record: PinRecord): PinView {
  const { id, name, pinned_version, previous_version, pinned_at } = record;
  const movedMs = pinned_at === null ? null : Date.parse(pinned_at);
  const rollbackUntil =
    previous_version === null || movedMs === null ? null : new Date(movedMs + ROLLBACK_WINDOW_MS).toISOString();
  return { id, name, pinned_version, previous_version, pinned_at, rollback_until: rollbackUntil };
}
