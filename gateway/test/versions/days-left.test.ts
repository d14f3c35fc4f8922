import { describe, expect, it } from 'vitest';
import { dayCount, daysLeft } from '../../src/versions/days-left.js';
import { noticeMessage, subjectOf, textOf } from '../../src/notices/message.js';
import type { MessageInput } from '../../src/notices/message.js';
import { at } from '../support/helpers.js';

const SUNSET = at('2027-01-01T00:00:00Z');
const HOUR = 3_600_000;

/** A sunset_in_7_days notice of v1 to one consumer, at `nowMs`. */
function noticeAt(nowMs: number) {
  const input = {
    notice: {
      messageId: 'm-1',
      consumerId: 'acme',
      consumer: { name: 'Acme' },
      version: 1,
      milestone: 'sunset_in_7_days',
      occasion: '',
    },
    entry: { version: 1, status: 'deprecated', announced: at('2026-06-01'), sunset: SUNSET, successor: 2 },
    report: undefined,
    pinnedVersion: null,
    countedFromMs: Number.NEGATIVE_INFINITY,
    nowMs,
    baseUrl: '',
  } as unknown as MessageInput;
  return noticeMessage(input).data;
}

describe('days left: one count everywhere (rounded up)', () => {
  it('rounds a part of a day up, and is 0 from the sunset on', () => {
    expect(daysLeft(SUNSET, SUNSET - 34 * 24 * HOUR - HOUR)).toBe(35);
    expect(daysLeft(SUNSET, SUNSET - 34 * 24 * HOUR)).toBe(34);
    expect(daysLeft(SUNSET, SUNSET - 2 * HOUR)).toBe(1);
    expect(daysLeft(SUNSET, SUNSET)).toBe(0);
    expect(daysLeft(SUNSET, SUNSET + HOUR)).toBe(0);
  });

  it('says "1 day" and "2 days"', () => {
    expect(dayCount(1)).toBe('1 day');
    expect(dayCount(2)).toBe('2 days');
  });

  it('gives the e-mail and the webhook the same count, singular under a day', () => {
    const data = noticeAt(SUNSET - 2 * HOUR);
    expect(data.days_left).toBe(1);
    expect(subjectOf(data)).toBe('API v1 will be removed in 1 day, on 2027-01-01');
    expect(textOf(data)).toContain('It will be removed on 2027-01-01, in 1 day.');
    expect(subjectOf(noticeAt(SUNSET - 34 * 24 * HOUR - HOUR))).toBe(
      'API v1 will be removed in 35 days, on 2027-01-01',
    );
  });
});

describe('a scheduled key requirement in a notice', () => {
  it('is said while it is ahead, in the data and the text', () => {
    const input = {
      notice: {
        messageId: 'm-1',
        consumerId: 'acme',
        consumer: { name: 'Acme' },
        version: 1,
        milestone: 'announced',
        occasion: '',
      },
      entry: {
        version: 1,
        status: 'deprecated',
        announced: at('2026-06-01'),
        sunset: SUNSET,
        successor: 2,
        consumer_key: { required_from: at('2026-10-01') },
      },
      report: undefined,
      pinnedVersion: null,
      countedFromMs: Number.NEGATIVE_INFINITY,
      nowMs: at('2026-06-01'),
      baseUrl: '',
    } as unknown as MessageInput;
    const data = noticeMessage(input).data;
    expect(data.api_key_required_from).toBe('2026-10-01T00:00:00.000Z');
    expect(textOf(data)).toContain(
      'From 2026-10-01, v1 answers only requests that carry an API key: send yours on every request.',
    );
    expect(noticeMessage({ ...input, nowMs: at('2026-10-01') }).data.api_key_required_from).toBeNull();
    expect(noticeAt(at('2026-10-01')).api_key_required_from).toBeNull();
  });
});
