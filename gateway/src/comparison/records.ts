import { shownValue, typeOf, type Difference } from './differences.js';

/**
 * What this replica's comparisons found since it started (or since a version's declarations last changed), per
 * version, resource template and field path: the figures of `GET /versions/{n}/comparison` and the status page.
 * Bounded: resources are the policy's templates, reasons a closed set, and at most 50 differing paths are kept
 * per resource (the rest are counted together).
 */

/** `api_version_comparisons_total`'s result label: a comparison made (match, differ), failed (error) or not made. */
export const COMPARISON_RESULTS = ['match', 'differ', 'error', 'skipped'] as const;
export type ComparisonResult = (typeof COMPARISON_RESULTS)[number];

/** Why a comparison failed or was not made (a closed set, shown with its count). */
export type ComparisonReason =
  /** The successor did not answer whole within `timeout_ms`. */
  | 'timeout'
  /** The successor could not be reached, or its answer broke off. */
  | 'unreachable'
  /** An answer larger than TRANSLATION_MAX_BYTES. */
  | 'too_large'
  /** A successor answer the gateway would refuse to translate (a 502 on a translated route): its reason. */
  | 'invalid_json'
  | 'depth'
  | 'collision'
  | 'not_finite'
  | 'untyped'
  /** The backend's own answer declared JSON and is none. */
  | 'own_invalid_json'
  /** `max_in_flight` comparisons of the version were under way. */
  | 'busy'
  /** The client's answer was not sent whole (the client left, or the backend's own route failed). */
  | 'unanswered';

/** One comparison's outcome. */
export interface ComparisonOutcome {
  version: number;
  /** The declarations' digest the successor's answer was translated by. */
  digest: string;
  resource: string;
  result: ComparisonResult;
  atMs: number;
  /** differ: where; empty otherwise. */
  differences: readonly Difference[];
  /** error, skipped: why. */
  reason?: ComparisonReason;
  /** The request compared: `GET /v1/orders/ord-1001` and its X-Request-Id. */
  request: string;
  requestId: string;
  /** Whether an example keeps its values (`show_values`), else only their types. */
  showValues: boolean;
}

interface Example {
  request: string;
  request_id: string;
  own: string;
  translated: string;
}

interface PathRecord {
  count: number;
  firstMs: number;
  lastMs: number;
  example: Example;
}

type Counts = Record<ComparisonResult, number>;

interface ResourceRecord {
  counts: Counts;
  reasons: Map<ComparisonReason, number>;
  firstMs: number;
  lastMs: number;
  paths: Map<string, PathRecord>;
  /** Differing paths past the 50 kept, counted together. */
  otherPaths: number;
}

interface VersionRecord {
  digest: string;
  sinceMs: number;
  resources: Map<string, ResourceRecord>;
}

/** Differing paths kept per resource; a further path counts among `other_paths`. */
const MAX_PATHS = 50;

const iso = (epochMs: number): string => new Date(epochMs).toISOString();
const noCounts = (): Counts => ({ match: 0, differ: 0, error: 0, skipped: 0 });

/** One resource's figures as `GET /versions/{n}/comparison` shows them. */
export interface ResourceComparison {
  resource: string;
  /** Comparisons made: match + differ. */
  compared: number;
  match: number;
  differ: number;
  error: number;
  skipped: number;
  /** Errors and skips by reason. */
  reasons: Partial<Record<ComparisonReason, number>>;
  first_compared: string;
  last_compared: string;
  differences: {
    path: string;
    count: number;
    first_seen: string;
    last_seen: string;
    example: Example;
  }[];
  other_paths: number;
}

/** A version's figures on this replica, since `since` (its start, or the last change of the declarations). */
export interface VersionComparison {
  declarations: string;
  since: string;
  compared: number;
  match: number;
  differ: number;
  error: number;
  skipped: number;
  resources: ResourceComparison[];
}

export interface ComparisonRecords {
  /** Counts one outcome (and calls `count` for the metric). */
  record(outcome: ComparisonOutcome): void;
  /** The version's figures under the declarations `digest`; none yet: all zero since `nowMs`. */
  of(version: number, digest: string, nowMs: number): VersionComparison;
}

export function createComparisonRecords(
  count: (version: number, resource: string, result: ComparisonResult) => void,
): ComparisonRecords {
  const versions = new Map<number, VersionRecord>();

  const versionRecord = (version: number, digest: string, nowMs: number): VersionRecord => {
    let record = versions.get(version);
    // Other declarations are other claims: what was found of the earlier ones no longer says anything.
    if (record === undefined || record.digest !== digest) {
      record = { digest, sinceMs: nowMs, resources: new Map<string, ResourceRecord>() };
      versions.set(version, record);
    }
    return record;
  };

  return {
    record(outcome) {
      count(outcome.version, outcome.resource, outcome.result);
      const { resources } = versionRecord(outcome.version, outcome.digest, outcome.atMs);
      let resource = resources.get(outcome.resource);
      if (resource === undefined) {
        resource = {
          counts: noCounts(),
          reasons: new Map(),
          firstMs: outcome.atMs,
          lastMs: outcome.atMs,
          paths: new Map(),
          otherPaths: 0,
        };
        resources.set(outcome.resource, resource);
      }
      resource.counts[outcome.result] += 1;
      resource.lastMs = Math.max(resource.lastMs, outcome.atMs);
      if (outcome.reason !== undefined)
        resource.reasons.set(outcome.reason, (resource.reasons.get(outcome.reason) ?? 0) + 1);
      const seen = new Set<string>();
      for (const difference of outcome.differences) {
        if (seen.has(difference.path)) continue;
        seen.add(difference.path);
        const known = resource.paths.get(difference.path);
        if (known !== undefined) {
          known.count += 1;
          known.lastMs = Math.max(known.lastMs, outcome.atMs);
          continue;
        }
        if (resource.paths.size >= MAX_PATHS) {
          resource.otherPaths += 1;
          continue;
        }
        const show = outcome.showValues ? shownValue : typeOf;
        resource.paths.set(difference.path, {
          count: 1,
          firstMs: outcome.atMs,
          lastMs: outcome.atMs,
          example: {
            request: outcome.request,
            request_id: outcome.requestId,
            own: show(difference.own),
            translated: show(difference.translated),
          },
        });
      }
    },
    of(version, digest, nowMs) {
      const record = versions.get(version);
      const current: VersionRecord =
        record?.digest === digest ? record : { digest, sinceMs: nowMs, resources: new Map<string, ResourceRecord>() };
      const totals = noCounts();
      const resources: ResourceComparison[] = [...current.resources.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([template, resource]) => {
          for (const result of Object.keys(totals) as ComparisonResult[]) totals[result] += resource.counts[result];
          return {
            resource: template,
            compared: resource.counts.match + resource.counts.differ,
            ...resource.counts,
            reasons: Object.fromEntries(resource.reasons),
            first_compared: iso(resource.firstMs),
            last_compared: iso(resource.lastMs),
            differences: [...resource.paths.entries()]
              .sort(([, a], [, b]) => b.count - a.count || a.firstMs - b.firstMs)
              .map(([path, { count, firstMs, lastMs, example }]) => ({
                path,
                count,
                first_seen: iso(firstMs),
                last_seen: iso(lastMs),
                example,
              })),
            other_paths: resource.otherPaths,
          };
        });
      return {
        declarations: current.digest,
        since: iso(current.sinceMs),
        compared: totals.match + totals.differ,
        ...totals,
        resources,
      };
    },
  };
}
