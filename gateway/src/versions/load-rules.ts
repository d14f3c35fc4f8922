import {
  MIN_NOTICE_MONTHS,
  addCalendarMonths,
  defaultVersionAt,
  type DefaultVersionChange,
  type PolicyFile,
  type VersionEntry,
} from './policy-file.js';

/** A brownout window's notice goes out this long before it starts (the `brownout_in_48_hours` milestone). */
export const BROWNOUT_NOTICE_MS = 48 * 3_600_000;

/**
 * The rules that depend on the moment, not on the file: a reload is refused on one, a start never is (the policy is
 * served as written, and the gauge `api_version_policy_problems{rule}` says which is broken; docs/policy-file.md#the-moment-of-a-load).
 */
export const POLICY_PROBLEM_RULES = ['default_version_removed', 'brownout_notice_late'] as const;
export type PolicyProblemRule = (typeof POLICY_PROBLEM_RULES)[number];

/**
 * Rules only a reload checks, refused like the others but never a problem of a start: nothing at start tells which
 * announcement or move of the default is new in the file.
 */
type ReloadOnlyRule = 'announced_backdated' | 'default_move_backdated';

/** A rule broken by a policy at the moment it is loaded: which rule, the JSON path it concerns and why. */
export interface LoadProblem {
  readonly rule: PolicyProblemRule | ReloadOnlyRule;
  readonly path: string;
  readonly message: string;
}

const iso = (epochMs: number): string => new Date(epochMs).toISOString();

/** What default_version should be instead of a removed one: its successor when it names one. */
export const defaultInstead = (entry: VersionEntry): string =>
  entry.successor === undefined ? 'a version that is served' : `v${entry.successor} (its successor)`;

/**
 * The default in force (default_version, or the last scheduled move due) past its sunset: every request that names
 * no version would be answered 410.
 */
function removedDefault(file: PolicyFile, nowMs: number): LoadProblem | undefined {
  const defaultVersion = defaultVersionAt(file, nowMs);
  const entry = file.versions.find(({ version }) => version === defaultVersion);
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

/** Midnight UTC starting the day of `nowMs`: an announcement written as today's date is not backdated. */
const startOfDay = (nowMs: number): number => Date.parse(new Date(nowMs).toISOString().slice(0, 10));
const day = (epochMs: number): string => iso(epochMs).slice(0, 10);

/**
 * A deprecation the reload announces in the past: a version not announced in the policy in force (absent, current,
 * or announced later than now) whose `announced` is before today, or an announced date moved earlier and into the
 * past. Either would count notice nobody was given, so a sunset less than 6 months away could pass as 6 months
 * after its announcement. Today's date is accepted (a date alone is midnight UTC, and an announcement is written
 * on the day it is made); the refusal names the earliest sunset an announcement made now allows.
 */
function announcedBackdated(
  file: PolicyFile,
  nowMs: number,
  inForce: readonly VersionEntry[],
): LoadProblem | undefined {
  const today = startOfDay(nowMs);
  for (const [index, entry] of file.versions.entries()) {
    const { announced } = entry;
    if (entry.status !== 'deprecated' || announced === undefined || announced >= today) continue;
    const known = inForce.find(({ version }) => version === entry.version);
    const announcedBefore =
      known?.status === 'deprecated' && known.announced !== undefined && known.announced <= nowMs
        ? known.announced
        : undefined;
    if (announcedBefore !== undefined && announced >= announcedBefore) continue;
    const what =
      announcedBefore === undefined
        ? `announced ${iso(announced)} is before this reload, and v${entry.version} is not announced in the policy in force`
        : `announced moved from ${iso(announcedBefore)} to ${iso(announced)}, before this reload`;
    return {
      rule: 'announced_backdated',
      path: `versions.${index}.announced`,
      message:
        `version ${entry.version}: ${what}: a deprecation is announced from the day it is made, never backdated; ` +
        `announce it on ${day(today)} or later, with its sunset on ` +
        `${iso(addCalendarMonths(today, MIN_NOTICE_MONTHS))} or later`,
    };
  }
  return undefined;
}

const sameChange = (a: DefaultVersionChange, b: DefaultVersionChange): boolean =>
  a.at === b.at && a.to === b.to && a.announced === b.announced;

/**
 * A move of the default the reload schedules (not in the policy in force as it is) that is announced before today or
 * due before now: it would move the requests that name no version without the announcement their answers carry
 * ahead of it. Moving the default at once is an edit of default_version, which takes no announcement.
 */
function defaultMoveBackdated(
  file: PolicyFile,
  nowMs: number,
  inForce: readonly DefaultVersionChange[],
): LoadProblem | undefined {
  const today = startOfDay(nowMs);
  for (const [index, change] of (file.default_version_changes ?? []).entries()) {
    if (inForce.some((known) => sameChange(known, change))) continue;
    const move = `default move to v${change.to} at ${iso(change.at)}`;
    if (change.at <= nowMs)
      return {
        rule: 'default_move_backdated',
        path: `default_version_changes.${index}.at`,
        message:
          `${move} is not after this reload: schedule it after ${iso(nowMs)}, announced on ${day(today)} or later ` +
          `(to move the default at once, set default_version)`,
      };
    if (change.announced < today)
      return {
        rule: 'default_move_backdated',
        path: `default_version_changes.${index}.announced`,
        message: `${move}: announced ${iso(change.announced)} is before this reload; announce it on ${day(today)} or later`,
      };
  }
  return undefined;
}

/**
 * The rules that depend on when a policy is loaded, beyond the file's own (policy-file.ts), checked at a reload: the
 * default in force must not be removed, a new brownout window must leave 48 hours for its notice, a deprecation the
 * reload announces must not be backdated, nor a move of the default it schedules. `inForce`: the policy being
 * replaced. A start checks none (an outage for a date is worse than any): the gateway says so instead of the first
 * two (default-watch.ts, policy-problems.ts), and nothing at start tells which announcement or move is new
 * (docs/policy-file.md#the-moment-of-a-load).
 */
export function problemAtReload(
  file: PolicyFile,
  nowMs: number,
  inForce: { readonly versions: readonly VersionEntry[]; readonly defaultChanges: readonly DefaultVersionChange[] },
): LoadProblem | undefined {
  return (
    removedDefault(file, nowMs) ??
    brownoutTooSoon(file, nowMs, inForce.versions) ??
    announcedBackdated(file, nowMs, inForce.versions) ??
    defaultMoveBackdated(file, nowMs, inForce.defaultChanges)
  );
}
