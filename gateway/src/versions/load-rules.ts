import type { PolicyFile, VersionEntry } from './policy-file.js';

/** A brownout window's notice goes out this long before it starts (the `brownout_in_48_hours` milestone). */
export const BROWNOUT_NOTICE_MS = 48 * 3_600_000;

/**
 * The rules that depend on the moment, not on the file: a reload is refused on one, a start never is (the policy is
 * served as written, and the gauge `api_version_policy_problems{rule}` says which is broken; docs/behaviour.md).
 */
export const POLICY_PROBLEM_RULES = ['default_version_removed', 'brownout_notice_late'] as const;
export type PolicyProblemRule = (typeof POLICY_PROBLEM_RULES)[number];

/** A rule broken by a policy at the moment it is loaded: which rule, the JSON path it concerns and why. */
export interface LoadProblem {
  readonly rule: PolicyProblemRule;
  readonly path: string;
  readonly message: string;
}

const iso = (epochMs: number): string => new Date(epochMs).toISOString();

/** What default_version should be instead of a removed one: its successor when it names one. */
export const defaultInstead = (entry: VersionEntry): string =>
  entry.successor === undefined ? 'a version that is served' : `v${entry.successor} (its successor)`;

/** default_version past its sunset: every request that names no version would be answered 410. */
function removedDefault(file: PolicyFile, nowMs: number): LoadProblem | undefined {
  const entry = file.versions.find(({ version }) => version === file.default_version);
  if (entry?.sunset === undefined || nowMs < entry.sunset) return undefined;
  return {
    rule: 'default_version_removed',
    path: 'default_version',
    message:
      `default_version ${entry.version} was removed on ${iso(entry.sunset)}: every request that names no ` +
      `version would get 410; set it to ${defaultInstead(entry)} (docs/runbook.md#move-the-default)`,
  };
}

/** The windows of a version that have not ended and start less than 48 hours after `nowMs`. */
export function windowsTooSoon(entry: VersionEntry, nowMs: number): { start: number; end: number }[] {
  return (entry.brownouts ?? []).filter(({ start, end }) => end > nowMs && start < nowMs + BROWNOUT_NOTICE_MS);
}

/**
 * A window the reload introduces (not in the policy in force with the same start and end) that has not ended and
 * starts less than 48 hours from now: its consumers could not be told 48 hours ahead, as the notices promise.
 */
function brownoutTooSoon(file: PolicyFile, nowMs: number, inForce: readonly VersionEntry[]): LoadProblem | undefined {
  for (const [index, entry] of file.versions.entries()) {
    const known = inForce.find(({ version }) => version === entry.version)?.brownouts ?? [];
    for (const { start, end } of windowsTooSoon(entry, nowMs)) {
      if (known.some((window) => window.start === start && window.end === end)) continue;
      const windowIndex = (entry.brownouts ?? []).findIndex((window) => window.start === start);
      return {
        rule: 'brownout_notice_late',
        path: `versions.${index}.brownouts.${windowIndex}`,
        message:
          `version ${entry.version}: new brownout ${iso(start)}..${iso(end)} starts less than 48 hours after ` +
          `this reload, so its notice cannot go out 48 hours ahead; start it at ${iso(nowMs + BROWNOUT_NOTICE_MS)} ` +
          `or later`,
      };
    }
  }
  return undefined;
}

/**
 * The rules that depend on when a policy is loaded, beyond the file's own (policy-file.ts), checked at a reload:
 * default_version must not be removed, and a new brownout window must leave 48 hours for its notice. `inForce`: the
 * versions of the policy being replaced. A start checks neither (an outage for a date is worse than either): the
 * gateway says so instead (default-watch.ts, policy-problems.ts; docs/behaviour.md#the-policy-file).
 */
export function problemAtReload(
  file: PolicyFile,
  nowMs: number,
  inForce: readonly VersionEntry[],
): LoadProblem | undefined {
  return removedDefault(file, nowMs) ?? brownoutTooSoon(file, nowMs, inForce);
}
