import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ConfigError, parseJsonFile, readFileOf } from '@version-router/platform/config';
import { DEFAULT_RESOURCES, collisionOf, templateProblem, type ListedResource } from '../translation/templates.js';
import { versionChange } from '../translation/changes.js';
import { checkChainsEnd, checkVersionChanges } from '../translation/rules.js';
import { defaultTranslationLimits } from '../translation/compile.js';
import type { TranslationLimits } from '../translation/module-step.js';
import { ModuleProblem, loadChangeModules, type ChangeModules } from '../translation/modules.js';
import { DEFAULT_SCHEMES, VERSION_SCHEMES } from './schemes.js';
import { checkCompare, compareSettings } from './compare.js';

/** The announcement comes at least this many calendar months before removal. */
export const MIN_NOTICE_MONTHS = 6;
/** A brownout is a reminder, not an outage: one window lasts a day at most. */
const MAX_BROWNOUT_MS = 24 * 60 * 60 * 1000;

const versionNumber = z
  .number({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a version number') })
  .int('must be an integer')
  .min(1, 'must be 1 or higher');

/** What an instant must be, as a refusal says it. */
export const instantRule = 'must be a date (2026-06-01) or an RFC 3339 date-time (2027-01-01T00:00:00Z)';

/**
 * A calendar date (midnight UTC) or an RFC 3339 date-time with offset, kept as epoch milliseconds: the policy's
 * instants, and the dates a preview (`GET /versions?at=`) or a moved clock (GATEWAY_CLOCK_START) is asked for.
 */
export const instant = z
  .union([z.iso.date(), z.iso.datetime({ offset: true })], { error: instantRule })
  .transform((text) => Date.parse(text));

/** Links in headers are followed by clients and people: absolute, and https only. */
const httpsUrl = z
  .string()
  .refine((text) => URL.canParse(text) && new URL(text).protocol === 'https:', 'must be an absolute https:// URL');

const brownoutWindow = z.strictObject({ start: instant, end: instant });

const versionEntry = z.strictObject({
  version: versionNumber,
  status: z.enum(['current', 'deprecated'], { error: 'must be "current" or "deprecated"' }),
  announced: instant.optional(),
  sunset: instant.optional(),
  successor: versionNumber.optional(),
  deprecation_link: httpsUrl.optional(),
  sunset_link: httpsUrl.optional(),
  brownouts: z.array(brownoutWindow).optional(),
  /**
   * Whether a request to this version needs an API-Key (docs/consumers.md#consumers-and-api-keys); absent: optional.
   * `{"required_from": <instant>}` schedules the requirement, so it can be announced before it applies.
   */
  consumer_key: z
    .union([z.enum(['optional', 'required']), z.strictObject({ required_from: instant })], {
      error: 'must be "optional", "required" or {"required_from": <date>}',
    })
    .optional(),
  /** From this instant on, a consumer that had not used the version before gets 403. */
  closed_to_new: instant.optional(),
  /** What changed from this version to its successor; a version with changes is presented by the gateway. */
  changes: z.array(versionChange).optional(),
  /** Served by the backend's own route, a share of its answers compared with the successor's translated by `changes`. */
  compare: compareSettings.optional(),
});

/** A template (in every version), or `{"path": template, "versions": [1]}` for the versions that have it. */
const listedResource = z
  .union(
    [
      z.string(),
      z.strictObject({
        path: z.string(),
        versions: z.array(versionNumber).min(1, 'must list at least one version'),
      }),
    ],
    { error: 'must be a path template or {"path": <template>, "versions": [<version>, …]}' },
  )
  .superRefine((listed, ctx) => {
    const problem = templateProblem(typeof listed === 'string' ? listed : listed.path);
    if (problem !== undefined)
      ctx.addIssue({ code: 'custom', message: problem, path: typeof listed === 'string' ? [] : ['path'] });
  })
  .transform((listed): ListedResource =>
    typeof listed === 'string'
      ? { path: listed, versions: undefined }
      : { path: listed.path, versions: listed.versions },
  );

/**
 * A scheduled move of default_version (docs/policy-file.md#default-version-changes): from `at` on, a request that names
 * no version gets `to`. From `announced` until `at` the answers that move carry the header announcing it.
 */
const defaultVersionChange = z.strictObject({ at: instant, to: versionNumber, announced: instant });

export type VersionEntry = z.output<typeof versionEntry>;
export type PolicyFile = z.output<typeof versionPolicyFileSchema>;
export type DefaultVersionChange = z.output<typeof defaultVersionChange>;

/**
 * The version a request that names none gets at `nowMs`: default_version, or the `to` of the last change whose
 * instant has come (the changes are in ascending order; the file refuses any other).
 */
export function defaultVersionAt(
  file: Pick<PolicyFile, 'default_version' | 'default_version_changes'>,
  nowMs: number,
): number {
  let version = file.default_version;
  for (const change of file.default_version_changes ?? []) if (change.at <= nowMs) version = change.to;
  return version;
}

/** Adds calendar months in UTC, clamping to the month's last day (2026-08-31 + 6 → 2027-02-28). */
export function addCalendarMonths(epochMs: number, months: number): number {
  const date = new Date(epochMs);
  const day = date.getUTCDate();
  date.setUTCDate(1);
  date.setUTCMonth(date.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate();
  date.setUTCDate(Math.min(day, lastDay));
  return date.getTime();
}

const iso = (epochMs: number): string => new Date(epochMs).toISOString();

type Fail = (message: string, ...path: (string | number)[]) => void;

/** The lifecycle rules of one entry: what a current version may not have, what a deprecated one needs. */
function checkLifecycle(entry: VersionEntry, fail: Fail): void {
  if (entry.status === 'current') {
    // A sunset without the deprecated status would remove a version that never sent the Warn headers.
    if (entry.sunset !== undefined) fail('a current version cannot have a sunset; mark it deprecated first', 'sunset');
    if (entry.announced !== undefined) fail('a current version has no deprecation announcement', 'announced');
    if (entry.successor !== undefined) fail('a current version has no successor', 'successor');
    if (entry.brownouts !== undefined)
      fail('a current version has no brownouts; mark it deprecated first', 'brownouts');
    if (entry.deprecation_link !== undefined) fail('a current version has no deprecation_link', 'deprecation_link');
    if (entry.sunset_link !== undefined) fail('a current version has no sunset_link', 'sunset_link');
    if (entry.closed_to_new !== undefined)
      fail('a current version is not closed to new consumers; mark it deprecated first', 'closed_to_new');
    return;
  }
  if (entry.announced === undefined) fail('a deprecated version needs an announced date', 'announced');
  if (entry.sunset === undefined) fail('a deprecated version needs a sunset', 'sunset');
  if (entry.successor === undefined) fail('a deprecated version needs a successor', 'successor');
  else if (entry.successor === entry.version) fail('cannot be its own successor', 'successor');
  if (entry.announced !== undefined && entry.sunset !== undefined) {
    const earliest = addCalendarMonths(entry.announced, MIN_NOTICE_MONTHS);
    if (entry.sunset < earliest) {
      fail(
        `sunset ${iso(entry.sunset)} is less than ${MIN_NOTICE_MONTHS} calendar months after announced ` +
          `${iso(entry.announced)} (earliest ${iso(earliest)})`,
        'sunset',
      );
    }
    checkBrownouts(entry.brownouts ?? [], entry.announced, entry.sunset, fail);
    checkClosedToNew(entry, entry.announced, entry.sunset, fail);
  }
}

/** Since when the version needs an API-Key: -Infinity for "required", the scheduled instant, or undefined (never). */
export function keysRequiredFrom(entry: Pick<VersionEntry, 'consumer_key'>): number | undefined {
  const rule = entry.consumer_key;
  if (rule === 'required') return Number.NEGATIVE_INFINITY;
  return typeof rule === 'object' ? rule.required_from : undefined;
}

/**
 * closed_to_new lies in [announced, sunset), and needs keys on every request: without one, a consumer that
 * used the version before cannot be told from a new one.
 */
function checkClosedToNew(entry: VersionEntry, announced: number, sunset: number, fail: Fail): void {
  const closed = entry.closed_to_new;
  if (closed === undefined) return;
  if (closed < announced || closed >= sunset) {
    fail(
      `closed_to_new ${iso(closed)} is outside the deprecation period [${iso(announced)}, ${iso(sunset)})`,
      'closed_to_new',
    );
  }
  const keysFrom = keysRequiredFrom(entry);
  if (keysFrom === undefined || keysFrom > closed) {
    fail(
      'closed_to_new needs "consumer_key": "required" from then on (a request without a key cannot be told from a ' +
        'new consumer)',
      'closed_to_new',
    );
  }
}

/** Windows lie in [announced, sunset), end after start, last at most a day, and never overlap. */
function checkBrownouts(
  windows: readonly { start: number; end: number }[],
  announced: number,
  sunset: number,
  fail: Fail,
): void {
  windows.forEach(({ start, end }, index) => {
    const window = `brownout ${iso(start)}..${iso(end)}`;
    if (end <= start) fail(`${window}: end must be after start`, 'brownouts', index, 'end');
    else if (end - start > MAX_BROWNOUT_MS) fail(`${window} is longer than 24 hours`, 'brownouts', index, 'end');
    else if (start < announced || end > sunset) {
      fail(`${window} is outside the deprecation period [${iso(announced)}, ${iso(sunset)})`, 'brownouts', index);
    } else {
      const overlapped = windows.findIndex(
        (other, otherIndex) => otherIndex < index && other.start < end && start < other.end,
      );
      if (overlapped !== -1) fail(`${window} overlaps brownouts.${overlapped}`, 'brownouts', index);
    }
  });
}

/**
 * Each scheduled default move names a listed version that is current at its instant (a default moves to a version
 * that will stay, never onto a deprecated or removed one), differs from the default it replaces, is announced
 * before it applies, and comes after the move before it.
 */
function checkDefaultChanges(
  file: Pick<PolicyFile, 'default_version' | 'default_version_changes' | 'versions'>,
  fail: (index: number, key: 'at' | 'to' | 'announced', message: string) => void,
): void {
  let before = file.default_version;
  let previousAt = Number.NEGATIVE_INFINITY;
  (file.default_version_changes ?? []).forEach(({ at, to, announced }, index) => {
    const move = `default move to v${to} at ${iso(at)}`;
    const entry = file.versions.find(({ version }) => version === to);
    if (at <= previousAt) fail(index, 'at', `${move} is not after the move before it`);
    if (announced >= at) fail(index, 'announced', `${move} must be announced before it applies, not ${iso(announced)}`);
    if (entry === undefined) fail(index, 'to', `${move}: version ${to} is not a listed version`);
    else if (to === before) fail(index, 'to', `${move}: v${to} is already the default then`);
    else if (entry.status === 'deprecated' && entry.announced !== undefined && entry.announced <= at)
      fail(
        index,
        'to',
        `${move}: v${to} is deprecated then (announced ${iso(entry.announced)}); move the default to a current version`,
      );
    before = to;
    previousAt = at;
  });
}

/**
 * The file behind API_VERSIONS_FILE: its shape, and every lifecycle rule, so the gateway refuses (at
 * start, or at a reload) a policy it could not honour. Each issue's path names the offending key.
 */
export const versionPolicyFileSchema = z
  .strictObject({
    default_version: versionNumber,
    /** Later moves of the default, in ascending order of `at`; absent: default_version stays. */
    default_version_changes: z.array(defaultVersionChange).optional(),
    /** `true` (the original header form) or `date` (RFC 9745: `@<epoch seconds>` of the announcement). */
    deprecation_header: z.enum(['true', 'date'], { error: 'must be "true" or "date"' }).default('true'),
    resources: z
      .array(listedResource)
      .min(1, 'must list at least one resource')
      .default(() => DEFAULT_RESOURCES.map((path) => ({ path, versions: undefined }))),
    versions: z.array(versionEntry).min(1, 'must list at least one version'),
    /** How requests may name a version (docs/versions.md#version-schemes). */
    schemes: z
      .array(
        z.enum(VERSION_SCHEMES, {
          error: `must be one of ${VERSION_SCHEMES.map((scheme) => `"${scheme}"`).join(', ')}`,
        }),
      )
      .min(1, 'must enable at least one scheme')
      .default([...DEFAULT_SCHEMES]),
    query_parameter: z
      .string()
      .regex(/^[A-Za-z0-9._~-]+$/, 'must be a query parameter name of letters, digits, . _ ~ -')
      .default('version'),
    media_type_vendor: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9.-]*$/, 'must be a media type vendor name of letters, digits, . and -')
      .default('version-router'),
  })
  .superRefine((file, ctx) => {
    const listed = new Set<number>();
    file.versions.forEach((entry, index) => {
      const fail: Fail = (message, ...path) => {
        ctx.addIssue({
          code: 'custom',
          path: ['versions', index, ...path],
          message: `version ${entry.version}: ${message}`,
        });
      };
      if (listed.has(entry.version)) fail('is listed twice');
      listed.add(entry.version);
      checkLifecycle(entry, fail);
      checkVersionChanges(entry, file.resources, fail);
      checkCompare(entry, fail);
    });
    checkChainsEnd(file.versions, (index, message) =>
      ctx.addIssue({ code: 'custom', path: ['versions', index, 'changes'], message }),
    );
    file.versions.forEach((entry, index) => {
      if (entry.successor !== undefined && entry.successor !== entry.version && !listed.has(entry.successor)) {
        ctx.addIssue({
          code: 'custom',
          path: ['versions', index, 'successor'],
          message: `version ${entry.version}: successor ${entry.successor} is not a listed version`,
        });
      }
    });
    if (!file.versions.some((entry) => entry.status === 'current')) {
      ctx.addIssue({ code: 'custom', path: ['versions'], message: 'no version has status "current"' });
    }
    if (!listed.has(file.default_version)) {
      ctx.addIssue({
        code: 'custom',
        path: ['default_version'],
        message: `default_version ${file.default_version} is not a listed version`,
      });
    }
    checkDefaultChanges(file, (index, key, message) =>
      ctx.addIssue({ code: 'custom', path: ['default_version_changes', index, key], message }),
    );
    file.schemes.forEach((scheme, index) => {
      if (file.schemes.indexOf(scheme) !== index)
        ctx.addIssue({ code: 'custom', path: ['schemes', index], message: `"${scheme}" is listed twice` });
    });
    // An entry refused above has no template to compare.
    if (file.resources.some((resource) => typeof resource?.path !== 'string')) return;
    const paths = file.resources.map(({ path }) => path);
    file.resources.forEach(({ path, versions }, index) => {
      const collision = collisionOf(path, paths.slice(0, index));
      if (collision !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['resources', index],
          message: `"${path}" collides with ${collision}`,
        });
      versions?.forEach((version, at) => {
        const problem = !listed.has(version)
          ? `version ${version} is not a listed version`
          : versions.indexOf(version) !== at
            ? `version ${version} is listed twice`
            : undefined;
        if (problem !== undefined)
          ctx.addIssue({ code: 'custom', path: ['resources', index, 'versions', at], message: problem });
      });
    });
  });

/** A validated policy file and which content it came from. */
export interface PolicySource {
  readonly file: PolicyFile;
  /**
   * The first 12 hex digits of the SHA-256 of the file's bytes as read (and of its modules' bytes, when its changes
   * name modules): names the policy a replica serves.
   */
  readonly sha256: string;
  /** The digest of the file's bytes alone, when its modules make `sha256` another: what the file watch compares. */
  readonly fileSha256?: string;
  /** The modules its `module` changes name, loaded and checked (translation/modules.ts); absent: none. */
  readonly modules?: ChangeModules;
}

/** The short content hash `api_version_policy_info` and `GET /versions` show; equal bytes, equal hash. */
export function policyDigest(bytes: Uint8Array, modules: ChangeModules = new Map()): string {
  const hash = createHash('sha256').update(bytes);
  for (const module of modules.values()) hash.update(`\n${module.path}\n${module.sha256}`);
  return hash.digest('hex').slice(0, 12);
}

/**
 * Reads API_VERSIONS_FILE without its modules (the policy's dates and versions); throws a ConfigError naming the
 * variable, the file and the JSON path of the problem. The hash is of the very bytes parsed.
 */
export function readPolicyFile(path: string): PolicySource {
  const bytes = readFileOf('API_VERSIONS_FILE', path);
  return {
    file: parseJsonFile('API_VERSIONS_FILE', path, bytes, versionPolicyFileSchema),
    sha256: policyDigest(bytes),
  };
}

/**
 * Reads API_VERSIONS_FILE and loads the modules its changes name (relative to the file), at start and on every
 * reload, before the policy is activated; throws a ConfigError naming the variable, the file and the JSON path of
 * the problem, a module's included. `limits` are the translation's, which a module's round trip is checked under.
 */
export async function loadPolicyFile(path: string, limits?: TranslationLimits): Promise<PolicySource> {
  const bytes = readFileOf('API_VERSIONS_FILE', path);
  const file = parseJsonFile('API_VERSIONS_FILE', path, bytes, versionPolicyFileSchema);
  let modules: ChangeModules;
  try {
    modules = await loadChangeModules(file.versions, path, limits ?? defaultTranslationLimits());
  } catch (error) {
    if (!(error instanceof ModuleProblem)) throw error;
    throw new ConfigError(`API_VERSIONS_FILE: ${path} is invalid at ${error.path.join('.')}: ${error.message}`);
  }
  if (modules.size === 0) return { file, sha256: policyDigest(bytes) };
  return { file, sha256: policyDigest(bytes, modules), fileSha256: policyDigest(bytes), modules };
}
