import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestPostgres, type TestPostgres } from '../../../platform/test/support/postgres.js';
import { messageIdOf } from '../../src/notices/store.js';
import {
  DAY,
  INTERVAL_MS,
  LEASE_MS,
  NOW,
  noticeFixture,
  noticeRows,
  SEND_TIMEOUT_MS,
  type NoticeFixture,
} from './fixture.js';
import { startTestSmtp, startWebhookReceiver, type TestSmtp, type TestWebhookReceiver } from '../support/receivers.js';

let postgres: TestPostgres;
let fixture: NoticeFixture;
let smtp: TestSmtp;
let hooks: TestWebhookReceiver | undefined;

beforeAll(async () => {
  postgres = await startTestPostgres();
}, 60_000);
afterAll(() => postgres?.close());

const setUp = async (): Promise<void> => {
  fixture = await noticeFixture(postgres);
  smtp = await startTestSmtp();
};
afterEach(async () => {
  await fixture?.close();
  await smtp?.close();
  await hooks?.close();
  hooks = undefined;
});

const results = () => fixture.counts.map(({ milestone, channel, result }) => `${milestone} ${channel} ${result}`);
const NINETY = { consumerId: 'acme', version: 1, milestone: 'sunset_in_90_days', occasion: '' } as const;

describe('deprecation notices by e-mail', () => {
  it(
    'tell each consumer of the version the milestone due, once: its own operations, what breaks in them, the ' +
      "links; Message-ID from the notice's id",
    async () => {
      await setUp();
      await fixture.consumer('acme', { requests: 42, lastSeenMs: NOW - DAY });
      const replica = fixture.replica(smtp.url);
      await replica.check();
      expect(smtp.messages).toHaveLength(1);
      const [mail] = smtp.messages;
      expect(mail?.from?.value).toEqual([{ name: 'API team', address: 'api@example.com' }]);
      expect(mail?.to).toMatchObject({ value: [{ address: 'acme@example.net' }] });
      expect(mail?.subject).toBe('API v1 will be removed in 40 days, on 2027-01-01');
      expect(mail?.messageId).toBe(`<${messageIdOf({ ...NINETY, channel: 'email' })}@example.com>`);
      expect(mail?.headers.get('x-notice-type')).toBe('version.sunset_in_90_days');
      const text = mail?.text ?? '';
      expect(text).toContain('Hello Team acme,');
      expect(text).toContain('Version 1 of the API is deprecated. It will be removed on 2027-01-01, in 40 days.');
      expect(text).toContain('Its successor is version 2.');
      expect(text).toContain(
        `- GET /v1/orders/{id}: 42 requests, last on ${new Date(NOW - DAY).toISOString().slice(0, 10)} 12:00 UTC`,
      );
      expect(text).toContain('    send instead: GET /v2/orders/{id}\n');
      expect(text).toMatch(/breaking: .*user_id/);
      expect(text).toMatch(/breaking: .*total/);
      expect(text).toContain('The migration guide: https://api.example.com/versions/1/changes');
      expect(text).toContain('(with your API key): https://api.example.com/deprecations');
      expect(text).toContain('The changelog: https://api.example.com/changelog');
      // The announcement was due before: recorded as skipped, never sent.
      expect(await noticeRows(fixture.sql)).toEqual([
        ['acme', 'announced', 'email', 'skipped'],
        ['acme', 'sunset_in_90_days', 'email', 'sent'],
      ]);
      expect(results()).toEqual(['announced email skipped', 'sunset_in_90_days email sent']);

      fixture.clock.now += 2 * INTERVAL_MS;
      await replica.check();
      await fixture.replica(smtp.url).check();
      expect(smtp.messages).toHaveLength(1);
    },
  );

  it('tell only the consumers that called the version in the last 30 days', async () => {
    await setUp();
    await fixture.consumer('recent', { lastSeenMs: NOW - 29 * DAY });
    await fixture.consumer('gone', { lastSeenMs: NOW - 31 * DAY });
    await fixture.replica(smtp.url).check();
    expect(smtp.messages.map((mail) => mail.subject)).toEqual(['API v1 will be removed in 40 days, on 2027-01-01']);
    expect(smtp.messages.map((mail) => mail.to)).toMatchObject([{ value: [{ address: 'recent@example.net' }] }]);
  });

  it('go out once across replicas: two replicas checking together send one e-mail per consumer', async () => {
    await setUp();
    const ids = Array.from({ length: 23 }, (_, i) => `consumer-${String(i).padStart(2, '0')}`);
    for (const id of ids) await fixture.consumer(id, {});
    const [a, b] = [fixture.replica(smtp.url), fixture.replica(smtp.url)];
    await Promise.all([a.check(), b.check(), a.check(), b.check()]);
    const recipients = smtp.messages.map((mail) => (Array.isArray(mail.to) ? '' : (mail.to?.value[0]?.address ?? '')));
    expect(recipients.sort()).toEqual(ids.map((id) => `${id}@example.net`));
    expect(fixture.counts.filter(({ result }) => result === 'sent')).toHaveLength(23);
  });

  it(
    'retry while the SMTP server is down (backoff from the check interval) and deliver once it is up, with the ' +
      'same Message-ID',
    async () => {
      await setUp();
      await fixture.consumer('acme', {});
      await smtp.close();
      const replica = fixture.replica(smtp.url);
      await replica.check();
      expect(results()).toEqual(['announced email skipped', 'sunset_in_90_days email retried']);
      const { rows } = await fixture.sql.query<{ next: number; attempts: number; last_error: string }>(
        'SELECT (extract(epoch FROM next_attempt_at) * 1000)::float8 AS next, attempts, last_error FROM ' +
          "gateway.notices WHERE status = 'pending'",
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]?.attempts).toBe(1);
      expect(rows[0]?.last_error).toMatch(/ECONNREFUSED/);
      // The first wait is the check interval, drawn from 0.8 to 1.2 times it.
      expect(rows[0]?.next).toBeGreaterThanOrEqual(NOW + 0.8 * INTERVAL_MS);
      expect(rows[0]?.next).toBeLessThanOrEqual(NOW + 1.2 * INTERVAL_MS);

      await smtp.listen();
      await replica.check();
      expect(smtp.messages, 'not before its next attempt').toHaveLength(0);
      fixture.clock.now += 1.2 * INTERVAL_MS;
      await replica.check();
      expect(smtp.messages).toHaveLength(1);
      expect(smtp.messages[0]?.messageId).toBe(`<${messageIdOf({ ...NINETY, channel: 'email' })}@example.com>`);
      expect(await noticeRows(fixture.sql)).toEqual([
        ['acme', 'announced', 'email', 'skipped'],
        ['acme', 'sunset_in_90_days', 'email', 'sent'],
      ]);
    },
  );

  it(
    'skip a notice still retrying when a later milestone comes due: the later one is sent, the earlier ' + 'never',
    async () => {
      await setUp();
      await fixture.consumer('acme', {});
      await smtp.close();
      const replica = fixture.replica(smtp.url);
      await replica.check();
      await smtp.listen();
      fixture.clock.now = Date.parse('2026-12-02T00:00:00Z');
      await fixture.sql.query("UPDATE gateway.usage SET last_seen = '2026-12-01T00:00:00Z'");
      await replica.check();
      expect(smtp.messages.map((mail) => mail.subject)).toEqual(['API v1 will be removed in 30 days, on 2027-01-01']);
      expect(await noticeRows(fixture.sql)).toEqual([
        ['acme', 'announced', 'email', 'skipped'],
        ['acme', 'sunset_in_90_days', 'email', 'skipped'],
        ['acme', 'sunset_in_30_days', 'email', 'sent'],
      ]);
    },
  );

  it('hold a check no longer than the send timeout when the SMTP server accepts and never answers', async () => {
    await setUp();
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      await fixture.consumer('acme', {});
      const started = Date.now();
      await fixture.replica(`smtp://127.0.0.1:${(silent.address() as { port: number }).port}`).check();
      // A margin a loaded machine keeps: the limit is 1 s, the greeting never comes.
      expect(Date.now() - started).toBeLessThan(10 * SEND_TIMEOUT_MS);
      expect(results()).toEqual(['announced email skipped', 'sunset_in_90_days email retried']);
      const { rows } = await fixture.sql.query<{ last_error: string }>(
        "SELECT last_error FROM gateway.notices WHERE status = 'pending'",
      );
      expect(rows[0]?.last_error).toBe(`SMTP: no answer within ${SEND_TIMEOUT_MS} ms`);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it(
    'record no e-mail notice without SMTP_URL: nothing to claim, and none is sent later for a milestone already ' +
      'past',
    async () => {
      await setUp();
      await fixture.consumer('acme', {});
      await fixture.replica(undefined).check();
      expect(await noticeRows(fixture.sql)).toEqual([]);
    },
  );
});

describe('deprecation notices by webhook', () => {
  it(
    'are signed as Standard Webhooks sign (verified by the reference implementation): webhook-id the notice id, ' +
      'type version.<milestone>',
    async () => {
      await setUp();
      let secret = '';
      hooks = await startWebhookReceiver(() => secret);
      secret = await fixture.consumer('acme', { email: null, webhookUrl: hooks.url, requests: 7 });
      await fixture.replica(smtp.url).check();
      expect(hooks.refused).toBe(0);
      expect(hooks.received).toHaveLength(1);
      const [hook] = hooks.received;
      expect(hook?.headers['webhook-id']).toBe(messageIdOf({ ...NINETY, channel: 'webhook' }));
      expect(Math.abs(Number(hook?.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
      expect(hook?.headers['content-type']).toBe('application/json');
      expect(hook?.payload).toMatchObject({
        type: 'version.sunset_in_90_days',
        data: {
          consumer: { id: 'acme', name: 'Team acme' },
          milestone: 'sunset_in_90_days',
          version: 1,
          phase: 'deprecated',
          sunset: '2027-01-01T00:00:00.000Z',
          days_left: 40,
          successor: 2,
          brownout: null,
          operations: [
            { operation: 'GET /v1/orders/{id}', requests_30_days: 7, last_seen: new Date(NOW - DAY).toISOString() },
          ],
          links: {
            migration_guide: 'https://api.example.com/versions/1/changes',
            deprecations: 'https://api.example.com/deprecations',
            changelog: 'https://api.example.com/changelog',
          },
        },
      });
      const operations = (hook?.payload.data.operations ?? []) as {
        breaking_changes: { name: string; breaking: boolean }[];
      }[];
      expect(operations[0]?.breaking_changes.map(({ name }) => name).sort()).toEqual(['total', 'user_id']);
      expect(smtp.messages, 'no contact_email: no e-mail').toHaveLength(0);
    },
  );

  it(
    'answered 500 are retried with doubling waits (capped at an hour) for 24 h, each with the same id and a fresh ' +
      'signature, then failed',
    async () => {
      await setUp();
      let secret = '';
      hooks = await startWebhookReceiver(() => secret);
      hooks.answer = 500;
      secret = await fixture.consumer('acme', { email: null, webhookUrl: hooks.url });
      const replica = fixture.replica(undefined);
      const waits: number[] = [];
      for (let attempt = 0; attempt < 60; attempt++) {
        await replica.check();
        const { rows } = await fixture.sql.query<{ status: string; next: number | null }>(
          'SELECT status, (extract(epoch FROM next_attempt_at) * 1000)::float8 AS next FROM gateway.notices WHERE ' +
            "milestone = 'sunset_in_90_days'",
        );
        if (rows[0]?.status !== 'pending') break;
        waits.push((rows[0].next ?? 0) - fixture.clock.now);
        fixture.clock.now = rows[0].next ?? 0;
      }
      expect(await noticeRows(fixture.sql)).toEqual([
        ['acme', 'announced', 'webhook', 'skipped'],
        ['acme', 'sunset_in_90_days', 'webhook', 'failed'],
      ]);
      expect(fixture.clock.now - NOW).toBeGreaterThanOrEqual(24 * 3_600_000);
      expect(fixture.clock.now - NOW).toBeLessThan(26 * 3_600_000);
      // 1 min, 2, 4 … then an hour, each drawn from 0.8 to 1.2 times that.
      waits.forEach((wait, i) => {
        const nominal = Math.min(INTERVAL_MS * 2 ** i, 3_600_000);
        expect(wait).toBeGreaterThanOrEqual(0.8 * nominal - 1);
        expect(wait).toBeLessThanOrEqual(1.2 * nominal + 1);
      });
      expect(hooks.received.length).toBe(waits.length + 1);
      expect(new Set(hooks.received.map(({ headers }) => headers['webhook-id']))).toEqual(
        new Set([messageIdOf({ ...NINETY, channel: 'webhook' })]),
      );
      expect(results().filter((result) => result.endsWith('retried'))).toHaveLength(waits.length);
      expect(results().at(-1)).toBe('sunset_in_90_days webhook failed');
      const { failed } = await fixture.notices.ofVersion(1);
      expect(failed).toEqual([
        expect.objectContaining({
          consumerId: 'acme',
          milestone: 'sunset_in_90_days',
          channel: 'webhook',
          lastError: 'webhook answered 500',
        }),
      ]);
    },
  );

  it('that hang hold a check no longer than the send timeout, and are retried', async () => {
    await setUp();
    let secret = '';
    hooks = await startWebhookReceiver(() => secret);
    hooks.answer = 'hang';
    secret = await fixture.consumer('acme', { email: null, webhookUrl: hooks.url });
    const started = Date.now();
    await fixture.replica(undefined).check();
    expect(Date.now() - started).toBeLessThan(10 * SEND_TIMEOUT_MS);
    expect(results()).toEqual(['announced webhook skipped', 'sunset_in_90_days webhook retried']);
  });
});

describe('a sender that stops during a delivery', () => {
  it(
    'leaves the notice to another replica once its lease has lapsed: delivered, counted resent, reported as ' +
      'possibly twice',
    async () => {
      await setUp();
      await fixture.consumer('acme', {});
      await fixture.consumer('other', {});
      // Recorded (a first attempt failed), then replica a claims both and starts the first delivery, then stops dead.
      const store = fixture.notices;
      await smtp.close();
      await fixture.replica(smtp.url).check();
      await smtp.listen();
      await fixture.sql.query("UPDATE gateway.notices SET next_attempt_at = $1 WHERE status = 'pending'", [
        new Date(NOW).toISOString(),
      ]);
      fixture.counts.length = 0;
      const claimed = await store.claim('replica-a', ['email'], 10, NOW, LEASE_MS);
      expect(claimed.map(({ consumerId }) => consumerId)).toEqual(['acme', 'other']);
      expect(await store.begin(claimed[0]!, 'replica-a', NOW, LEASE_MS)).toBe(true);

      const b = fixture.replica(smtp.url);
      await b.check();
      expect(smtp.messages, 'nothing while the lease holds').toHaveLength(0);
      fixture.clock.now = NOW + LEASE_MS;
      await b.check();
      expect(smtp.messages.map((mail) => (Array.isArray(mail.to) ? '' : mail.to?.value[0]?.address)).sort()).toEqual([
        'acme@example.net',
        'other@example.net',
      ]);
      expect(results().filter((result) => !result.endsWith('skipped'))).toEqual([
        'sunset_in_90_days email resent',
        'sunset_in_90_days email sent',
      ]);
      expect((await store.ofVersion(1)).possiblyTwice).toBe(1);
      expect(
        await store.finish(claimed[1]!, 'replica-a', { status: 'sent' }, NOW + LEASE_MS),
        'the stopped sender records nothing over the new one',
      ).toBe(false);
    },
  );
});
