import type { MigrationGuides } from '../../changes/guides.js';
import type { VersionPolicy } from '../../versions/policy.js';
import { operationParts } from '../ledger.js';
import { dayOf, type ConsumerUsageReader, type RequestFieldsReader } from '../store.js';
import { countedFrom, countedOperations, unversionedVersion } from '../reports/activity.js';
import { ACTIVE_WINDOW_MS } from '../reports/version-consumers.js';
import { changesBetween } from './changes-between.js';
import { judgePreview, type Verdict } from './model.js';

/** Each consumer's verdict by id, or why none could be judged. */
export type Verdicts =
  | { readonly ok: true; readonly successor: number; readonly byConsumer: ReadonlyMap<string, Verdict> }
  | { readonly ok: false; readonly reason: string };

/**
 * The verdict of every consumer of `version` for a move to its successor, judged as its own upgrade preview judges
 * it (model.ts), from one read of the version's ledger rows and request fields for all of them: what the status page
 * shows beside each registered consumer.
 */
export async function verdictsOf(
  reader: ConsumerUsageReader & RequestFieldsReader,
  guides: MigrationGuides,
  policy: VersionPolicy,
  version: number,
  nowMs: number,
  requestId: string,
): Promise<Verdicts> {
  const successor = policy.versions.find((entry) => entry.version === version)?.successor;
  if (successor === undefined) return { ok: false, reason: `v${version} has no successor` };
  const windowMs = nowMs - ACTIVE_WINDOW_MS;
  const [between, uses, fields] = await Promise.all([
    changesBetween(guides, policy, [version, successor], requestId),
    reader.consumersOf(version, Date.parse(dayOf(windowMs))),
    reader.requestFieldsOf(version, windowMs),
  ]);
  if (!between.ok) return { ok: false, reason: between.reason };
  const defaultVersion = policy.defaultAt(nowMs);
  const byConsumer = new Map<string, Verdict>();
  for (const { consumer, pinned_at, operations } of uses) {
    const unversioned = unversionedVersion(consumer.pinned_version, defaultVersion);
    const counted = countedOperations(operations, version, unversioned, countedFrom(windowMs, pinned_at));
    const calls = counted.map(({ operation, last_seen }) => ({
      operation,
      form: operationParts(operation).form,
      call: operation,
      instead: null,
      // The verdict needs which operations, not how often.
      requests: 0,
      last_seen,
      fields_sent: fields
        .filter((row) => row.consumer_id === consumer.id && row.operation === operation)
        .map(({ field, requests, last_seen: sent }) => ({ field, requests, last_seen: sent })),
    }));
    byConsumer.set(consumer.id, judgePreview(version, between.changes, calls).verdict);
  }
  return { ok: true, successor, byConsumer };
}
