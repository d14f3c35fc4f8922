import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { versionConsumersRoutes } from '../../../src/consumers/reports/version-consumers-routes.js';
import type { UsageDelta } from '../../../src/consumers/store.js';
import { createResourceRouter } from '../../../src/versions/router.js';
import type { NoticeStore, SentNotice } from '../../../src/notices/store.js';
import { consumerWithKey, createMemoryConsumerStore, type MemoryConsumerStore } from '../../support/memory-store.js';
import { at, buildTestGateway, TODAY, type TestGateway } from '../../support/helpers.js';
import { DAY, NOW, noticeFixturePerTest, type NoticeFixture } from '../../notices/fixture.js';
import { idleNoticeStore } from '../../notices/idle-store.js';

let gateway: TestGateway | undefined;
afterEach(async () => {
  await gateway?.app.close();
  gateway = undefined;
});

/** The test gateway's admin listener: the list reads the store only, no backend is needed. */
async function admin(
  store: MemoryConsumerStore,
  options: Parameters<typeof buildTestGateway>[1] = {},
): Promise<FastifyInstance> {
  gateway = await buildTestGateway('http://127.0.0.1:9', { consumerStore: store, ...options });
  return gateway.admin();
}

/** One ledger row as any replica writes it: `requests` on `day`, the last of them at `lastSeen`. */
const use = (
  consumerId: string,
  version: number,
  day: string,
  requests: number,
  lastSeen = `${day}T09:30:00Z`,
): UsageDelta => ({
  consumerId,
  version,
  operation: `GET /v${version}/orders/{id}`,
  day,
  requests,
  firstSeenMs: at(`${day}T08:00:00Z`),
  lastSeenMs: at(lastSeen),
});

/**
 * Today is 2026-11-22: the 30-day window starts on 2026-10-23. acme: 5 requests today; beta: 3 on the window's
 * first day, 10 the day before it; gamma: only before the window; delta: v2 only.
 */
async function ledger(): Promise<MemoryConsumerStore> {
  const store = createMemoryConsumerStore();
  // Registered before their calls, as consumers are: a registration sets the pin, and calls count after it.
  const registered = TODAY - 100 * 86_400_000;
  await consumerWithKey(store, 'acme', {
    name: 'Acme Billing',
    contact_email: 'billing@acme.example',
    pinned_version: 1,
    nowMs: registered,
  });
  await consumerWithKey(store, 'beta', { name: 'Beta', nowMs: registered });
  await consumerWithKey(store, 'gamma', { name: 'Gamma', nowMs: registered });
  await consumerWithKey(store, 'delta', { name: 'Delta', nowMs: registered });
  await store.createConsumer(
    {
      id: 'hooked',
      name: 'Hooked',
      contact_email: null,
      webhook_url: 'https://hooked.example/notices',
      webhook_secret: 'whsec_AAAA',
      pinned_version: null,
    },
    registered,
  );
  await store.addUsage([
    use('acme', 1, '2026-11-22', 5, '2026-11-22T11:59:00Z'),
    use('beta', 1, '2026-10-23', 3),
    use('beta', 1, '2026-10-22', 10),
    use('gamma', 1, '2026-09-01', 40),
    use('hooked', 1, '2026-11-20', 3),
    use('delta', 2, '2026-11-21', 8),
  ]);
  return store;
}

describe('GET /versions/{n}/consumers', () => {
  it(
    'lists every authenticated consumer of the version, most requests in the last 30 days first, with its contact ' +
      'and last call (no notices from a gateway that sends none)',
    async () => {
      const app = await admin(await ledger());
      const res = await app.inject({ url: '/versions/1/consumers' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.json()).toEqual({
        version: 1,
        phase: 'deprecated',
        requests_since: '2026-10-23T00:00:00.000Z',
        consumers: [
          {
            id: 'acme',
            name: 'Acme Billing',
            contact_email: 'billing@acme.example',
            webhook_url: null,
            pinned_version: 1,
            requests: 5,
            last_seen: '2026-11-22T11:59:00.000Z',
            active: true,
            done: false,
            notices_sent: [],
          },
          {
            id: 'beta',
            name: 'Beta',
            contact_email: null,
            webhook_url: null,
            pinned_version: null,
            requests: 3,
            last_seen: '2026-10-23T09:30:00.000Z',
            // Its requests are counted from midnight 30 days back, its activity from 30 days back to the minute.
            active: false,
            done: false,
            notices_sent: [],
          },
          {
            id: 'hooked',
            name: 'Hooked',
            contact_email: null,
            webhook_url: 'https://hooked.example/notices',
            pinned_version: null,
            requests: 3,
            last_seen: '2026-11-20T09:30:00.000Z',
            active: true,
            done: false,
            notices_sent: [],
          },
          {
            id: 'gamma',
            name: 'Gamma',
            contact_email: null,
            webhook_url: null,
            pinned_version: null,
            requests: 0,
            last_seen: '2026-09-01T09:30:00.000Z',
            active: false,
            done: false,
            notices_sent: [],
          },
        ],
        refused: [],
      });
    },
  );

  it(
    'answers a listed version nobody called an empty list, and 404 not found for a version the policy does not ' +
      'list',
    async () => {
      const app = await admin(createMemoryConsumerStore());
      expect((await app.inject({ url: '/versions/2/consumers' })).json()).toEqual({
        version: 2,
        phase: 'current',
        requests_since: '2026-10-23T00:00:00.000Z',
        consumers: [],
        refused: [],
      });
      for (const url of [
        '/versions/3/consumers',
        '/versions/01/consumers',
        '/versions/v1/consumers',
        '/versions/1.0/consumers',
      ]) {
        const res = await app.inject({ url });
        expect(res.statusCode, url).toBe(404);
        expect(res.json(), url).toEqual({ error: 'not found', code: 404 });
      }
    },
  );

  it(
    'says which consumers are done with the version: pin moved off it and no call since, whatever they called ' +
      'before the move',
    async () => {
      const store = createMemoryConsumerStore();
      await consumerWithKey(store, 'moved', { pinned_version: 1, nowMs: TODAY - 100 * DAY });
      await consumerWithKey(store, 'still', { pinned_version: 1, nowMs: TODAY - 100 * DAY });
      await store.addUsage([
        { ...use('moved', 1, '2026-11-21', 4), operation: 'GET /orders/{id} pin' },
        use('moved', 1, '2026-11-21', 2),
        { ...use('still', 1, '2026-11-21', 4), operation: 'GET /orders/{id} pin' },
      ]);
      await store.movePin('moved', 2, at('2026-11-21T10:00:00Z'));
      const app = await admin(store);
      const rows = (await app.inject({ url: '/versions/1/consumers' })).json<{
        consumers: { id: string; pinned_version: number; requests: number; active: boolean; done: boolean }[];
      }>().consumers;
      expect(
        rows.map(({ id, pinned_version, requests, active, done }) => [id, pinned_version, requests, active, done]),
      ).toEqual([
        // Its 6 requests of the last 30 days were all before it moved to v2 at 10:00.
        ['moved', 2, 6, false, true],
        ['still', 1, 4, true, false],
      ]);
    },
  );

  it('answers 503 storage unavailable while the store cannot be read', async () => {
    const store = await ledger();
    const app = await admin(store);
    store.down = true;
    const res = await app.inject({ url: '/versions/1/consumers' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.json()).toEqual({ error: 'storage unavailable', code: 503 });
  });

  it(
    'is kept like the registry: off loopback only with ADMIN_TOKEN (403 without one), and the token is required ' +
      'when set (401)',
    async () => {
      const open = await admin(await ledger(), { adminHost: '0.0.0.0' });
      const refused = await open.inject({ url: '/versions/1/consumers' });
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toEqual({ error: 'admin token required off loopback', code: 403 });
      await gateway?.app.close();
      const guarded = await admin(await ledger(), { adminHost: '0.0.0.0', adminToken: 'a-token-of-at-least-16' });
      const without = await guarded.inject({ url: '/versions/1/consumers' });
      expect(without.statusCode).toBe(401);
      expect(without.json()).toEqual({ error: 'admin token required', code: 401 });
      const allowed = await guarded.inject({
        url: '/versions/1/consumers',
        headers: { authorization: 'Bearer a-token-of-at-least-16' },
      });
      expect(allowed.statusCode).toBe(200);
      expect(allowed.json()).toMatchObject({
        version: 1,
        consumers: [{ id: 'acme' }, { id: 'beta' }, { id: 'hooked' }, { id: 'gamma' }],
      });
    },
  );
});

/** A notice store that has delivered `sent` (whatever its version) and asks for nothing to be sent. */
function deliveredStore(sent: Record<number, SentNotice[]>): NoticeStore & { asked: number[] } {
  const asked: number[] = [];
  return Object.assign(
    idleNoticeStore({
      async sentOf(version) {
        asked.push(version);
        return sent[version] ?? [];
      },
    }),
    { asked },
  );
}

describe('GET /versions/{n}/consumers: the notices sent to each consumer', () => {
  it("shows what the gateway's notice store says was delivered about that version", async () => {
    const notices = deliveredStore({
      1: [
        {
          consumerId: 'hooked',
          milestone: 'brownout_in_48_hours',
          occasion: '2026-12-01T10:00:00.000Z',
          channel: 'webhook',
          sentMs: at('2026-11-29T10:00:02Z'),
        },
      ],
    });
    const app = await admin(await ledger(), {
      notices: {
        store: notices,
        config: { email: undefined, intervalMs: 60_000, publicBaseUrl: undefined, sendTimeoutMs: 1_000 },
      },
    });
    const body = (await app.inject({ url: '/versions/1/consumers' })).json<{
      consumers: { id: string; notices_sent: unknown[] }[];
    }>();
    expect(body.consumers.map(({ id, notices_sent }) => [id, notices_sent])).toEqual([
      ['acme', []],
      ['beta', []],
      [
        'hooked',
        [
          {
            milestone: 'brownout_in_48_hours',
            brownout_start: '2026-12-01T10:00:00.000Z',
            channel: 'webhook',
            sent_at: '2026-11-29T10:00:02.000Z',
          },
        ],
      ],
      ['gamma', []],
    ]);
    expect(notices.asked).toEqual([1]);
  });

  describe('from the shared store', () => {
    const newFixture = noticeFixturePerTest();

    /** The route on the fixture's PostgreSQL store, as the admin port registers it. */
    async function routes(opened: NoticeFixture): Promise<FastifyInstance> {
      const app = Fastify();
      await app.register(versionConsumersRoutes, {
        policies: {
          // The fixture's policy as it is at each request, as the policy in force is read.
          get current() {
            const current = opened.policy.current;
            return {
              policy: current,
              sha256: '',
              fileSha256: '',
              router: createResourceRouter(current.resources, current.versions, current.schemes),
              translatedRoutes: new Map(),
            };
          },
          reload: () => Promise.resolve({ ok: true }),
          validate: () => Promise.resolve({ ok: true }),
        },
        reader: opened.opened.store,
        noticesSentFor: (version) => opened.notices.sentOf(version),
        clock: () => NOW,
      });
      return app;
    }

    it(
      'lists the notices delivered to a consumer, none while its notices only failed or wait for a retry, and none ' +
        'of another version',
      async () => {
        const fixture = await newFixture();
        for (const id of ['told', 'failing', 'waiting', 'elsewhere']) await fixture.consumer(id, {});
        await fixture.opened.store.addUsage([
          {
            consumerId: 'elsewhere',
            version: 2,
            operation: 'GET /v2/orders/{id}',
            day: '2026-11-21',
            requests: 1,
            firstSeenMs: NOW - DAY,
            lastSeenMs: NOW - DAY,
          },
        ]);
        const record = (
          consumer: string,
          version: number,
          milestone: string,
          channel: string,
          status: string,
          sentAt: string | null,
        ) =>
          fixture.sql.query(
            `INSERT INTO gateway.notices (consumer_id, version, milestone, occasion, channel, message_id, status, ` +
              `due_at, recorded_at, sent_at)
           VALUES ($1, $2, $3, '', $4, $1 || $3 || $4, $5, '2026-10-03T00:00:00Z', '2026-10-03T00:00:10Z', $6)`,
            [consumer, version, milestone, channel, status, sentAt],
          );
        await record('told', 1, 'sunset_in_90_days', 'email', 'sent', '2026-10-03T00:01:02.345Z');
        await record('told', 1, 'sunset_in_90_days', 'webhook', 'failed', null);
        await record('failing', 1, 'sunset_in_90_days', 'email', 'failed', null);
        await record('waiting', 1, 'sunset_in_90_days', 'email', 'pending', null);
        await record('elsewhere', 2, 'announced', 'email', 'sent', '2026-10-04T08:00:00Z');
        const app = await routes(fixture);

        const v1 = await app.inject({ url: '/versions/1/consumers' });
        expect(v1.statusCode).toBe(200);
        const sentOn = (body: { consumers: { id: string; notices_sent: unknown[] }[] }) =>
          Object.fromEntries(body.consumers.map(({ id, notices_sent }) => [id, notices_sent]));
        expect(sentOn(v1.json())).toEqual({
          told: [
            {
              milestone: 'sunset_in_90_days',
              brownout_start: null,
              channel: 'email',
              sent_at: '2026-10-03T00:01:02.345Z',
            },
          ],
          failing: [],
          waiting: [],
          elsewhere: [],
        });
        expect(sentOn((await app.inject({ url: '/versions/2/consumers' })).json())).toEqual({
          elsewhere: [
            { milestone: 'announced', brownout_start: null, channel: 'email', sent_at: '2026-10-04T08:00:00.000Z' },
          ],
        });
        await app.close();
      },
    );
  });
});
