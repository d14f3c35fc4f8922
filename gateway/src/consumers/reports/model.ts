import { callOfForm, type CallForm } from '../../versions/call-forms.js';
import type { GuideChange, MigrationGuide } from '../../changes/guide.js';
import type { MigrationGuides } from '../../changes/guides.js';
import type { VersionEntry } from '../../versions/policy-file.js';
import { changesPath, type VersionPolicy } from '../../versions/policy.js';
import type { RequestSchemes } from '../../versions/schemes.js';
import { operationParts } from '../ledger.js';
import type { ConsumerUsageReader, UsageRow } from '../store.js';
import { countedFrom, doneWith, stillCallsVersion, unversionedVersion } from './activity.js';

/** One operation a consumer called on a version, and what of the migration guide concerns it. */
export interface OperationReport {
  /** The method and the template of the path the request used: `GET /v1/orders/{id}`, `GET /orders/{id}`. */
  operation: string;
  /** How the requests named the version; null for requests on a bare path counted before the form was recorded. */
  form: CallForm | null;
  /** The call as the consumer made it (`GET /orders/{id} with API-Version: 1`). */
  call: string;
  /** What it sends for the successor in the same form (`GET /orders/{id} with API-Version: 2`); null: none. */
  instead: string | null;
  requests: number;
  last_seen: string;
  /** The breaking changes of the guide to the successor that touch this operation. */
  breaking_changes: GuideChange[];
}

/** What one consumer must change about one deprecated or removed version it called. */
export interface VersionReport {
  version: number;
  phase: 'deprecated' | 'removed';
  sunset: string;
  successor: number | null;
  /** Where the whole migration guide is: `/versions/{n}/changes`. */
  changes: string;
  /**
   * Nothing of the consumer's is on the version any more: its requests that name no version get another one, and it
   * made no call of the version since the report counts from (activity.ts).
   */
  done: boolean;
  /** Its calls of the version since the report counts from, by operation; none when it is done. */
  operations: OperationReport[];
}

/**
 * How one operation is named across the places that name it: the ledger (`GET /v1/orders/{id}`, `GET
 * /api/v1/orders/{id}`, and the header form's `GET /orders/{id}`, whose version is the row's) and the guide
 * (`/v1/orders/{id}` and `/api/v1/orders/{id}` of the version being left). The gateway serves the three
 * forms of a resource from one backend route, so they are one operation: the method, then the path without
 * `/api`, without its version segment, and with its parameters unnamed (a parameter's name is no part of
 * what a client calls).
 */
function operationKey(method: string, path: string, version: number): string {
  const rest = path.replace(new RegExp(`^(?:/api)?/v${version}(?=/|$)`), '').replace(/\{[^}]*\}/g, '{}');
  return `${method} ${rest === '' ? '/' : rest}`;
}

/** The guide's breaking changes per operation key, each change once (the `/api` form repeats the bare form's). */
function breakingChangesByOperation(guide: MigrationGuide): Map<string, Map<string, GuideChange>> {
  const byOperation = new Map<string, Map<string, GuideChange>>();
  for (const operation of guide.operations) {
    const key = operationKey(operation.method, operation.path, guide.version);
    let changes = byOperation.get(key);
    if (changes === undefined) byOperation.set(key, (changes = new Map<string, GuideChange>()));
    for (const change of operation.changes) if (change.breaking) changes.set(JSON.stringify(change), change);
  }
  return byOperation;
}

/**
 * The breaking changes that touch a ledger operation: the guide's for its method and path, and those of the
 * whole path item (method `*`, e.g. a parameter every method shares). HEAD is GET without the body (RFC 9110),
 * so a HEAD the documents do not describe takes GET's changes.
 */
function breakingChangesOf(
  method: string,
  path: string,
  version: number,
  byOperation: Map<string, Map<string, GuideChange>>,
): GuideChange[] {
  const own =
    byOperation.get(operationKey(method, path, version)) ??
    (method === 'HEAD' ? byOperation.get(operationKey('GET', path, version)) : undefined);
  const shared = byOperation.get(operationKey('*', path, version));
  return [...new Map([...(own ?? []), ...(shared ?? [])]).values()];
}

/**
 * A ledger operation of `version` as the reports name it: the method and path the requests used, how they named
 * the version, the call in that form, and what to send instead for `successor` in the same form.
 */
export function operationCall(
  operation: string,
  version: number,
  successor: number | null,
  schemes: RequestSchemes,
  guide: MigrationGuide | null = null,
): Pick<OperationReport, 'operation' | 'form' | 'call' | 'instead'> {
  const { method, path, form } = operationParts(operation);
  const own = new RegExp(`^(/api)?/v${version}(?=/|$)`).exec(path);
  const template = own === null ? path : path.slice(own[0].length);
  const successorTemplate = guide === null ? undefined : successorTemplateOf(guide, method, template);
  const bare = {
    method,
    template,
    prefix: own?.[1] ?? '',
    ...(successorTemplate === undefined ? {} : { successorTemplate }),
  };
  return { operation: `${method} ${path}`, ...callOfForm(form, bare, version, successor, schemes) };
}

/** Where the guide says the successor serves an operation (a renamed endpoint), below its version; else undefined. */
function successorTemplateOf(guide: MigrationGuide, method: string, template: string): string | undefined {
  const key = operationKey(method, `/v${guide.version}${template}`, guide.version);
  const operation = guide.operations.find(
    (candidate) => operationKey(candidate.method, candidate.path, guide.version) === key,
  );
  if (operation === undefined) return undefined;
  const there = new RegExp(`^(?:/api)?/v${guide.successor}(/.*)$`).exec(operation.successor_path)?.[1];
  return there === undefined || operationKey(method, there, 0) === operationKey(method, template, 0)
    ? undefined
    : there;
}

/** `GET /deprecations`: one consumer's report as JSON (and the page's content). */
export interface DeprecationsReport {
  consumer: string;
  /** Its pin (null: none, it follows default_version). */
  pinned_version: number | null;
  /** From when its calls are counted (RFC 3339): `?since=` (30 days back by default), or its last move when later. */
  requests_since: string;
  /** The gateway's clock when it made the report (RFC 3339): what a check judges sunsets and windows at. */
  as_of: string;
  versions: VersionReport[];
}

/** A version the report covers: listed in the policy, deprecated or removed now. */
interface ReportedVersion {
  entry: VersionEntry & { sunset: number };
  phase: VersionReport['phase'];
}

/**
 * One version's report from the consumer's ledger rows of that version and the guide to its successor
 * (null: the version has none, so nothing is known to break). Operations by name.
 */
function versionReport(
  { entry, phase }: ReportedVersion,
  rows: readonly UsageRow[],
  guide: MigrationGuide | null,
  schemes: RequestSchemes,
  unversioned: number,
): VersionReport {
  const byOperation = guide === null ? new Map<string, Map<string, GuideChange>>() : breakingChangesByOperation(guide);
  const successor = entry.successor ?? null;
  const operations = [...rows]
    .sort((a, b) => (a.operation < b.operation ? -1 : a.operation > b.operation ? 1 : 0))
    .map((row) => {
      const called = operationCall(row.operation, entry.version, successor, schemes, guide);
      const space = called.operation.indexOf(' ');
      const [method, path] = [called.operation.slice(0, space), called.operation.slice(space + 1)];
      return {
        ...called,
        requests: row.requests,
        last_seen: row.last_seen,
        breaking_changes: breakingChangesOf(method, path, entry.version, byOperation),
      };
    });
  return {
    version: entry.version,
    phase,
    sunset: new Date(entry.sunset).toISOString(),
    successor: entry.successor ?? null,
    changes: changesPath(entry.version),
    done: doneWith(entry.version, unversioned, operations.length),
    operations,
  };
}

/**
 * The versions the policy lists as deprecated or removed at `nowMs` that the consumer ever called (`rows`: all its
 * rows) or is pinned to, ascending. A version no longer listed has no phase to report.
 */
function reportedVersions(
  policy: VersionPolicy,
  rows: readonly UsageRow[],
  pin: number | null,
  nowMs: number,
): ReportedVersion[] {
  const called = new Set(rows.map((row) => row.version));
  const reported: ReportedVersion[] = [];
  for (const entry of policy.versions) {
    const phase = policy.phaseOf(entry, nowMs);
    // A deprecated version always has a sunset (the policy file refuses one without).
    if (phase === 'current' || entry.sunset === undefined) continue;
    if (!called.has(entry.version) && pin !== entry.version) continue;
    reported.push({ entry: { ...entry, sunset: entry.sunset }, phase });
  }
  return reported;
}

export interface ConsumerReportsInput {
  consumerId: string;
  reader: ConsumerUsageReader;
  guides: MigrationGuides;
  policy: VersionPolicy;
  nowMs: number;
  /**
   * Count calls from this instant on (by the ledger's days: a day's row with a call since counts whole), or from the
   * consumer's last move when later; all of them up to that move when absent.
   */
  sinceMs?: number;
  /** Sent with the guides' document requests to the backend. */
  requestId: string;
}

/** The reports, or why the guides' documents could not be had (as the migration guide's route answers it). */
export type ConsumerReports =
  | {
      ok: true;
      /** The consumer's pin (null: none, it follows default_version). */
      pinnedVersion: number | null;
      /** From when calls are counted: the window asked, or the consumer's last move when later (epoch ms). */
      countedFromMs: number;
      versions: VersionReport[];
    }
  | { ok: false; status: 502 | 504; reason: string };

/**
 * Everything one consumer must change: for each deprecated or removed version it called (or is pinned to), the
 * operations it still calls (activity.ts) with the breaking changes of the migration guide that touch each, or that
 * it is done with the version. The one place that joins the ledger, the pins, the policy and the guides: `GET
 * /deprecations` answers it, the notices say it.
 */
export async function consumerReports({
  consumerId,
  reader,
  guides,
  policy,
  nowMs,
  sinceMs,
  requestId,
}: ConsumerReportsInput): Promise<ConsumerReports> {
  const pinRecord = await reader.pinOf(consumerId);
  const pin = pinRecord?.pinned_version ?? null;
  const fromMs = countedFrom(sinceMs ?? Number.NEGATIVE_INFINITY, pinRecord?.pinned_at ?? null);
  const unversioned = unversionedVersion(pin, policy.defaultAt(nowMs));
  const [everRows, countedRows] = await Promise.all([
    reader.usageOf(consumerId),
    Number.isFinite(fromMs) ? reader.usageOf(consumerId, fromMs) : reader.usageOf(consumerId),
  ]);
  const versions: VersionReport[] = [];
  for (const reported of reportedVersions(policy, everRows, pin, nowMs)) {
    const { version } = reported.entry;
    const outcome = await guides.get(policy, version, requestId);
    if (!outcome.ok && outcome.status !== 404) return { ok: false, status: outcome.status, reason: outcome.reason };
    const own = countedRows.filter(
      (row) => row.version === version && stillCallsVersion(row.operation, version, unversioned),
    );
    versions.push(
      versionReport(reported, own, outcome.ok ? outcome.rendered.guide : null, policy.schemes, unversioned),
    );
  }
  return { ok: true, pinnedVersion: pin, countedFromMs: fromMs, versions };
}
