/**
 * The notice store's read for the operators' list of a version's consumers (`sentOf`), on both stores the
 * gateway opens: PostgreSQL (DATABASE_URL) and the embedded one (GATEWAY_DATA_DIR), through the same SQL. The
 * rows are written as the senders write them: recorded, claimed, attempted, finished.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoreLocation } from '../../src/database/open.js';
import { openStores, type OpenStores } from '../database/open-stores.js';
import type { DueNotice } from '../../src/notices/due.js';
import { createNoticeStore, type NoticeOutcome, type NoticeStore } from '../../src/notices/store.js';
import { startTestPostgres, type TestPostgres } from '../../../platform/test/support/postgres.js';
import { at } from '../support/helpers.js';

/** The embedded store's first start creates its database: tens of seconds of CPU on a loaded machine. */
const EMBEDDED_START_MS = 180_000;
const LEASE_MS = 60_000;
const BROWNOUT = '2026-12-01T10:00:00.000Z';

interface StoreKind {
  name: string;
  open(): Promise<{ location: StoreLocation; close: () => Promise<void> }>;
}

const kinds: StoreKind[] = [
  {
    name: 'PostgreSQL',
    async open() {
      const postgres: TestPostgres = await startTestPostgres();
      return {
        location: {
          database: { url: await postgres.createDatabase(), poolMax: 2, migrationTimeoutMs: 60_000 },
          dataDir: '',
        },
        close: () => postgres.close(),
      };
    },
  },
  {
    name: 'the embedded store',
    async open() {
      const parent = await mkdtemp(join(tmpdir(), 'gateway-notices-'));
      return {
        location: { database: undefined, dataDir: join(parent, 'gateway') },
        close: () => rm(parent, { recursive: true, force: true }),
      };
    },
  },
];

/** Records `notices` at `nowMs`, then takes each through one attempt to its outcome, recorded `tookMs` later. */
async function deliver(
  store: NoticeStore,
  notices: { notice: DueNotice; outcome: NoticeOutcome | 'left pending'; tookMs?: number }[],
  nowMs: number,
): Promise<void> {
  await store.record(
    notices.map(({ notice }) => notice),
    [],
    nowMs,
  );
  const claimed = await store.claim('replica-a', ['email', 'webhook'], 100, nowMs, LEASE_MS);
  expect(claimed).toHaveLength(notices.length);
  for (const { notice, outcome, tookMs = 1_500 } of notices) {
    if (outcome === 'left pending') continue;
    expect(await store.begin(notice, 'replica-a', nowMs, LEASE_MS)).toBe(true);
    expect(await store.finish(notice, 'replica-a', outcome, nowMs + tookMs)).toBe(true);
  }
}

const due = (
  consumerId: string,
  version: number,
  milestone: DueNotice['milestone'],
  channel: DueNotice['channel'],
  occasion = '',
): DueNotice => ({
  consumerId,
  version,
  milestone,
  occasion,
  channel,
  dueAt: at('2026-10-03T00:00:00Z'),
});

describe.each(kinds)('the notices sent about a version, on $name', (kind) => {
  let opened: OpenStores;
  let closeLocation: () => Promise<void>;

  beforeAll(async () => {
    const { location, close } = await kind.open();
    closeLocation = close;
    opened = await openStores(location, pino({ level: 'silent' }));
  }, EMBEDDED_START_MS);
  afterAll(async () => {
    await opened?.store.close();
    await closeLocation?.();
  });

  it(
    'are the delivered ones, per consumer in the order they went out: never a failed, pending or skipped one, nor ' +
      "another version's",
    async () => {
      for (const id of ['acme', 'beta', 'gamma', 'delta']) {
        await opened.store.createConsumer(
          {
            id,
            name: id,
            contact_email: `${id}@example.net`,
            webhook_url: null,
            webhook_secret: null,
            pinned_version: null,
          },
          at('2026-09-01T00:00:00Z'),
        );
      }
      const store = createNoticeStore(opened.database);
      const sent = { status: 'sent' } as const;
      const failed = { status: 'failed', error: 'SMTP: 550 mailbox unavailable' } as const;
      // The brownout notice went out after the 90-day one, though its milestone sorts first.
      await deliver(
        store,
        [
          { notice: due('acme', 1, 'sunset_in_90_days', 'email'), outcome: sent },
          { notice: due('acme', 1, 'sunset_in_90_days', 'webhook'), outcome: failed },
          { notice: due('beta', 1, 'sunset_in_90_days', 'email'), outcome: failed },
          { notice: due('beta', 1, 'sunset_in_90_days', 'webhook'), outcome: 'left pending' },
          {
            notice: due('gamma', 1, 'sunset_in_90_days', 'email'),
            outcome: { status: 'pending', nextAttemptMs: at('2026-11-22T13:00:00Z'), error: 'connection refused' },
          },
          { notice: due('delta', 2, 'announced', 'email'), outcome: sent },
          { notice: due('acme', 1, 'brownout_in_48_hours', 'email', BROWNOUT), outcome: sent, tookMs: 4_000 },
        ],
        at('2026-11-22T12:00:00Z'),
      );
      await store.record([], [due('gamma', 1, 'announced', 'email')], at('2026-11-22T12:00:00Z'));

      expect(await store.sentOf(1)).toEqual([
        {
          consumerId: 'acme',
          milestone: 'sunset_in_90_days',
          occasion: '',
          channel: 'email',
          sentMs: at('2026-11-22T12:00:01.500Z'),
        },
        {
          consumerId: 'acme',
          milestone: 'brownout_in_48_hours',
          occasion: BROWNOUT,
          channel: 'email',
          sentMs: at('2026-11-22T12:00:04Z'),
        },
      ]);
      expect(await store.sentOf(2)).toEqual([
        {
          consumerId: 'delta',
          milestone: 'announced',
          occasion: '',
          channel: 'email',
          sentMs: at('2026-11-22T12:00:01.500Z'),
        },
      ]);
      expect(await store.sentOf(3)).toEqual([]);
    },
  );
});
