import type { FastifyRequest } from 'fastify';
import type { MigrationGuides } from '../changes/guides.js';
import { verdictsOf, type Verdicts } from '../consumers/preview/verdicts.js';
import type { ConsumerUsageReader, RequestFieldsReader } from '../consumers/store.js';
import type { VersionPolicy } from '../versions/policy.js';
import { withinStoreWait, type StoreUnavailable } from './registered.js';

/** Per listed version with a successor, each registered consumer's verdict for moving to it; or the store is away. */
export type VersionVerdicts = ReadonlyMap<number, Verdicts> | StoreUnavailable;

/**
 * The verdicts of the registered consumers of `versions` (those with a successor), under the page's wait: the store
 * and the backend's documents are read at once, and a page whose store or documents do not answer in time shows none.
 */
export async function readVerdicts(
  reader: ConsumerUsageReader & RequestFieldsReader,
  guides: MigrationGuides,
  policy: VersionPolicy,
  versions: readonly number[],
  nowMs: number,
  request: FastifyRequest,
): Promise<VersionVerdicts> {
  const moving = versions.filter(
    (version) => policy.versions.find((entry) => entry.version === version)?.successor !== undefined,
  );
  const read = await withinStoreWait(
    Promise.all(moving.map((version) => verdictsOf(reader, guides, policy, version, nowMs, request.id))),
    request.log,
    'upgrade verdicts are',
  );
  if (read === 'store unavailable') return read;
  return new Map(moving.map((version, i) => [version, read[i] as Verdicts]));
}
