import { API_KEY_VARY, DEFAULT_CHANGE_HEADER, defaultChangeValue, imfFixdate, type PolicyHeader } from './headers.js';
import {
  defaultVersionAt,
  keysRequiredFrom,
  type DefaultVersionChange,
  type PolicyFile,
  type VersionEntry,
} from './policy-file.js';
import { VERSION_SCHEMES, createRequestSchemes, type RequestSchemes, type VersionScheme } from './schemes.js';
import type { ListedResource } from '../translation/templates.js';
import type { CompiledTranslations } from '../translation/compile.js';
import { compilePolicyTranslations, type PolicyTranslations } from '../translation/policy-translations.js';

/** How the request chose its version (a metric label): a scheme, its consumer's pin, or none (default_version). */
type SelectedBy = VersionScheme | 'default' | 'pin';

/** Where a version stands at an instant: served as usual, served with warnings, or answered 410. */
export type Phase = 'current' | 'deprecated' | 'removed';

interface Failure {
  readonly status: number;
  readonly error: string;
  readonly details: string;
}

/**
 * The policy's answer to one request: which version it is, and what the response gets. Answers are
 * built once per policy and period of time, so answering a request allocates nothing and callers may
 * key caches on the object (metric children).
 */
export interface VersionAnswer {
  /** The version served or refused; null when the request names no valid version (400, 406). */
  readonly version: number | null;
  readonly selectedBy: SelectedBy;
  /** The version's phase at the request's time; null when there is no version. */
  readonly phase: Phase | null;
  /** The gateway answers itself (400, 406, 410) instead of proxying when set. */
  readonly failure: Failure | null;
  /** Response headers, Link aside (its target is the request's own path, which the route knows). */
  readonly headers: readonly (readonly [PolicyHeader, string])[];
  /** The version's sunset (epoch ms), when it has one. */
  readonly sunset: number | null;
  /** The successor version a `rel="successor-version"` Link points to, when one is due. */
  readonly successor: number | null;
  /** Further Link entries (`rel="deprecation"`, `rel="sunset"`), each preceded by ", "; "" when none. */
  readonly extraLinks: string;
  /** The policy's Vary value, merged into the backend's ('' when no request header can change the answer). */
  readonly vary: string;
  /** The version answers only requests with a valid API-Key (`consumer_key: "required"`). */
  readonly keyRequired: boolean;
  /**
   * Since when the version refuses consumers that had not used it before (`closed_to_new`, once in force); else null.
   */
  readonly closedToNew: number | null;
  readonly labels: {
    readonly version: string;
    readonly deprecated: 'true' | 'false';
    readonly selected_by: SelectedBy;
  };
}

/** A version's state during one period: phase, and the brownout window it is in, if any. */
interface VersionState {
  readonly entry: VersionEntry;
  readonly label: string;
  readonly phase: Phase;
  readonly brownoutEnd: number | null;
}

interface AnswersOfVersion {
  readonly byForm: Readonly<Record<SelectedBy, VersionAnswer>>;
  /** The 400 when the scheme named first (`[anchor]`) and a later one (`[anchor][other]`) name different versions. */
  readonly conflicts: Readonly<Record<VersionScheme, Readonly<Partial<Record<VersionScheme, VersionAnswer>>>>>;
}

/** Everything answered between two consecutive lifecycle instants (announcements, sunsets, brownout edges). */
interface Period {
  readonly byLabel: ReadonlyMap<string, AnswersOfVersion>;
  readonly fallback: AnswersOfVersion;
  /** The 406 per scheme whose value is no listed version (a path version that is none is a 404 instead). */
  readonly unsupported: Readonly<Record<VersionScheme, VersionAnswer>>;
  /** The 406 for a consumer pinned to a version the policy no longer lists (it must pin another). */
  readonly unlistedPin: VersionAnswer;
}

interface VersionSummary {
  version: number;
  phase: Phase;
  announced: string | null;
  sunset: string | null;
  successor: number | null;
  brownouts: { start: string; end: string }[];
  /** Whether a request needs an API-Key now, and since when one is (or will be) needed (null: never). */
  consumer_key: 'optional' | 'required';
  consumer_key_required_from: string | null;
  /** Since when consumers new to the version are refused (null: never). */
  closed_to_new: string | null;
  /** The migration guide to the successor, for a deprecated or removed version. */
  changes?: string;
}

/** A move of the default announced and not yet due, as the status page and the default watch tell it. */
export interface UpcomingDefaultChange extends DefaultVersionChange {
  /** The default it replaces. */
  readonly from: number;
}

export interface VersionPolicy {
  /** The version a request that names none gets at `nowMs`: default_version, moved by its scheduled changes. */
  defaultAt(nowMs: number): number;
  /** The scheduled moves of the default, ascending (none: default_version stays). */
  readonly defaultChanges: readonly DefaultVersionChange[];
  /** The next move of the default when it is announced at `nowMs` and not yet due; undefined otherwise. */
  upcomingDefaultChange(nowMs: number): UpcomingDefaultChange | undefined;
  /** Listed versions, ascending. */
  readonly versions: readonly VersionEntry[];
  /** The versioned resources (`/orders/:id`), each with the versions that have it. */
  readonly resources: readonly ListedResource[];
  /**
   * Its versions declared as changes, compiled with the policy (translation/compile.ts): who serves each, and the
   * translation of each resource's requests, answers and documents. A version with `compare` is not among them: the
   * backend's own route serves it.
   */
  readonly translations: CompiledTranslations;
  /**
   * Every version's declarations as written, a version with `compare` included (served by its own route, it is
   * compared with its successor translated back by them: comparison/): `translations` when none has `compare`.
   */
  readonly declared: CompiledTranslations;
  /** The enabled version schemes and how each reads a request. */
  readonly schemes: RequestSchemes;
  /**
   * The one decision for every scheme, given what the request names in each enabled one (undefined:
   * names none, or the scheme is off). `path` is the path version's label, undefined on a bare path.
   * The first named (path, header, query, media type) must be exactly a listed version, else 406 (a
   * path version that is none: undefined, the route's 404); every later one must be the same text,
   * else 400. Nothing named: default_version.
   */
  resolve(
    path: string | undefined,
    header: string | undefined,
    query: string | undefined,
    mediaType: string | undefined,
    nowMs: number,
  ): VersionAnswer | undefined;
  /**
   * The answer for a request that names no version from a consumer pinned to `pin`: that version's, as a
   * request naming it gets (410 once removed or in a brownout), selected by "pin"; 406 once it is not listed.
   */
  resolvePin(pin: number, nowMs: number): VersionAnswer;
  phaseOf(entry: VersionEntry, nowMs: number): Phase;
  /** The brownout window a version is in at `nowMs`, if any. */
  brownoutAt(entry: VersionEntry, nowMs: number): { start: number; end: number } | undefined;
  /** The policy as `GET /versions` shows it at `nowMs`. */
  describe(nowMs: number): {
    default_version: number;
    default_version_changes: { at: string; to: number; announced: string }[];
    versions: VersionSummary[];
  };
}

const iso = (epochMs: number | undefined): string | null =>
  epochMs === undefined ? null : new Date(epochMs).toISOString();

function phaseOf(entry: VersionEntry, nowMs: number): Phase {
  if (entry.sunset !== undefined && nowMs >= entry.sunset) return 'removed';
  if (entry.announced !== undefined && nowMs >= entry.announced) return 'deprecated';
  return 'current';
}

/** The key requirement as `GET /versions` shows it: now, and since when ("required" without a date: null). */
function keyFields(
  entry: VersionEntry,
  nowMs: number,
): Pick<VersionSummary, 'consumer_key' | 'consumer_key_required_from'> {
  const from = keysRequiredFrom(entry);
  return {
    consumer_key: from !== undefined && from <= nowMs ? 'required' : 'optional',
    consumer_key_required_from: from === undefined || !Number.isFinite(from) ? null : iso(from),
  };
}

/** Windows are [start, end): a request at `end` is served again. */
function brownoutAt(entry: VersionEntry, nowMs: number): { start: number; end: number } | undefined {
  return entry.brownouts?.find(({ start, end }) => nowMs >= start && nowMs < end);
}

/** Every instant at which some answer changes, ascending. */
function lifecycleInstants(versions: readonly VersionEntry[], changes: readonly DefaultVersionChange[]): number[] {
  const instants = new Set<number>();
  for (const { at, announced } of changes) instants.add(at).add(announced);
  for (const entry of versions) {
    if (entry.announced !== undefined) instants.add(entry.announced);
    if (entry.sunset !== undefined) instants.add(entry.sunset);
    for (const { start, end } of entry.brownouts ?? []) instants.add(start).add(end);
    if (entry.closed_to_new !== undefined) instants.add(entry.closed_to_new);
    const keysFrom = keysRequiredFrom(entry);
    if (keysFrom !== undefined && Number.isFinite(keysFrom)) instants.add(keysFrom);
  }
  return [...instants].sort((a, b) => a - b);
}

function linkTo(url: string | undefined, rel: string, type?: string): string {
  return url === undefined ? '' : `, <${url}>; rel="${rel}"${type === undefined ? '' : `; type="${type}"`}`;
}

/** How a conflict's details name where a version came from, and what the request should send instead. */
function schemeTexts(
  schemes: RequestSchemes,
): Record<VersionScheme, { source: string; instead: (label: string) => string }> {
  return {
    // The path is always named first, so nothing is ever sent instead of it.
    path: { source: 'the path', instead: () => '' },
    header: {
      source: 'the API-Version header',
      instead: (label) => `send no API-Version header or exactly "${label}"`,
    },
    query: {
      source: `the query parameter ${schemes.queryParameter}`,
      instead: (label) => `send no ${schemes.queryParameter} query parameter or exactly "${label}"`,
    },
    media_type: {
      source: 'the Accept media type',
      instead: (label) => `send no versioned media type in Accept or exactly ${schemes.mediaTypeOf(label)}`,
    },
  };
}

/** What every answer of one period shares: the policy, the time, the discovery headers and the Vary values. */
interface PeriodContext {
  readonly file: PolicyFile;
  readonly schemes: RequestSchemes;
  readonly texts: Record<VersionScheme, { source: string; instead: (label: string) => string }>;
  readonly nowMs: number;
  /** `Vary` (when a request header can change the answer) and the discovery headers of every answer. */
  readonly discovery: readonly (readonly [PolicyHeader, string])[];
  /**
   * What a request naming no version gets depends on who asks once consumers are pinned: a shared cache must keep
   * one consumer's answer from another (and from requests without a key).
   */
  readonly keyVary: string;
  /** The header announcing the next move of the default, on the answers it moves; undefined while none is announced. */
  readonly defaultChange: readonly [PolicyHeader, string] | undefined;
}

/** The next move of the default that is announced and not yet due at `nowMs`, with the default it replaces. */
function upcomingChange(file: PolicyFile, nowMs: number): UpcomingDefaultChange | undefined {
  const changes = file.default_version_changes ?? [];
  const next = changes.findIndex(({ at }) => at > nowMs);
  const change = changes[next];
  if (change === undefined || change.announced > nowMs) return undefined;
  return { ...change, from: next === 0 ? file.default_version : (changes[next - 1] as DefaultVersionChange).to };
}

function versionStates(versions: readonly VersionEntry[], nowMs: number): VersionState[] {
  return versions.map((entry) => {
    const phase = phaseOf(entry, nowMs);
    const window = phase === 'deprecated' ? brownoutAt(entry, nowMs) : undefined;
    return { entry, label: String(entry.version), phase, brownoutEnd: window?.end ?? null };
  });
}

/** `API-Supported-Versions`, `API-Deprecated-Versions` while any is deprecated, and the schemes' `Vary` first. */
function discoveryHeaders(states: readonly VersionState[], schemes: RequestSchemes): [PolicyHeader, string][] {
  const listOf = (phase: Phase) =>
    states
      .filter((state) => state.phase === phase)
      .map((state) => state.label)
      .join(', ');
  const discovery: [PolicyHeader, string][] = [['api-supported-versions', listOf('current')]];
  if (schemes.vary !== '') discovery.unshift(['vary', schemes.vary]);
  const deprecatedList = listOf('deprecated');
  if (deprecatedList !== '') discovery.push(['api-deprecated-versions', deprecatedList]);
  return discovery;
}

/** The headers with `Vary` naming API-Key too, for the answers to requests that name no version. */
function varyingOnKey(
  headers: readonly (readonly [PolicyHeader, string])[],
  keyVary: string,
): (readonly [PolicyHeader, string])[] {
  return headers[0]?.[0] === 'vary' ? [['vary', keyVary], ...headers.slice(1)] : [['vary', keyVary], ...headers];
}

/** A refusal that resolves to no version (400, 406). */
function refusal(context: PeriodContext, selectedBy: SelectedBy, failure: Failure): VersionAnswer {
  return {
    version: null,
    selectedBy,
    phase: null,
    failure,
    headers: context.discovery,
    sunset: null,
    successor: null,
    extraLinks: '',
    vary: context.schemes.vary,
    keyRequired: false,
    closedToNew: null,
    labels: { version: 'invalid', deprecated: 'false', selected_by: selectedBy },
  };
}

/** What a version's phase puts on its answers: the headers, and the 410 when it is removed or browned out. */
function phaseHeaders(
  context: PeriodContext,
  { entry, label, phase, brownoutEnd }: VersionState,
): { headers: (readonly [PolicyHeader, string])[]; failure: Failure | null } {
  const { discovery, file } = context;
  const sunset = entry.sunset === undefined ? '' : imfFixdate(entry.sunset);
  const deprecation = file.deprecation_header === 'date' ? `@${Math.floor((entry.announced ?? 0) / 1000)}` : 'true';
  if (phase === 'current') return { headers: [...discovery, ['api-version', label]], failure: null };
  if (phase === 'removed') {
    const details = `version ${label} was removed on ${sunset}; use version ${entry.successor}`;
    return { headers: [...discovery, ['sunset', sunset]], failure: { status: 410, error: 'version_removed', details } };
  }
  if (brownoutEnd !== null) {
    const until = imfFixdate(brownoutEnd);
    const details =
      `version ${label} is browned out until ${until}; it will be removed on ${sunset}; ` +
      `use version ${entry.successor}`;
    return {
      headers: [...discovery, ['deprecation', deprecation], ['sunset', sunset], ['retry-after', until]],
      failure: { status: 410, error: 'version_brownout', details },
    };
  }
  return {
    headers: [...discovery, ['api-version', label], ['deprecation', deprecation], ['sunset', sunset]],
    failure: null,
  };
}

/** The 400s of a request whose first named scheme is `anchor`, per later scheme that names another version. */
function conflictsOf(
  context: PeriodContext,
  label: string,
  anchor: VersionScheme,
): Partial<Record<VersionScheme, VersionAnswer>> {
  const { texts } = context;
  return Object.fromEntries(
    VERSION_SCHEMES.slice(VERSION_SCHEMES.indexOf(anchor) + 1).map((other) => [
      other,
      refusal(context, anchor, {
        status: 400,
        error: 'conflicting_version',
        details: `${texts[anchor].source} selects version ${label}; ${texts[other].instead(label)}`,
      }),
    ]),
  );
}

function answersOf(context: PeriodContext, state: VersionState): AnswersOfVersion {
  const { entry, label, phase } = state;
  const { nowMs, schemes, keyVary } = context;
  const warned = phase !== 'current';
  const { headers, failure } = phaseHeaders(context, state);
  const unnamed = varyingOnKey(headers, keyVary);
  const closedToNew =
    phase === 'deprecated' && entry.closed_to_new !== undefined && nowMs >= entry.closed_to_new
      ? entry.closed_to_new
      : null;
  const extraLinks = warned
    ? `${linkTo(entry.deprecation_link, 'deprecation', 'text/html')}${linkTo(entry.sunset_link, 'sunset')}`
    : '';
  // Only the requests the default serves move with it; a consumer's pin keeps its version.
  const byDefault = context.defaultChange === undefined ? unnamed : [...unnamed, context.defaultChange];
  const answer = (selectedBy: SelectedBy): VersionAnswer => {
    const namesNone = selectedBy === 'default' || selectedBy === 'pin';
    return {
      version: entry.version,
      selectedBy,
      phase,
      failure,
      headers: selectedBy === 'default' ? byDefault : namesNone ? unnamed : headers,
      sunset: entry.sunset ?? null,
      successor: warned ? (entry.successor ?? null) : null,
      extraLinks,
      vary: namesNone ? keyVary : schemes.vary,
      keyRequired: (keysRequiredFrom(entry) ?? Number.POSITIVE_INFINITY) <= nowMs,
      closedToNew,
      labels: { version: label, deprecated: warned ? 'true' : 'false', selected_by: selectedBy },
    };
  };
  return {
    byForm: {
      path: answer('path'),
      header: answer('header'),
      query: answer('query'),
      media_type: answer('media_type'),
      default: answer('default'),
      pin: answer('pin'),
    },
    conflicts: {
      path: conflictsOf(context, label, 'path'),
      header: conflictsOf(context, label, 'header'),
      query: conflictsOf(context, label, 'query'),
      media_type: conflictsOf(context, label, 'media_type'),
    },
  };
}

function buildPeriod(
  file: PolicyFile,
  versions: readonly VersionEntry[],
  schemes: RequestSchemes,
  nowMs: number,
): Period {
  const states = versionStates(versions, nowMs);
  const change = upcomingChange(file, nowMs);
  const context: PeriodContext = {
    file,
    schemes,
    texts: schemeTexts(schemes),
    nowMs,
    discovery: discoveryHeaders(states, schemes),
    keyVary: schemes.vary === '' ? API_KEY_VARY : `${schemes.vary}, ${API_KEY_VARY}`,
    defaultChange: change === undefined ? undefined : [DEFAULT_CHANGE_HEADER, defaultChangeValue(change.to, change.at)],
  };
  const byLabel = new Map(states.map((state) => [state.label, answersOf(context, state)]));
  const live = states.filter((state) => state.phase !== 'removed').map((state) => state.label);
  const unsupported = (scheme: VersionScheme) =>
    refusal(context, scheme, {
      status: 406,
      error: 'unsupported_version',
      details: `supported versions: ${live.join(', ')}`,
    });
  return {
    byLabel,
    fallback: byLabel.get(String(defaultVersionAt(file, nowMs))) as AnswersOfVersion,
    unsupported: Object.fromEntries(VERSION_SCHEMES.map((scheme) => [scheme, unsupported(scheme)])) as Record<
      VersionScheme,
      VersionAnswer
    >,
    unlistedPin: {
      ...refusal(context, 'pin', {
        status: 406,
        error: 'unsupported_version',
        details: `the pinned version is no longer listed; pin one of: ${live.join(', ')}`,
      }),
      headers: varyingOnKey(context.discovery, context.keyVary),
      vary: context.keyVary,
    },
  };
}

/** Where `GET /versions/{n}/changes` serves the migration guide from version n to its successor. */
export const changesPath = (version: number): string => `/versions/${version}/changes`;

/** The version a `/versions/{n}/…` path names: only its decimal does (`01`, `1.0`, `x` name none). */
export const versionInPath = (label: string): number | undefined =>
  /^[1-9][0-9]{0,8}$/.test(label) ? Number(label) : undefined;

/** The answer for a request whose first named version is `label` in `anchor`, given what the later schemes name. */
function settle(
  period: Period,
  anchor: VersionScheme,
  label: string,
  header: string | undefined,
  query: string | undefined,
  mediaType: string | undefined,
): VersionAnswer | undefined {
  const answers = period.byLabel.get(label);
  if (answers === undefined) return anchor === 'path' ? undefined : period.unsupported[anchor];
  const conflicts = answers.conflicts[anchor];
  if (header !== undefined && header !== label) return conflicts.header;
  if (query !== undefined && query !== label) return conflicts.query;
  if (mediaType !== undefined && mediaType !== label) return conflicts.media_type;
  return answers.byForm[anchor];
}

/**
 * The version policy: the one place that knows which versions exist, when each is deprecated,
 * browned out or removed, which status and headers a request gets, and how a version declared as changes is served. Routes ask it and never look
 * at dates themselves; time is always passed in, so tests control the clock.
 */
export function createVersionPolicy(
  file: PolicyFile,
  { served: translations, declared }: PolicyTranslations = compilePolicyTranslations(file),
): VersionPolicy {
  const versions = [...file.versions].sort((a, b) => a.version - b.version);
  const schemes = createRequestSchemes(file);
  const changes = file.default_version_changes ?? [];
  const instants = lifecycleInstants(versions, changes);
  // periods[i] holds between instants[i - 1] (inclusive) and instants[i] (exclusive).
  const periods = [
    buildPeriod(file, versions, schemes, Number.NEGATIVE_INFINITY),
    ...instants.map((instant) => buildPeriod(file, versions, schemes, instant)),
  ];
  const periodAt = (nowMs: number): Period => {
    let low = 0;
    let high = instants.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((instants[middle] as number) <= nowMs) low = middle + 1;
      else high = middle;
    }
    return periods[low] as Period;
  };

  return {
    defaultAt: (nowMs) => defaultVersionAt(file, nowMs),
    defaultChanges: changes,
    upcomingDefaultChange: (nowMs) => upcomingChange(file, nowMs),
    versions,
    resources: file.resources,
    translations,
    declared,
    schemes,
    resolve(path, header, query, mediaType, nowMs) {
      const period = periodAt(nowMs);
      if (path !== undefined) {
        // The path form naming nothing else is nearly all traffic: answered without the general walk.
        if (header === undefined && query === undefined && mediaType === undefined)
          return period.byLabel.get(path)?.byForm.path;
        return settle(period, 'path', path, header, query, mediaType);
      }
      if (header !== undefined) return settle(period, 'header', header, undefined, query, mediaType);
      if (query !== undefined) return settle(period, 'query', query, undefined, undefined, mediaType);
      if (mediaType !== undefined) return settle(period, 'media_type', mediaType, undefined, undefined, undefined);
      return period.fallback.byForm.default;
    },
    resolvePin(pin, nowMs) {
      const period = periodAt(nowMs);
      return period.byLabel.get(String(pin))?.byForm.pin ?? period.unlistedPin;
    },
    phaseOf,
    brownoutAt,
    describe(nowMs) {
      return {
        default_version: defaultVersionAt(file, nowMs),
        default_version_changes: changes.map(({ at, to, announced }) => ({
          at: iso(at) as string,
          to,
          announced: iso(announced) as string,
        })),
        versions: versions.map((entry) => ({
          version: entry.version,
          phase: phaseOf(entry, nowMs),
          announced: iso(entry.announced),
          sunset: iso(entry.sunset),
          successor: entry.successor ?? null,
          brownouts: (entry.brownouts ?? []).map(({ start, end }) => ({
            start: iso(start) as string,
            end: iso(end) as string,
          })),
          ...keyFields(entry, nowMs),
          closed_to_new: iso(entry.closed_to_new),
          ...(entry.successor !== undefined && phaseOf(entry, nowMs) !== 'current'
            ? { changes: changesPath(entry.version) }
            : {}),
        })),
      };
    },
  };
}
