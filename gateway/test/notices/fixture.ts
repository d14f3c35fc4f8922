/**
 * The notices of one test on a real PostgreSQL: the gateway's store and migrations on a new database,
 * consumers and their ledger rows written through the store, migration guides from the test documents, and
 * the replicas' notices with an injected clock (no timers: a test calls `check()`).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { pino } from 'pino';
import { buildMigrationGuide } from '../../src/changes/guide.js';
import type { MigrationGuides } from '../../src/changes/guides.js';
import type { NoticesConfig } from '../../src/config.js';
import { dayOf } from '../../src/consumers/store.js';
import { openStores, type OpenStores } from '../database/open-stores.js';
import type { Channel, NoticeResult } from '../../src/notices/labels.js';
import type { NoticeKind } from '../../src/notices/milestones.js';
import { createNotices } from '../../src/notices/notices.js';
import { createNoticeStore, type NoticeStore } from '../../src/notices/store.js';
import type { NoticeScheduler } from '../../src/notices/scheduler.js';
import type { VersionPolicy } from '../../src/versions/policy.js';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startTestPostgres, type TestPostgres } from '../../../platform/test/support/postgres.js';
import { ordersDocument } from '../support/documents.js';
import { at, designPolicyFile, policyFrom } from '../support/helpers.js';

export const DAY = 86_400_000;
/** sunset_in_90_days of the shipped v1 (sunset 2027-01-01) is due 2026-10-03: it is the current milestone then. */
export const NOW = at('2026-11-22T12:00:00Z');
const BACKEND_TIMEOUT_MS = 1_000;
export const SEND_TIMEOUT_MS = 1_000;
export const INTERVAL_MS = 60_000;
/** backendTimeoutMs + 2 × sendTimeoutMs (notices.ts). */
export const LEASE_MS = BACKEND_TIMEOUT_MS + 2 * SEND_TIMEOUT_MS;

/**
 * The guide from the test documents: v1 → v2 removes user_id and total from GET /v1/orders/{id}'s 200; with the
 * changes the policy declares for the version (renamed, converted), as the gateway's guide reads them.
 */
const guides: MigrationGuides = {
  async get(policy, version) {
    const declared = policy.versions.find((entry) => entry.version === version)?.changes ?? [];
    return {
      ok: true,
      rendered: {
        guide: buildMigrationGuide(version, version + 1, ordersDocument(1), ordersDocument(2), declared),
        json: '',
        html: '',
      },
    };
  },
};

export interface NoticeFixture {
  opened: OpenStores;
  notices: NoticeStore;
  sql: pg.Client;
  clock: { now: number };
  policy: { current: VersionPolicy };
  counts: { milestone: NoticeKind; channel: Channel; result: NoticeResult }[];
  /** A replica's notices (its own sender id), sending to `smtpUrl` when given. */
  replica(smtpUrl: string | undefined): NoticeScheduler;
  /**
   * A consumer with a ledger row of GET /v1/orders/{id} (`requests`, last called `lastSeenMs`); answers its webhook
   * secret.
   */
  consumer(
    id: string,
    options: {
      email?: string | null;
      webhookUrl?: string | null;
      lastSeenMs?: number;
      requests?: number;
      /** Its pin from registration on (null: none, it follows default_version). */
      pinnedVersion?: number | null;
      /** The ledger operation of its calls (GET /v1/orders/{id} by default). */
      operation?: string;
    },
  ): Promise<string>;
  close(): Promise<void>;
}

export async function noticeFixture(postgres: TestPostgres): Promise<NoticeFixture> {
  const url = await postgres.createDatabase();
  const logger = pino({ level: 'silent' });
  const opened = await openStores({ database: { url, poolMax: 4, migrationTimeoutMs: 60_000 }, dataDir: '' }, logger);
  const sql = new pg.Client({ connectionString: url });
  await sql.connect();
  const clock = { now: NOW };
  const policy = { current: policyFrom(designPolicyFile) };
  const counts: NoticeFixture['counts'] = [];
  const replicas: NoticeScheduler[] = [];
  const notices = createNoticeStore(opened.database);
  return {
    opened,
    notices,
    sql,
    clock,
    policy,
    counts,
    replica(smtpUrl) {
      const config: NoticesConfig = {
        email: smtpUrl === undefined ? undefined : { smtpUrl, from: { name: 'API team', address: 'api@example.com' } },
        intervalMs: INTERVAL_MS,
        publicBaseUrl: 'https://api.example.com',
        sendTimeoutMs: SEND_TIMEOUT_MS,
      };
      const scheduler = createNotices({
        store: notices,
        config,
        consumers: opened.store,
        guides,
        policy: () => policy.current,
        clock: () => clock.now,
        backendTimeoutMs: BACKEND_TIMEOUT_MS,
        logger,
        count: (milestone, channel, result) => counts.push({ milestone, channel, result }),
      });
      replicas.push(scheduler);
      return scheduler;
    },
    async consumer(
      id,
      {
        email = `${id}@example.net`,
        webhookUrl = null,
        lastSeenMs = NOW - DAY,
        requests = 42,
        pinnedVersion = null,
        operation = 'GET /v1/orders/{id}',
      },
    ) {
      const secret = `whsec_${randomBytes(32).toString('base64')}`;
      await opened.store.createConsumer(
        {
          id,
          name: `Team ${id}`,
          contact_email: email,
          webhook_url: webhookUrl,
          webhook_secret: webhookUrl === null ? null : secret,
          pinned_version: pinnedVersion,
        },
        NOW - 100 * DAY,
      );
      await opened.store.addUsage([
        {
          consumerId: id,
          version: 1,
          operation,
          day: dayOf(lastSeenMs),
          requests,
          firstSeenMs: lastSeenMs - 1_000,
          lastSeenMs,
        },
      ]);
      return secret;
    },
    async close() {
      await Promise.all(replicas.map((replica) => replica.stop()));
      await sql.end();
      await opened.store.close();
    },
  };
}

/**
 * For the test file or block that calls it: one PostgreSQL server for its tests; the function it answers makes
 * the running test's fixture, on a new database of that server, closed after the test.
 */
export function noticeFixturePerTest(): () => Promise<NoticeFixture> {
  let postgres: TestPostgres | undefined;
  let fixture: NoticeFixture | undefined;
  beforeAll(async () => {
    postgres = await startTestPostgres();
  }, 60_000);
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });
  afterAll(() => postgres?.close());
  return async () => {
    if (postgres === undefined) throw new Error('noticeFixturePerTest: call it in a test, after its beforeAll');
    return (fixture = await noticeFixture(postgres));
  };
}

/** Every notice row, by consumer and milestone, as [consumer, milestone, channel, status]. */
export async function noticeRows(sql: pg.Client): Promise<string[][]> {
  const { rows } = await sql.query<{ consumer_id: string; milestone: string; channel: string; status: string }>(
    'SELECT consumer_id, milestone, channel, status FROM gateway.notices ORDER BY consumer_id, due_at, channel',
  );
  return rows.map((row) => [row.consumer_id, row.milestone, row.channel, row.status]);
}
