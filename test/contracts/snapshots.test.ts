import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { translatedVersions } from '../../gateway/src/translation/derive-document.js';
import { readPolicyFile } from '../../gateway/src/versions/policy-file.js';
import { createVersionPolicy } from '../../gateway/src/versions/policy.js';
import {
  diffSnapshots,
  describeDiffs,
  type SnapshotDiff,
} from '../../services/users-orders/tools/openapi-snapshots.js';
import {
  orderPresenters,
  orderV2Schema,
  presenter,
  type OrderPresenter,
} from '../../services/users-orders/src/orders/presenters.js';

const committed = fileURLToPath(new URL('../../openapi', import.meta.url));

const HOW_TO_FIX =
  'The API documents differ from the committed openapi/v{n}.json; each difference is listed with its ' +
  'classification.\n' +
  'Non-breaking only: run `npm run openapi:update` and commit the snapshots. Breaking: keep the published ' +
  'version as it is and put the change in a new major version (docs/architecture.md#changing-the-api).';

function changesOf(diffs: SnapshotDiff[], version: number): { compatibility: string; description: string }[] {
  return (diffs.find((diff) => diff.version === version)?.changes ?? []).map(({ compatibility, description }) => ({
    compatibility,
    description,
  }));
}

function withPresenter(version: number, replacement: OrderPresenter | undefined): Map<number, OrderPresenter> {
  const presenters = new Map(orderPresenters);
  if (replacement === undefined) presenters.delete(version);
  else presenters.set(version, replacement);
  return presenters;
}

/** The versions ops/versions.json declares as changes: their documents are derived, not generated. */
const translated = translatedVersions(
  createVersionPolicy(readPolicyFile(fileURLToPath(new URL('../../ops/versions.json', import.meta.url))).file)
    .translations,
);
/** Every version the backend serves (only its newest): one document each, committed as openapi/v{n}.json. */
const served = [...orderPresenters.keys()].sort((a, b) => a - b);
/** A version the backend does not serve yet. */
const next = Math.max(...served) + 1;

describe('the committed API documents', () => {
  it('equal the documents the backend generates and those derived for the versions declared as changes', async () => {
    const diffs = await diffSnapshots(committed, undefined, translated);
    expect(diffs.map((diff) => diff.version)).toEqual(
      [...new Set([...served, ...translated.versions])].sort((a, b) => a - b),
    );
    expect(diffs.map((diff) => diff.version)).toEqual(expect.arrayContaining([1, 2]));
    expect(describeDiffs(diffs.filter((diff) => !diff.unchanged)), HOW_TO_FIX).toBe('');
  });
});

describe('a presenter change is classified against the committed documents', () => {
  it(
    'drops `total_cents` from version 2: breaking on both order paths, and in version 1 derived from it (its ' +
      '`total`), and no other version touched',
    async () => {
      const withoutTotal = orderV2Schema.omit({ total_cents: true });
      const diffs = await diffSnapshots(
        committed,
        withPresenter(
          2,
          presenter(withoutTotal, (order) => ({
            id: order.id,
            customer_id: order.customer_id,
            currency: order.currency,
          })),
        ),
        translated,
      );
      const removed = (version: number, field: string) =>
        changesOf(diffs, version)
          .filter((change) => change.description.includes(`property \`${field}\``))
          .map((change) => change.compatibility);
      expect(removed(2, 'total_cents')).toEqual(['breaking', 'breaking']);
      expect(removed(1, 'total')).toEqual(['breaking', 'breaking']);
      expect(describeDiffs(diffs)).toMatch(
        /v2\.json: BREAKING: \[Removed\] property `total_cents` in Response 200 content \(application\/json\)/,
      );
      expect(describeDiffs(diffs)).toMatch(
        /v1\.json \(derived from v2 by the policy's changes\): BREAKING: \[Removed\] property `total` in Response 200 /,
      );
      expect(diffs.filter((diff) => !diff.unchanged).map((diff) => diff.version)).toEqual([1, 2]);
    },
  );

  it('adds an optional response field to version 2: non-breaking only', async () => {
    const withNote = orderV2Schema.extend({ note: z.string().optional() });
    const diffs = await diffSnapshots(
      committed,
      withPresenter(
        2,
        presenter(withNote, (order) => ({ ...order, note: 'x' })),
      ),
      translated,
    );
    const changes = changesOf(diffs, 2);
    expect(changes).toContainEqual({
      compatibility: 'non-breaking',
      description: '[Added] property `note` in Response 200 content (application/json)',
    });
    expect(changes.every((change) => change.compatibility === 'non-breaking')).toBe(true);
  });

  it('changes the type of total_cents in version 2: breaking', async () => {
    const asString = orderV2Schema.extend({ total_cents: z.string() });
    const diffs = await diffSnapshots(
      committed,
      withPresenter(
        2,
        presenter(asString, (order) => ({ ...order, total_cents: String(order.total_cents) })),
      ),
      translated,
    );
    expect(
      changesOf(diffs, 2)
        .filter((change) => change.compatibility === 'breaking')
        .map((change) => change.description),
    ).toContain('[Replaced] type definition of `total_cents` in Response 200 content (application/json)');
  });

  it(
    'removes version 2 altogether: breaking; adds the next version: a new document, non-breaking, with its own ' +
      'order routes',
    async () => {
      const removed = await diffSnapshots(committed, withPresenter(2, undefined), translated);
      expect(changesOf(removed, 2)).toEqual([
        { compatibility: 'breaking', description: 'version 2 is no longer served: every endpoint of it is removed' },
      ]);
      const added = await diffSnapshots(committed, withPresenter(next, orderPresenters.get(2)), translated);
      expect(changesOf(added, next)).toEqual([
        { compatibility: 'non-breaking', description: `version ${next} is new: its document has no snapshot yet` },
      ]);
      expect(added.find((diff) => diff.version === next)?.generated).toContain(`"/v${next}/orders/{id}"`);
    },
  );
});
