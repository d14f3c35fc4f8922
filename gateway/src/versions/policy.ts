import type { PolicyFile, VersionEntry } from './policy-file.js';

/** How the request chose its version (a metric label, DESIGN "Metrics"). */
export type SelectedBy = 'path' | 'header' | 'default';

/** The two path forms of SPEC's orders: bare and under /api. */
export type PathPrefix = '' | '/api';

export const VERSION_HEADER = 'api-version';
/** Every order response depends on the API-Version header, the path form's included (DESIGN). */
export const VARY_VALUE = 'API-Version';
const LINK_TAIL = '>; rel="successor-version"';

/** HTTP's IMF-fixdate (RFC 9110 §5.6.7), e.g. "Thu, 01 Jan 2099 00:00:00 GMT". */
export function imfFixdate(epochMs: number): string {
  return new Date(epochMs).toUTCString();
}

export interface Failure {
  readonly status: number;
  readonly error: string;
  readonly details: string;
}

/**
 * One answer to "which version is this request, and what does it get". The objects are precomputed
 * per (version, selected_by, phase), so answering a request allocates nothing and callers may cache
 * per object (metric children).
 */
export class Resolution {
  constructor(
    readonly kind: 'serve' | 'removed' | 'unsupported' | 'conflict',
    /** The version served or removed; undefined when the request names no valid version. */
    readonly version: number | undefined,
    readonly selectedBy: SelectedBy,
    /** `Deprecation: true` goes out (announced, before the sunset). */
    readonly deprecation: boolean,
    /** `Sunset` header value, when the version is deprecated and announced, or removed. */
    readonly sunset: string | undefined,
    /** The request's answer when it is not proxied (400, 406, 410). */
    readonly failure: Failure | undefined,
    /** Successor links by prefix; the header form always links to the bare path form. */
    private readonly linkHeads: Readonly<Record<PathPrefix, string>> | undefined,
    readonly labels: { readonly version: string; readonly deprecated: 'true' | 'false'; readonly selected_by: SelectedBy },
  ) {}

  /** True when the consumer log must name this request (deprecated or removed version). */
  get onRetiringVersion(): boolean {
    return this.labels.deprecated === 'true';
  }

  /** `Link: <{prefix}/v{successor}/orders/{id}>; rel="successor-version"`, or undefined when none is due. */
  successorLink(prefix: PathPrefix, id: string): string | undefined {
    if (this.linkHeads === undefined) return undefined;
    return `${this.linkHeads[prefix]}${encodeURIComponent(id)}${LINK_TAIL}`;
  }
}

const enum Phase {
  Active = 0,
  Deprecated = 1,
  Removed = 2,
}

/** A version of the policy; route code holds these and hands them back to the policy. */
export interface PolicyVersion {
  readonly version: number;
}

interface Version extends PolicyVersion {
  readonly label: string;
  readonly announcedMs: number;
  readonly sunsetMs: number;
  readonly byPhase: Readonly<Record<SelectedBy, readonly [Resolution, Resolution, Resolution]>>;
  readonly conflict: Resolution;
}

function buildVersion(entry: VersionEntry): Version {
  const label = String(entry.version);
  const sunset = entry.sunset === undefined ? undefined : imfFixdate(entry.sunset);
  const successor = entry.successor;
  const removedDetails = `version ${label} was removed on ${sunset ?? ''}; use version ${successor ?? ''}`;
  const resolutions = (selectedBy: SelectedBy): [Resolution, Resolution, Resolution] => {
    const heads =
      successor === undefined
        ? undefined
        : selectedBy === 'path'
          ? { '': `</v${successor}/orders/`, '/api': `</api/v${successor}/orders/` }
          : { '': `</v${successor}/orders/`, '/api': `</v${successor}/orders/` };
    const labels = (deprecated: boolean) => ({ version: label, deprecated: deprecated ? 'true' : 'false', selected_by: selectedBy }) as const;
    return [
      new Resolution('serve', entry.version, selectedBy, false, undefined, undefined, undefined, labels(false)),
      new Resolution('serve', entry.version, selectedBy, true, sunset, undefined, heads, labels(true)),
      new Resolution('removed', entry.version, selectedBy, false, sunset, { status: 410, error: 'version_removed', details: removedDetails }, heads, labels(true)),
    ];
  };
  return {
    version: entry.version,
    label,
    // Infinity keeps the phase check branch-free for versions that are never deprecated or removed.
    announcedMs: entry.announced ?? Number.POSITIVE_INFINITY,
    sunsetMs: entry.sunset ?? Number.POSITIVE_INFINITY,
    byPhase: { path: resolutions('path'), header: resolutions('header'), default: resolutions('default') },
    conflict: new Resolution(
      'conflict',
      undefined,
      'path',
      false,
      undefined,
      { status: 400, error: 'conflicting_version', details: `the path selects version ${label}; send no API-Version header or exactly "${label}"` },
      undefined,
      { version: 'invalid', deprecated: 'false', selected_by: 'path' },
    ),
  };
}

function phaseAt(version: Version, nowMs: number): Phase {
  if (nowMs >= version.sunsetMs) return Phase.Removed;
  if (nowMs >= version.announcedMs) return Phase.Deprecated;
  return Phase.Active;
}

/**
 * The version policy (DESIGN "Version policy"): the one place that knows which versions exist,
 * when each is deprecated or removed, and which headers and status a request gets. Routes ask it
 * and never look at dates themselves. Time is always passed in, so tests control the clock.
 */
export class VersionPolicy {
  readonly versions: readonly PolicyVersion[];
  readonly defaultVersion: number;
  /** Versions with a sunset, for the api_version_sunset_timestamp_seconds gauge. */
  readonly sunsets: readonly { version: number; epochSeconds: number }[];
  private readonly byLabel: ReadonlyMap<string, Version>;
  private readonly fallback: Version;
  private readonly all: readonly Version[];
  /** The 406 answer per list of live versions: its details never offer a removed version. */
  private readonly unsupportedByLive = new Map<string, Resolution>();

  constructor(file: PolicyFile) {
    this.all = file.versions.map(buildVersion).sort((a, b) => a.version - b.version);
    this.versions = this.all;
    this.byLabel = new Map(this.all.map((version) => [version.label, version]));
    const fallback = this.all.find((version) => version.version === file.default_version);
    if (fallback === undefined) throw new Error(`default_version ${file.default_version} is not a listed version`);
    this.fallback = fallback;
    this.defaultVersion = file.default_version;
    this.sunsets = this.all
      .filter((version) => Number.isFinite(version.sunsetMs))
      .map((version) => ({ version: version.version, epochSeconds: version.sunsetMs / 1000 }));
  }

  /** Path form: the route already chose `pathVersion`; a header may only repeat it exactly. */
  resolvePath(pathVersion: PolicyVersion, header: string | undefined, nowMs: number): Resolution {
    const version = pathVersion as Version;
    if (header !== undefined && header !== version.label) return version.conflict;
    return version.byPhase.path[phaseAt(version, nowMs)];
  }

  /**
   * Header form: absent → default_version; exactly the decimal of a listed version → that version
   * (a removed one answers 410); anything else ("01", "1.0", "2, 1", "") → 406.
   */
  resolveHeader(header: string | undefined, nowMs: number): Resolution {
    if (header === undefined) return this.fallback.byPhase.default[phaseAt(this.fallback, nowMs)];
    const version = this.byLabel.get(header);
    if (version === undefined) return this.unsupported(nowMs);
    return version.byPhase.header[phaseAt(version, nowMs)];
  }

  // An error path: building the list here is cheaper than keeping one per sunset in sync.
  private unsupported(nowMs: number): Resolution {
    const live = this.all.filter((version) => phaseAt(version, nowMs) !== Phase.Removed).map((version) => version.label);
    const key = live.join(', ');
    let resolution = this.unsupportedByLive.get(key);
    if (resolution === undefined) {
      resolution = new Resolution(
        'unsupported',
        undefined,
        'header',
        false,
        undefined,
        { status: 406, error: 'unsupported_version', details: `supported versions: ${key}` },
        undefined,
        { version: 'invalid', deprecated: 'false', selected_by: 'header' },
      );
      this.unsupportedByLive.set(key, resolution);
    }
    return resolution;
  }
}
