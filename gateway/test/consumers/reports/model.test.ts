import { describe, expect, it } from 'vitest';
import { buildMigrationGuide, type GuideChange, type MigrationGuide } from '../../../src/changes/guide.js';
import type { GuideOutcome, MigrationGuides } from '../../../src/changes/guides.js';
import { consumerReports } from '../../../src/consumers/reports/model.js';
import type { ConsumerUsageReader, UsageRow } from '../../../src/consumers/store.js';
import { ordersDocument } from '../../support/documents.js';
import { at, designPolicyFile, policyFrom, TODAY, V1_SUNSET } from '../../support/helpers.js';

const V1_TO_V2 = buildMigrationGuide(1, 2, ordersDocument(1), ordersDocument(2));
/** The breaking changes of v1 → v2's order operation: user_id and total removed from the 200. */
const ORDER_BREAKING = V1_TO_V2.operations[0]?.changes.filter((change) => change.breaking) ?? [];

const row = (version: number, operation: string, requests = 1, lastSeen = '2026-11-20T08:00:00.000Z'): UsageRow => ({
  consumer_id: 'acme',
  version,
  operation,
  requests,
  first_seen: '2026-10-01T00:00:00.000Z',
  last_seen: lastSeen,
});

/** A reader holding `rows` for the consumer `acme`, recording the windows it was asked for. */
function readerOf(rows: UsageRow[]): ConsumerUsageReader & { asked: (number | undefined)[] } {
  const asked: (number | undefined)[] = [];
  return {
    asked,
    async usageOf(consumerId, sinceMs) {
      asked.push(sinceMs);
      return rows.filter((candidate) => candidate.consumer_id === consumerId);
    },
    async consumersOf() {
      return [];
    },
    async refusedOf() {
      return [];
    },
    async pinOf() {
      return undefined;
    },
  };
}

/** Guides that answer `guide` for every version (or the outcome given), recording the versions asked for. */
function guidesOf(answer: MigrationGuide | Exclude<GuideOutcome, { ok: true }>): MigrationGuides & { asked: number[] } {
  const asked: number[] = [];
  return {
    asked,
    async get(_policy, version) {
      asked.push(version);
      return 'version' in answer ? { ok: true, rendered: { guide: answer, json: '', html: '' } } : answer;
    },
  };
}

const shippedPolicy = policyFrom(designPolicyFile);

async function reportsOf(
  rows: UsageRow[],
  {
    guide = V1_TO_V2,
    nowMs = TODAY,
    policy = shippedPolicy,
  }: { guide?: MigrationGuide; nowMs?: number; policy?: typeof shippedPolicy } = {},
) {
  const outcome = await consumerReports({
    consumerId: 'acme',
    reader: readerOf(rows),
    guides: guidesOf(guide),
    policy,
    nowMs,
    requestId: 'req-1',
  });
  if (!outcome.ok) throw new Error(outcome.reason);
  return outcome.versions;
}

describe("a consumer's version reports", () => {
  it('covers only the deprecated or removed versions it called, with their lifecycle and guide', async () => {
    const versions = await reportsOf([
      row(1, 'GET /v1/orders/{id}', 42),
      row(2, 'GET /v2/orders/{id}', 7),
      row(9, 'GET /v9/orders/{id}', 3),
    ]);
    expect(versions).toEqual([
      {
        version: 1,
        phase: 'deprecated',
        sunset: '2027-01-01T00:00:00.000Z',
        successor: 2,
        changes: '/versions/1/changes',
        done: false,
        operations: [
          {
            operation: 'GET /v1/orders/{id}',
            form: 'path',
            call: 'GET /v1/orders/{id}',
            instead: 'GET /v2/orders/{id}',
            requests: 42,
            last_seen: '2026-11-20T08:00:00.000Z',
            breaking_changes: ORDER_BREAKING,
          },
        ],
      },
    ]);
    expect(ORDER_BREAKING.map((change) => `${change.change} ${change.name}`)).toEqual([
      'removed user_id',
      'removed total',
    ]);
  });

  it('is empty for a consumer of current versions only, and asks for no guide', async () => {
    const guides = guidesOf(V1_TO_V2);
    const outcome = await consumerReports({
      consumerId: 'acme',
      reader: readerOf([row(2, 'GET /v2/orders/{id}')]),
      guides,
      policy: shippedPolicy,
      nowMs: TODAY,
      requestId: 'r',
    });
    expect(outcome).toEqual({
      ok: true,
      pinnedVersion: null,
      countedFromMs: Number.NEGATIVE_INFINITY,
      versions: [],
    });
    expect(guides.asked).toEqual([]);
  });

  it('says removed once the sunset has passed, and current before the announcement reports nothing', async () => {
    const rows = [row(1, 'GET /v1/orders/{id}')];
    expect((await reportsOf(rows, { nowMs: V1_SUNSET }))[0]?.phase).toBe('removed');
    expect((await reportsOf(rows, { nowMs: V1_SUNSET - 1 }))[0]?.phase).toBe('deprecated');
    expect(await reportsOf(rows, { nowMs: at('2026-05-31T23:59:59Z') })).toEqual([]);
  });

  it('names each operation in the form it was called, and what to send instead for the successor in it', async () => {
    const policy = policyFrom({
      ...designPolicyFile,
      schemes: ['path', 'header', 'query', 'media_type'],
      query_parameter: 'api-version',
    });
    const versions = await reportsOf(
      [
        row(1, 'GET /api/v1/orders/{id}'),
        row(1, 'GET /orders/{id}'),
        row(1, 'GET /orders/{id} default'),
        row(1, 'GET /orders/{id} header'),
        row(1, 'GET /orders/{id} media_type'),
        row(1, 'GET /orders/{id} pin'),
        row(1, 'GET /orders/{id} query'),
        row(1, 'GET /v1/orders/{id}'),
      ],
      { policy },
    );
    expect(
      versions[0]?.operations.map(({ operation, form, call, instead }) => [operation, form, call, instead]),
    ).toEqual([
      ['GET /api/v1/orders/{id}', 'path', 'GET /api/v1/orders/{id}', 'GET /api/v2/orders/{id}'],
      [
        'GET /orders/{id}',
        null,
        'GET /orders/{id} (how it named v1 was not recorded)',
        'GET /orders/{id} with API-Version: 2',
      ],
      [
        'GET /orders/{id}',
        'default',
        'GET /orders/{id} naming no version (default_version: v1)',
        'GET /orders/{id} with API-Version: 2',
      ],
      ['GET /orders/{id}', 'header', 'GET /orders/{id} with API-Version: 1', 'GET /orders/{id} with API-Version: 2'],
      [
        'GET /orders/{id}',
        'media_type',
        'GET /orders/{id} with Accept: application/vnd.version-router.v1+json',
        'GET /orders/{id} with Accept: application/vnd.version-router.v2+json',
      ],
      [
        'GET /orders/{id}',
        'pin',
        'GET /orders/{id} naming no version (your pin: v1)',
        'GET /orders/{id} with API-Version: 2, or move your pin: PUT /consumer/version {"version": 2}',
      ],
      ['GET /orders/{id}', 'query', 'GET /orders/{id}?api-version=1', 'GET /orders/{id}?api-version=2'],
      ['GET /v1/orders/{id}', 'path', 'GET /v1/orders/{id}', 'GET /v2/orders/{id}'],
    ]);
    for (const operation of versions[0]?.operations ?? []) expect(operation.breaking_changes).toEqual(ORDER_BREAKING);
  });

  it('names the successor by path for a call that named no version where the policy reads no header', async () => {
    const policy = policyFrom({ ...designPolicyFile, schemes: ['path', 'query'] });
    const versions = await reportsOf([row(1, 'GET /orders/{id} default')], { policy });
    expect(versions[0]?.operations[0]?.instead).toBe('GET /v2/orders/{id}');
  });

  it(
    'gives the path form, its /api form and the header form of one operation the same breaking changes, each ' + 'once',
    async () => {
      const versions = await reportsOf([
        row(1, 'GET /api/v1/orders/{id}', 2),
        row(1, 'GET /orders/{id}', 3),
        row(1, 'GET /v1/orders/{id}', 4),
      ]);
      expect(versions[0]?.operations.map(({ operation, breaking_changes }) => [operation, breaking_changes])).toEqual([
        ['GET /api/v1/orders/{id}', ORDER_BREAKING],
        ['GET /orders/{id}', ORDER_BREAKING],
        ['GET /v1/orders/{id}', ORDER_BREAKING],
      ]);
    },
  );

  it(
    'lists an operation the guide does not name with no breaking changes, and leaves the compatible ones ' + 'out',
    async () => {
      const versions = await reportsOf([row(1, 'DELETE /v1/orders/{id}'), row(1, 'GET /v1/orders')]);
      expect(versions[0]?.operations.map(({ operation, breaking_changes }) => [operation, breaking_changes])).toEqual([
        ['DELETE /v1/orders/{id}', []],
        ['GET /v1/orders', []],
      ]);
      expect(V1_TO_V2.compatible_changes).toBeGreaterThan(0);
    },
  );

  const change = (name: string, breaking = true): GuideChange => ({
    change: 'removed',
    kind: 'field',
    name,
    where: 'response 200 (application/json)',
    breaking,
    description: name,
  });
  /**
   * A guide whose path names its parameter otherwise than the policy's template, with a path-wide change and a
   * HEAD-less GET.
   */
  const handWritten: MigrationGuide = {
    version: 1,
    successor: 2,
    breaking_changes: 3,
    compatible_changes: 1,
    operations: [
      {
        method: 'GET',
        path: '/v1/orders/{orderId}',
        successor_path: '/v2/orders/{orderId}',
        forms: [],
        changes: [change('total'), change('note', false)],
      },
      {
        method: '*',
        path: '/v1/orders/{orderId}',
        successor_path: '/v2/orders/{orderId}',
        forms: [],
        changes: [change('parameters')],
      },
      {
        method: 'PUT',
        path: '/v1/orders/{orderId}',
        successor_path: '/v2/orders/{orderId}',
        forms: [],
        changes: [change('status')],
      },
    ],
    other_changes: [change('servers')],
  };

  it(
    'matches operations whatever the parameters are named, adds the path-wide changes to every method, and gives ' +
      "HEAD the GET's",
    async () => {
      const versions = await reportsOf(
        [
          row(1, 'GET /v1/orders/{id}'),
          row(1, 'HEAD /v1/orders/{id}'),
          row(1, 'PUT /orders/{id}'),
          row(1, 'DELETE /api/v1/orders/{id}'),
        ],
        { guide: handWritten },
      );
      expect(
        Object.fromEntries(
          versions[0]?.operations.map(({ operation, breaking_changes }) => [
            operation,
            breaking_changes.map(({ name }) => name),
          ]) ?? [],
        ),
      ).toEqual({
        'DELETE /api/v1/orders/{id}': ['parameters'],
        'GET /v1/orders/{id}': ['total', 'parameters'],
        'HEAD /v1/orders/{id}': ['total', 'parameters'],
        'PUT /orders/{id}': ['status', 'parameters'],
      });
    },
  );

  it(
    'reads the ledger all time (which versions it called) and in the window asked for (all of it by default), and ' +
      'answers a guide failure as the guide route does',
    async () => {
      const reader = readerOf([row(1, 'GET /v1/orders/{id}')]);
      const sinceMs = TODAY - 30 * 86_400_000;
      await consumerReports({
        consumerId: 'acme',
        reader,
        guides: guidesOf(V1_TO_V2),
        policy: shippedPolicy,
        nowMs: TODAY,
        requestId: 'r',
      });
      await consumerReports({
        consumerId: 'acme',
        reader,
        guides: guidesOf(V1_TO_V2),
        policy: shippedPolicy,
        nowMs: TODAY,
        sinceMs,
        requestId: 'r',
      });
      expect(reader.asked).toEqual([undefined, undefined, undefined, sinceMs]);
      const failed = await consumerReports({
        consumerId: 'acme',
        reader,
        guides: guidesOf({ ok: false, status: 504, reason: 'GET /v1/openapi.json failed: UND_ERR_HEADERS_TIMEOUT' }),
        policy: shippedPolicy,
        nowMs: TODAY,
        requestId: 'r',
      });
      expect(failed).toEqual({
        ok: false,
        status: 504,
        reason: 'GET /v1/openapi.json failed: UND_ERR_HEADERS_TIMEOUT',
      });
    },
  );
});
