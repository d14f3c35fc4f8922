import { ConfigError } from '@version-router/platform/config';
import type { PolicyFile, VersionEntry } from './policy-file.js';

/** A brownout window's notice goes out this long before it starts (the `brownout_in_48_hours` milestone). */
const BROWNOUT_NOTICE_MS = 48 * 3_600_000;

/** A rule broken by a policy at the moment it is loaded: the JSON path it concerns and why. */
export interface LoadProblem {
  readonly path: string;
  readonly message: string;
}

const iso = (epochMs: number): string => new Date(epochMs).toISOString();

/** default_version past its sunset: every request that names no version would be answered 410. */
function removedDefault(file: PolicyFile, nowMs: number): LoadProblem | undefined {
  const entry = file.versions.find(({ version }) => version === file.default_version);
  if (entry?.sunset === undefined || nowMs < entry.sunset) return undefined;
  const instead = entry.successor === undefined ? 'a version that is served' : `v${entry.successor} (its successor)`;
  return {
    path: 'default_version',
    message:
      `default_version ${entry.version} was removed on ${iso(entry.sunset)}: every request that names no ` +
      `version would get 410; set it to ${instead} (docs/runbook.md#move-the-default)`,
  };
}

/**
 * A window the reload introduces (not in the policy in force with the same start and end) that has not ended and
 * starts less than 48 hours from now: its consumers could not be told 48 hours ahead, as the notices promise.
 */
function brownoutTooSoon(file: PolicyFile, nowMs: number, inForce: readonly VersionEntry[]): LoadProblem | undefined {
  for (const [index, entry] of file.versions.entries()) {
    const known = inForce.find(({ version }) => version === entry.version)?.brownouts ?? [];
    for (const [windowIndex, { start, end }] of (entry.brownouts ?? []).entries()) {
      if (end <= nowMs || start >= nowMs + BROWNOUT_NOTICE_MS) continue;
      if (known.some((window) => window.start === start && window.end === end)) continue;
      return {
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
 * The rules that depend on when a policy is loaded, beyond the file's own (policy-file.ts): at start and at a
 * reload, default_version must not be removed; at a reload, a new brownout window must leave 48 hours for its
 * notice. At start nothing tells which windows are new, so a window sooner than that is accepted and its notice
 * goes out at once (docs/behaviour.md#the-policy-file). `inForce`: the versions of the policy being replaced.
 */
export function problemAtLoad(
  file: PolicyFile,
  nowMs: number,
  inForce?: readonly VersionEntry[],
): LoadProblem | undefined {
  return removedDefault(file, nowMs) ?? (inForce === undefined ? undefined : brownoutTooSoon(file, nowMs, inForce));
}

/** The policy file read at start, refused (the process's one line, naming the file and the JSON path) on a problem. */
export function refusedAtStart(file: PolicyFile, path: string, nowMs: number): ConfigError | undefined {
  const problem = problemAtLoad(file, nowMs);
  return problem === undefined
    ? undefined
    : new ConfigError(`API_VERSIONS_FILE: ${path} is invalid at ${problem.path}: ${problem.message}`);
}
