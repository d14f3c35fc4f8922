import type { GuideChange } from '../../changes/guide.js';
import type { MigrationGuides } from '../../changes/guides.js';
import { callOfForm, type CallForm } from '../../versions/call-forms.js';
import type { VersionPolicy } from '../../versions/policy.js';
import { operationParts } from '../ledger.js';
import type { ConsumerUsageReader, RequestFieldRow, RequestFieldsReader, UsageRow } from '../store.js';
import { countedFrom, stillCallsVersion, unversionedVersion } from '../reports/activity.js';
import { ACTIVE_WINDOW_MS } from '../reports/version-consumers.js';
import {
  changesBetween,
  changesOperation,
  followedOperation,
  oneStepOn,
  operationKey,
  ownPrefix,
  stepsBetween,
  type OperationAt,
  type StepChange,
} from './changes-between.js';

/**
 * What moving from one version to a later one would change for one consumer, judged on the calls it made
 * (docs/consumers.md#upgrade-preview): every declared change and every removed operation on the way, each saying
 * whether it touches an operation the consumer called in the last 30 days (and which request fields it sent that the
 * change names), and a verdict: `safe` (nothing that breaks touches its calls), `review` (a breaking change does,
 * listed) or `blocked` (it calls an operation the target version does not have).
 */

export type Verdict = 'safe' | 'review' | 'blocked';

/** A request field a consumer sent on an operation, with how often and when last. */
export interface SentField {
  field: string;
  requests: number;
  last_seen: string;
}

/** One operation the consumer called on the version it would leave. */
export interface PreviewCall {
  /** As the ledger names it: `GET /v1/orders/{id}`, `GET /orders/{id} header`. */
  operation: string;
  form: CallForm | null;
  /** The call as it made it, and what it sends for the target version in that form. */
  call: string;
  instead: string | null;
  requests: number;
  last_seen: string;
  fields_sent: SentField[];
}

/** One declared change or removed operation on the way, and what of the consumer's it touches. */
export type PreviewChange = GuideChange & {
  /** The step it belongs to: from this version to its successor. */
  version: number;
  successor: number;
  /** The operation as that step's version names it: `GET /v1/orders/{id}`. */
  operation: string;
  /**
   * It touches a call of the consumer: its answers (their bodies: any call but HEAD), a request field it sent, or the
   * operation's path, status or headers (gone included).
   */
  affects: boolean;
  /** The consumer's calls it touches (as `calls` names them). */
  calls: string[];
  /** The request fields the consumer sent that it names, as the consumer's version names them. */
  fields_sent: string[];
};

export interface UpgradePreview {
  consumer: string;
  /** The version the consumer would leave (its pin, else default_version) and the one it would move to. */
  from: number;
  to: number;
  /** From when its calls are counted: 30 days back, or its last pin move when later (RFC 3339). */
  calls_since: string;
  verdict: Verdict;
  calls: PreviewCall[];
  changes: PreviewChange[];
  /** The calls of operations `to` does not have: why it is blocked. */
  blocking: string[];
}

const FIELD_SEPARATORS = ['.', '[].'];

/** A sent field the change names: the field itself, or one inside it (`customer.id` in `customer`). */
const names = (change: string, sent: string): boolean =>
  sent === change || FIELD_SEPARATORS.some((separator) => sent.startsWith(`${change}${separator}`));

/** A field under its name one step on: a rename or conversion of it (or of an object it is in) moves it. */
function renamedBy(field: string, changes: readonly StepChange[]): string {
  for (const { change } of changes) {
    if (change.to === undefined || !names(change.name, field)) continue;
    return `${change.to}${field.slice(change.name.length)}`;
  }
  return field;
}

/**
 * A change of bodies, which a HEAD answer has none of: fields, an envelope, what a module translates. Every other
 * change of an operation (its path, status, headers, parameters) reaches a HEAD call as it reaches GET's.
 */
const changesBodies = (change: GuideChange): boolean =>
  change.kind === 'field' ||
  change.kind === 'response' ||
  change.kind === 'request body' ||
  change.change === 'translated by module';

/** The operation a call of `version` is of: its key across versions and forms, and its path below the version. */
function operationAtOf(operation: string, version: number): OperationAt {
  const { method, path } = operationParts(operation);
  return { key: operationKey(method, path, version), template: path.replace(ownPrefix(version), '') };
}

/**
 * The preview from the changes on the way and the consumer's calls of `from`: pure, so the status page and the
 * notices judge a consumer exactly as its own preview does. A change touches a call of its operation (a HEAD call
 * also by what happens to GET's): every call by the removal of the operation or a change of its path, status or
 * headers; a call but HEAD by a change of the bodies (its answers carry them); any call that sent a request field the
 * change names.
 * Calls are followed through the steps to where each step's endpoint renames move their operations (oneStepOn), and
 * their fields under the names each step's renames and conversions give them.
 */
export function judgePreview(
  from: number,
  changes: readonly StepChange[],
  calls: readonly PreviewCall[],
): Pick<UpgradePreview, 'verdict' | 'changes' | 'blocking'> {
  /** Each call, with its operation as the current step names it and its sent fields by that step's name → own. */
  const followed = calls.map((call) => ({
    call,
    head: operationParts(call.operation).method === 'HEAD',
    at: operationAtOf(call.operation, from),
    fields: new Map(call.fields_sent.map(({ field }) => [field, field])),
  }));
  const previewed: PreviewChange[] = [];
  const blocking = new Set<string>();
  for (const step of [...new Set(changes.map((change) => change.from))]) {
    const ofStep = changes.filter((change) => change.from === step);
    for (const stepChange of ofStep) {
      const { change, method } = stepChange;
      const touched: string[] = [];
      const sent = new Set<string>();
      for (const { call, head, at, fields } of followed) {
        if (!changesOperation(stepChange, at.key)) continue;
        const named = [...fields.entries()].filter(([now]) => names(change.name, now)).map(([, own]) => own);
        for (const own of named) sent.add(own);
        if (stepChange.removal || !head || !changesBodies(change) || named.length > 0) touched.push(call.call);
      }
      if (stepChange.removal) for (const call of touched) blocking.add(call);
      previewed.push({
        ...change,
        version: stepChange.from,
        successor: stepChange.to,
        operation: `${method} ${stepChange.path}`,
        affects: touched.length > 0,
        calls: touched,
        fields_sent: [...sent].sort(),
      });
    }
    // The next step names the operations and fields as this step's successor does.
    for (const one of followed) {
      const own = ofStep.filter((change) => changesOperation(change, one.at.key));
      for (const [now, name] of [...one.fields]) {
        const next = renamedBy(now, own);
        if (next === now) continue;
        one.fields.delete(now);
        one.fields.set(next, name);
      }
      one.at = oneStepOn(own, one.at);
    }
  }
  const breaking = previewed.some((change) => change.affects && change.breaking);
  const verdict: Verdict = blocking.size > 0 ? 'blocked' : breaking ? 'review' : 'safe';
  return { verdict, changes: previewed, blocking: [...blocking] };
}

/** The consumer's calls of `version` counted from `sinceMs` (activity.ts), each with the fields it sent. */
function previewCalls(
  rows: readonly UsageRow[],
  fields: readonly RequestFieldRow[],
  version: number,
  to: number,
  changes: readonly StepChange[],
  unversioned: number,
  policy: VersionPolicy,
): PreviewCall[] {
  return rows
    .filter((row) => row.version === version && stillCallsVersion(row.operation, version, unversioned))
    .sort((a, b) => (a.operation < b.operation ? -1 : a.operation > b.operation ? 1 : 0))
    .map((row) => {
      const { method, path, form } = operationParts(row.operation);
      const own = ownPrefix(version).exec(path);
      const template = own === null ? path : path.slice(own[0].length);
      // Where `to` serves it: moved by the endpoint renames on the way, as the changes are followed.
      const there = followedOperation(changes, operationAtOf(row.operation, version)).template;
      const bare = {
        method,
        template,
        prefix: own?.[1] ?? '',
        ...(there === template ? {} : { successorTemplate: there }),
      };
      const called = callOfForm(form, bare, version, to === version ? null : to, policy.schemes);
      return {
        operation: row.operation,
        form,
        call: called.call,
        instead: called.instead,
        requests: row.requests,
        last_seen: row.last_seen,
        fields_sent: fields
          .filter((field) => field.operation === row.operation)
          .map(({ field, requests, last_seen }) => ({ field, requests, last_seen })),
      };
    });
}

export interface UpgradePreviewInput {
  consumerId: string;
  reader: ConsumerUsageReader & RequestFieldsReader;
  guides: MigrationGuides;
  policy: VersionPolicy;
  /** The version to move from: the consumer's pin (else default_version) unless given. */
  from?: number;
  to: number;
  nowMs: number;
  /** Sent with the guides' document requests to the backend. */
  requestId: string;
}

/** Why a preview cannot be made: no such consumer, a `to` that does not follow `from`, the documents unavailable. */
export type PreviewOutcome =
  | { ok: true; preview: UpgradePreview }
  | { ok: false; status: 404; reason: string }
  | { ok: false; status: 422; reason: string; versions: number[] }
  | { ok: false; status: 502 | 504; reason: string };

/** The versions a preview from `from` may name: `from` and those after it along the successors, not removed. */
function previewableVersions(policy: VersionPolicy, from: number, nowMs: number): number[] {
  const versions: number[] = [];
  for (const entry of policy.versions) {
    if (policy.phaseOf(entry, nowMs) === 'removed') continue;
    if (stepsBetween(policy, from, entry.version) !== undefined) versions.push(entry.version);
  }
  return versions;
}

/**
 * One consumer's upgrade preview from its version (its pin, else default_version) to `to`: its calls of that
 * version counted over the last 30 days (after its last move, activity.ts) with the fields it sent, judged against
 * every declared change and removed operation on the way (the migration guides of each step).
 */
export async function upgradePreview({
  consumerId,
  reader,
  guides,
  policy,
  from: asked,
  to,
  nowMs,
  requestId,
}: UpgradePreviewInput): Promise<PreviewOutcome> {
  const pin = await reader.pinOf(consumerId);
  if (pin === undefined) return { ok: false, status: 404, reason: 'consumer not found' };
  const unversioned = unversionedVersion(pin.pinned_version, policy.defaultAt(nowMs));
  const from = asked ?? unversioned;
  const versions = previewableVersions(policy, from, nowMs);
  const steps = versions.includes(to) ? stepsBetween(policy, from, to) : undefined;
  if (steps === undefined)
    return {
      ok: false,
      status: 422,
      reason: `versions a preview from v${from} may name: ${versions.join(', ')}`,
      versions,
    };
  const sinceMs = countedFrom(nowMs - ACTIVE_WINDOW_MS, pin.pinned_at);
  const between = await changesBetween(guides, policy, steps, requestId);
  if (!between.ok) return between;
  const [rows, fields] = await Promise.all([
    reader.usageOf(consumerId, sinceMs),
    reader.requestFieldsOf(from, sinceMs, consumerId),
  ]);
  const calls = previewCalls(rows, fields, from, to, between.changes, unversioned, policy);
  const judged =
    from === to ? { verdict: 'safe' as const, changes: [], blocking: [] } : judgePreview(from, between.changes, calls);
  return {
    ok: true,
    preview: { consumer: consumerId, from, to, calls_since: new Date(sinceMs).toISOString(), ...judged, calls },
  };
}
