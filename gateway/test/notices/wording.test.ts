import { describe, expect, it } from 'vitest';
import { buildMigrationGuide } from '../../src/changes/guide.js';
import { operationCall } from '../../src/consumers/reports/model.js';
import { withDescription } from '../../src/changes/sentence.js';
import { noticeMessage, textOf, type MessageInput } from '../../src/notices/message.js';
import type { VersionChange } from '../../src/translation/changes.js';
import { deriveDocument } from '../../src/translation/derive-document.js';
import { ordersDocument } from '../support/documents.js';
import { at, policyFrom } from '../support/helpers.js';
import { stepsOf } from '../support/orders-v1.js';

// What a notice says of the second edition's changes: each by its fields, the call to make instead at the path the
// successor serves it.

const PURCHASES = '/purchases/:id';
const changes: VersionChange[] = [
  { resource: PURCHASES, op: 'path', to: '/orders/:id' },
  { resource: PURCHASES, op: 'move', field: 'money.currency', to: 'currency' },
  { resource: PURCHASES, op: 'status', from: 404, to: 410 },
  { resource: PURCHASES, op: 'rename', field: 'reason', to: 'details', on: 'error' },
];
const resources = [
  { path: PURCHASES, versions: [1] },
  { path: '/orders/:id', versions: [2] },
];

describe("a notice's wording of the second edition's changes", () => {
  it('names each breaking change by its fields, and the renamed endpoint to call instead', () => {
    const after = ordersDocument(2);
    const guide = buildMigrationGuide(1, 2, deriveDocument(after, stepsOf(changes, resources)), after, changes);
    const schemes = policyFrom({
      default_version: 2,
      versions: [
        { version: 1, status: 'deprecated', announced: '2026-06-01', sunset: '2027-01-01T00:00:00Z', successor: 2 },
        { version: 2, status: 'current' },
      ],
    }).schemes;
    const called = operationCall('GET /v1/purchases/{id}', 1, 2, schemes, guide);
    expect([called.call, called.instead]).toEqual(['GET /v1/purchases/{id}', 'GET /v2/orders/{id}']);
    const input = {
      notice: { messageId: 'm', consumerId: 'acme', consumer: { name: 'Acme' }, version: 1, milestone: 'announced' },
      entry: { version: 1, status: 'deprecated', announced: at('2026-06-01'), sunset: at('2027-01-01'), successor: 2 },
      report: {
        version: 1,
        phase: 'deprecated',
        sunset: '2027-01-01T00:00:00.000Z',
        successor: 2,
        changes: '/versions/1/changes',
        operations: [
          {
            ...called,
            requests: 3,
            last_seen: '2026-11-01T00:00:00.000Z',
            breaking_changes: (guide.operations[0]?.changes ?? []).filter((change) => change.breaking),
          },
        ],
      },
      pinnedVersion: null,
      countedFromMs: Number.NEGATIVE_INFINITY,
      nowMs: at('2026-11-22'),
      baseUrl: '',
    } as unknown as MessageInput;
    const lines = textOf(noticeMessage(input).data).split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        '    send instead: GET /v2/orders/{id}',
        '    breaking: /v1/purchases/{id} is now /v2/orders/{id}',
        '    breaking: money.currency is now currency',
        '    breaking: status 410 is now 404',
        '    breaking: reason is now details in error responses',
      ]),
    );
  });
});

describe("a notice's plain words for the other second-edition changes", () => {
  it('says what a wrapped body, a renamed header, rewritten links and a module do, and no description of its own', () => {
    const after = ordersDocument(2);
    const declared: VersionChange[] = [
      { resource: '/orders/:id', op: 'envelope', field: 'data' },
      { resource: '/orders/:id', op: 'header', name: 'Total-Count', to: 'X-Total-Count' },
      { resource: '/orders/:id', op: 'link', field: 'next' },
      { resource: '/orders/:id', op: 'link', field: 'Link' },
      { resource: '/orders/:id', op: 'remove', field: 'hint', value: 'none', on: 'error' },
    ];
    const guide = buildMigrationGuide(1, 2, deriveDocument(after, stepsOf(declared)), after, declared);
    const said = [
      ...new Set(
        guide.operations
          .flatMap((operation) => operation.changes)
          .filter((change) => change.declared === true)
          .map((change) => withDescription(change)),
      ),
    ];
    expect(said).toEqual([
      'the body is now inside data',
      'header X-Total-Count is now Total-Count',
      "next names the successor's paths",
      "the Link header names the successor's paths",
      'hint is gone in error responses',
    ]);
  });
});
