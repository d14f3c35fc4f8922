/**
 * What a notice tells a consumer is true for that consumer: the changes by their fields, every brownout window
 * ahead, its pin as it is, nothing more once it has moved off the version, and a pin the platform team moved.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ParsedMail } from 'mailparser';
import { readableInstant } from '../../src/versions/readable-instant.js';
import { ROLLBACK_WINDOW_MS } from '../../src/consumers/pins.js';
import type { MemoryConsumerStore } from '../support/memory-store.js';
import { ORDERS_V1_CHANGES } from '../support/orders-v1.js';
import { buildTestGateway, designPolicyFile, policyFrom, type TestGateway } from '../support/helpers.js';
import { eventually } from '../../../platform/test/support/eventually.mjs';
import { DAY, NOW, noticeFixturePerTest, noticeRows, type NoticeFixture } from './fixture.js';
import { startTestSmtp, startWebhookReceiver, type TestSmtp, type TestWebhookReceiver } from '../support/receivers.js';

const HOUR = 3_600_000;
const iso = (epochMs: number): string => new Date(epochMs).toISOString();
const when = (epochMs: number): string => readableInstant(epochMs);

const newFixture = noticeFixturePerTest();
let smtp: TestSmtp | undefined;
let hooks: TestWebhookReceiver | undefined;
let gateway: TestGateway | undefined;
afterEach(async () => {
  await gateway?.app.close();
  gateway = undefined;
  await smtp?.close();
  smtp = undefined;
  await hooks?.close();
  hooks = undefined;
});

const textOf = (mail: ParsedMail | undefined): string => mail?.text ?? '';
const recipient = (mail: ParsedMail): string => (Array.isArray(mail.to) ? '' : (mail.to?.value[0]?.address ?? ''));

/** One more day of calls of v1 by `id`, last at `atMs`, as any replica's ledger writes it. */
const called = (fixture: NoticeFixture, id: string, atMs: number, operation = 'GET /v1/orders/{id}') =>
  fixture.opened.store.addUsage([
    {
      consumerId: id,
      version: 1,
      operation,
      day: iso(atMs).slice(0, 10),
      requests: 3,
      firstSeenMs: atMs - 1_000,
      lastSeenMs: atMs,
    },
  ]);

describe('a deprecation notice', () => {
  it("says what moving to the successor would do to the consumer's calls: its upgrade preview's verdict", async () => {
    const fixture = await newFixture();
    fixture.policy.current = policyFrom({
      ...designPolicyFile,
      versions: [{ ...designPolicyFile.versions[0], changes: ORDERS_V1_CHANGES }, designPolicyFile.versions[1]],
    });
    smtp = await startTestSmtp();
    let secret = '';
    hooks = await startWebhookReceiver(() => secret);
    secret = await fixture.consumer('acme', { webhookUrl: hooks.url });
    await fixture.replica(smtp.url).check();
    const text = textOf(smtp.messages[0]);
    expect(text).toContain(
      '\nMoving to v2: review. These breaking changes touch the calls you made:\n' +
        '- GET /v1/orders/{id}: user_id is now customer_id: The customer identifier under its old name.\n' +
        '- GET /v1/orders/{id}: total is now total_cents (x100)\n' +
        'Your whole upgrade preview (with your API key): https://api.example.com/consumer/upgrade-preview?to=2\n',
    );
    expect(hooks.received[0]?.payload.data.move).toEqual({
      to: 2,
      verdict: 'review',
      changes: [
        'GET /v1/orders/{id}: user_id is now customer_id: The customer identifier under its old name.',
        'GET /v1/orders/{id}: total is now total_cents (x100)',
      ],
      blocking: [],
      preview: 'https://api.example.com/consumer/upgrade-preview?to=2',
    });
  });

  it(
    'names each breaking change by its fields, with the description the policy gives beside it, in the e-mail and ' +
      'the webhook',
    async () => {
      const fixture = await newFixture();
      fixture.policy.current = policyFrom({
        ...designPolicyFile,
        versions: [{ ...designPolicyFile.versions[0], changes: ORDERS_V1_CHANGES }, designPolicyFile.versions[1]],
      });
      smtp = await startTestSmtp();
      let secret = '';
      hooks = await startWebhookReceiver(() => secret);
      secret = await fixture.consumer('acme', { webhookUrl: hooks.url });
      await fixture.replica(smtp.url).check();
      const text = textOf(smtp.messages[0]);
      expect(text).toContain(
        '    breaking: user_id is now customer_id: The customer identifier under its old name.\n' +
          '    breaking: total is now total_cents (x100)\n',
      );
      expect(text).not.toContain('breaking: The customer identifier');
      const operations = (hooks.received[0]?.payload.data.operations ?? []) as {
        breaking_changes: { summary: string; name: string; to: string; description: string }[];
      }[];
      expect(operations[0]?.breaking_changes.map(({ summary, name, to }) => [summary, name, to])).toEqual([
        ['user_id is now customer_id', 'user_id', 'customer_id'],
        ['total is now total_cents (x100)', 'total', 'total_cents'],
      ]);
      expect(operations[0]?.breaking_changes[0]?.description).toBe('The customer identifier under its old name.');
    },
  );

  it('lists every brownout window still ahead, from the announcement on, not only 48 hours before each', async () => {
    const fixture = await newFixture();
    const sunset = NOW + 200 * DAY;
    const first = { start: NOW + 100 * DAY, end: NOW + 100 * DAY + 2 * HOUR };
    const second = { start: sunset - 10 * DAY, end: sunset - 10 * DAY + 4 * HOUR };
    fixture.policy.current = policyFrom({
      ...designPolicyFile,
      versions: [
        {
          ...designPolicyFile.versions[0],
          announced: iso(NOW - HOUR),
          sunset: iso(sunset),
          brownouts: [first, second].map(({ start, end }) => ({ start: iso(start), end: iso(end) })),
        },
        designPolicyFile.versions[1],
      ],
    });
    smtp = await startTestSmtp();
    await fixture.consumer('acme', {});
    const replica = fixture.replica(smtp.url);
    await replica.check();
    expect(smtp.messages.map((mail) => mail.subject)).toEqual([
      `API v1 is deprecated: it will be removed on ${when(sunset)}`,
    ]);
    expect(textOf(smtp.messages[0])).toContain(
      'Scheduled brownouts of v1 (every request answered 410 during each, as after its removal):\n' +
        `- ${when(first.start)} to ${when(first.end)}\n` +
        `- ${when(second.start)} to ${when(second.end)}\n`,
    );

    // 30 days before the sunset, after the first window: the one left.
    fixture.clock.now = sunset - 30 * DAY + HOUR;
    await called(fixture, 'acme', fixture.clock.now - DAY);
    await replica.check();
    expect(smtp.messages.map((mail) => mail.subject).at(-1)).toBe(
      `API v1 will be removed in 30 days, on ${when(sunset)}`,
    );
    expect(textOf(smtp.messages.at(-1))).toContain(
      'Scheduled brownouts of v1 (every request answered 410 during each, as after its removal):\n' +
        `- ${when(second.start)} to ${when(second.end)}\n\n`,
    );
  });

  it(
    'says the pin as it is, and goes to no consumer that moved its pin off the version and has not called it ' +
      'since',
    async () => {
      const fixture = await newFixture();
      smtp = await startTestSmtp();
      await fixture.consumer('pinned', {
        pinnedVersion: 1,
        operation: 'GET /orders/{id} pin',
        lastSeenMs: NOW - 2 * DAY,
      });
      await fixture.consumer('moved', {
        pinnedVersion: 1,
        operation: 'GET /orders/{id} pin',
        lastSeenMs: NOW - 2 * DAY,
      });
      await fixture.opened.store.movePin('moved', 2, NOW - DAY);
      await fixture.consumer('explicit', { pinnedVersion: 2, lastSeenMs: NOW - 2 * DAY });
      await fixture.replica(smtp.url).check();

      const byRecipient = new Map(smtp.messages.map((mail) => [recipient(mail), textOf(mail)]));
      expect([...byRecipient.keys()].sort()).toEqual(['explicit@example.net', 'pinned@example.net']);
      expect(byRecipient.get('pinned@example.net')).toContain(
        'Your pin is v1: your requests that name no version get it. Move it once your code reads v2: PUT ' +
          '/consumer/version {"version": 2} with your API key (you can roll it back within 72 hours).',
      );
      expect(byRecipient.get('pinned@example.net')).toContain(
        '- GET /orders/{id} naming no version (your pin: v1): 42 requests',
      );
      const explicit = byRecipient.get('explicit@example.net') ?? '';
      expect(explicit).toContain('Your pin is v2: your requests that name no version get it, not v1.');
      expect(explicit).toContain('- GET /v1/orders/{id}: 42 requests');
      expect(explicit).not.toMatch(/your pin: v1|move your pin/);
      expect((await noticeRows(fixture.sql)).map(([consumer]) => consumer)).not.toContain('moved');
    },
  );

  it('is skipped, never sent, when its consumer moves off the version before it goes out', async () => {
    const fixture = await newFixture();
    smtp = await startTestSmtp();
    await fixture.consumer('mover', { pinnedVersion: 1, operation: 'GET /orders/{id} pin' });
    await smtp.close();
    const replica = fixture.replica(smtp.url);
    await replica.check();
    expect(await noticeRows(fixture.sql)).toContainEqual(['mover', 'sunset_in_90_days', 'email', 'pending']);
    await fixture.opened.store.movePin('mover', 2, NOW + HOUR);
    await smtp.listen();
    fixture.clock.now = NOW + 2 * HOUR;
    await replica.check();
    expect(smtp.messages).toEqual([]);
    expect(await noticeRows(fixture.sql)).toContainEqual(['mover', 'sunset_in_90_days', 'email', 'skipped']);
    expect(fixture.counts.map(({ milestone, result }) => `${milestone} ${result}`)).toContain(
      'sunset_in_90_days skipped',
    );
  });
});

describe('a pin moved by the platform team', () => {
  it(
    'is told to its consumer by e-mail and webhook, with the rollback window, once across the fleet; an unchanged ' +
      'pin tells nothing',
    async () => {
      const fixture = await newFixture();
      smtp = await startTestSmtp();
      const secret = `whsec_${Buffer.from('a'.repeat(32)).toString('base64')}`;
      hooks = await startWebhookReceiver(() => secret);
      await fixture.opened.store.createConsumer(
        {
          id: 'acme',
          name: 'Acme Billing',
          contact_email: 'billing@acme.example',
          webhook_url: hooks.url,
          webhook_secret: secret,
          pinned_version: 1,
        },
        NOW - 100 * DAY,
      );
      // The app owns its consumer store and closes it; the fixture closes this one.
      const shared = { ...fixture.opened.store, close: async () => undefined } as unknown as MemoryConsumerStore;
      gateway = await buildTestGateway('http://127.0.0.1:9', {
        now: NOW,
        consumerStore: shared,
        notices: {
          store: fixture.notices,
          config: {
            email: { smtpUrl: smtp.url, from: { name: 'API team', address: 'api@example.com' } },
            intervalMs: 60_000,
            publicBaseUrl: 'https://api.example.com',
            sendTimeoutMs: 2_000,
          },
        },
      });
      const admin = await gateway.admin();
      const moved = await admin.inject({
        method: 'PUT',
        url: '/consumers/acme/version',
        payload: '{"version":2}',
      });
      expect(moved.statusCode).toBe(200);
      expect(moved.json()).toMatchObject({
        pinned_version: 2,
        previous_version: 1,
        pinned_at: iso(NOW),
        rollback_until: iso(NOW + ROLLBACK_WINDOW_MS),
      });
      await eventually('the e-mail and the webhook', () => smtp!.messages.length >= 1 && hooks!.received.length >= 1, {
        timeoutMs: 10_000,
      });
      // Another replica checking finds nothing left to send.
      await fixture.replica(smtp.url).check();

      expect(smtp.messages).toHaveLength(1);
      const [mail] = smtp.messages;
      expect(mail?.subject).toBe('Your API pin was moved from v1 to v2');
      expect(recipient(mail!)).toBe('billing@acme.example');
      expect(textOf(mail)).toBe(
        [
          'Hello Acme Billing,',
          '',
          `The API platform team moved your pin from v1 to v2 on ${when(NOW)}. From then on your requests that name ` +
            'no version (a bare path without API-Version) get v2; requests that name a version are not affected.',
          '',
          `If something breaks, move back to v1 yourself until ${when(NOW + ROLLBACK_WINDOW_MS)}: POST ` +
            '/consumer/version/rollback with your API key. After that, PUT /consumer/version {"version": 1} moves it ' +
            'while v1 is served.',
          '',
          'Where your pin stands (with your API key): https://api.example.com/consumer',
          'What changes from v1 to v2: https://api.example.com/versions/1/changes',
          'The changelog: https://api.example.com/changelog',
          '',
        ].join('\n'),
      );
      expect(hooks.received).toHaveLength(1);
      expect(hooks.received[0]?.payload).toEqual({
        type: 'pin.moved',
        data: {
          consumer: { id: 'acme', name: 'Acme Billing' },
          milestone: 'pin_moved',
          pinned_version: 2,
          previous_version: 1,
          pinned_at: iso(NOW),
          rollback_until: iso(NOW + ROLLBACK_WINDOW_MS),
          links: {
            consumer: 'https://api.example.com/consumer',
            migration_guide: 'https://api.example.com/versions/1/changes',
            changelog: 'https://api.example.com/changelog',
          },
        },
      });
      expect(await noticeRows(fixture.sql)).toEqual([
        ['acme', 'pin_moved', 'email', 'sent'],
        ['acme', 'pin_moved', 'webhook', 'sent'],
      ]);

      // Moving it to where it is changes nothing, and tells nothing.
      gateway.setNow(NOW + HOUR);
      expect(
        (await admin.inject({ method: 'PUT', url: '/consumers/acme/version', payload: '{"version":2}' })).statusCode,
      ).toBe(200);
      await fixture.replica(smtp.url).check();
      expect(smtp.messages).toHaveLength(1);
      expect(await noticeRows(fixture.sql)).toHaveLength(2);
    },
  );
});
