import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { ConsumerUsageReader } from '../../src/consumers/store.js';
import { noticesSection, readNoticeFigures } from '../../src/status/notices.js';
import { readRegisteredConsumers } from '../../src/status/registered.js';
import { DAY, NOW, noticeFixturePerTest, type NoticeFixture } from '../notices/fixture.js';

const newFixture = noticeFixturePerTest();

const text = (html: string): string =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

/** The part as the status page renders it at `nowMs`: from the registered consumers it read, and the notice figures. */
async function section(
  opened: NoticeFixture,
  nowMs: number,
  consumers: ConsumerUsageReader = opened.opened.store,
): Promise<string> {
  const log = pino({ level: 'silent' });
  const policy = opened.policy.current;
  const versions = policy.versions.map(({ version }) => version);
  return noticesSection(
    policy,
    nowMs,
    await readRegisteredConsumers(consumers, versions, policy.defaultAt(nowMs), nowMs, log),
    await readNoticeFigures(opened.notices, policy, nowMs, log),
  ).toString();
}

describe("the status page's notices", () => {
  it(
    'say per deprecated version "notified N of M active consumers", fleet-wide, and list the notices given up with ' +
      'their last error',
    async () => {
      const fixture = await newFixture();
      for (const id of ['told', 'failing', 'untold']) await fixture.consumer(id, {});
      await fixture.consumer('inactive', { lastSeenMs: NOW - 31 * DAY });
      const record = (consumer: string, status: string, error: string | null) =>
        fixture.sql.query(
          `INSERT INTO gateway.notices (consumer_id, version, milestone, occasion, channel, message_id, status, ` +
            `due_at, recorded_at, attempts, first_attempt_at, last_error)
         VALUES ($1, 1, 'sunset_in_90_days', '', 'email', $1, $2, now(), now(), 27, now(), $3)`,
          [consumer, status, error],
        );
      await record('told', 'sent', null);
      await record('inactive', 'sent', null);
      await record('failing', 'failed', 'SMTP: 550 <failing@example.net> mailbox unavailable');
      const html = await section(fixture, NOW);
      expect(text(html)).toContain(
        'Notices about v1 Notified 1 of 3 active consumers (those still calling v1: a call in the last 30 days, after ' +
          'their last pin move, that would still get v1).',
      );
      expect(html).toContain('<td class="wrap">SMTP: 550 &lt;failing@example.net&gt; mailbox unavailable</td>');
      expect(text(html)).toContain('failing sunset_in_90_days email 27 SMTP: 550');
      expect(html).not.toContain('twice');
    },
  );

  it(
    'say nothing for a policy without a deprecated version, and that the figures are unknown while the store is ' +
      'down',
    async () => {
      const fixture = await newFixture();
      expect(await section(fixture, Date.parse('2026-05-01T00:00:00Z'))).toBe('');
      const down = { ...fixture.opened.store, consumersOf: () => Promise.reject(new Error('storage unavailable')) };
      expect(text(await section(fixture, NOW, down))).toBe(
        'Notices about v1 Unknown: the consumer store cannot be read.',
      );
    },
  );
});
