import { describe, expect, it } from 'vitest';
import { CONSUMER_KEY_LENGTH, consumerKey, createConsumerTable } from '../../src/accounting/top-consumers.js';

const NOW = Date.parse('2026-11-22T12:00:00Z');

describe('the consumer series of the table (api_version_consumer_requests_total)', () => {
  it(
    'names the first 20 consumers of a version, counts everyone after them as other, and names a heavier one at ' +
      'the next scrape',
    () => {
      const table = createConsumerTable();
      for (let i = 0; i < 20; i++) for (let n = 0; n <= i; n++) table.count(1, `client-${i}`, NOW);
      table.count(1, 'once-late', NOW);
      table.count(2, 'late-on-v2', NOW);
      // client-0 … client-19 with 1 … 20 requests; once-late has 1 request: fewer than 2, so no name.
      expect(table.series()).toEqual([
        ...Array.from({ length: 20 }, (_, i) => ({ version: 1, consumer: `client-${i}`, requests: i + 1 })),
        { version: 1, consumer: 'other', requests: 1 },
        { version: 2, consumer: 'late-on-v2', requests: 1 },
      ]);
      // heavy: 3 requests in other, at least twice client-0's 1: it takes client-0's name at the next scrape,
      // client-0's 1 request moves into other, and heavy's series starts at 0.
      for (let n = 0; n < 3; n++) table.count(1, 'heavy', NOW);
      const series = table.series().filter(({ version }) => version === 1);
      expect(series).toEqual([
        ...Array.from({ length: 19 }, (_, i) => ({ version: 1, consumer: `client-${i + 1}`, requests: i + 2 })),
        { version: 1, consumer: 'heavy', requests: 0 },
        { version: 1, consumer: 'other', requests: 1 + 3 + 1 },
      ]);
      table.count(1, 'heavy', NOW);
      expect(table.series().find(({ consumer }) => consumer === 'heavy')).toEqual({
        version: 1,
        consumer: 'heavy',
        requests: 1,
      });
    },
  );

  it(
    'never lowers a series between two scrapes that both show it, and its series add up to every request (counters ' +
      'Prometheus can sum across replicas)',
    () => {
      const table = createConsumerTable();
      let previous = new Map<string, number>();
      let counted = 0;
      for (let round = 0; round < 50; round++) {
        // New consumers every round, some of them heavier than the named ones.
        for (let n = 0; n < 5; n++) table.count(1, `round-${round}-client-${n}`, NOW);
        for (let n = 0; n < round; n++) table.count(1, `heavy-${round}`, NOW);
        counted += 5 + round;
        const current = new Map(table.series().map(({ consumer, requests }) => [consumer, requests]));
        expect(current.size).toBeLessThanOrEqual(21);
        for (const [consumer, requests] of previous)
          if (current.has(consumer)) expect(current.get(consumer)).toBeGreaterThanOrEqual(requests);
        expect([...current.values()].reduce((sum, requests) => sum + requests, 0)).toBe(counted);
        previous = current;
      }
      // Names followed the heavy consumers: none of the first round's light ones keeps one.
      expect([...previous.keys()].filter((consumer) => consumer.startsWith('round-'))).toEqual([]);
      expect([...previous.keys()].filter((consumer) => consumer.startsWith('heavy-'))).toHaveLength(20);
    },
  );

  it('counts a consumer that calls itself "other" under other, so no two series share a label set', () => {
    const table = createConsumerTable();
    table.count(1, 'other', NOW);
    table.count(1, 'acme', NOW);
    expect(table.series()).toEqual([
      { version: 1, consumer: 'acme', requests: 1 },
      { version: 1, consumer: 'other', requests: 1 },
    ]);
  });
});

describe('consumer keys', () => {
  it('takes X-Client-Id, else User-Agent, else "unknown"; an empty header counts as absent', () => {
    expect(consumerKey({ 'x-client-id': 'acme-billing', 'user-agent': 'curl/8.5.0' })).toBe('acme-billing');
    expect(consumerKey({ 'user-agent': 'curl/8.5.0' })).toBe('curl/8.5.0');
    expect(consumerKey({ 'x-client-id': '', 'user-agent': 'curl/8.5.0' })).toBe('curl/8.5.0');
    expect(consumerKey({ 'user-agent': '' })).toBe('unknown');
    expect(consumerKey({})).toBe('unknown');
  });

  it('cuts keys longer than 128 characters', () => {
    const long = `${'x'.repeat(CONSUMER_KEY_LENGTH)}tail`;
    expect(consumerKey({ 'x-client-id': long })).toBe('x'.repeat(128));
    expect(consumerKey({ 'user-agent': long })).toHaveLength(128);
    expect(consumerKey({ 'x-client-id': 'y'.repeat(128) })).toBe('y'.repeat(128));
  });
});

describe('the consumer table of several versions', () => {
  it('keeps one bounded table per version and reports versions ascending, consumers by requests', () => {
    const consumers = createConsumerTable(3);
    const start = Date.parse('2026-11-22T12:00:00.000Z');
    consumers.count(3, 'c', start);
    ['a', 'b', 'a', 'd', 'e', 'a'].forEach((key, i) => consumers.count(1, key, start + 250 * (i + 1)));

    expect(consumers.tracked(1)).toBe(3);
    expect(consumers.approximate(1)).toBe(true);
    expect(consumers.approximate(3)).toBe(false);
    expect(consumers.versions().sort()).toEqual([1, 3]);
    // 'e' took the counter of 'b' (count 1, seen before 'd'), so it reports 2.
    expect(consumers.report([3, 1, 2, 1])).toEqual([
      {
        version: 1,
        consumers: [
          { consumer: 'a', requests: 3, last_seen: '2026-11-22T12:00:01.500Z' },
          { consumer: 'e', requests: 2, last_seen: '2026-11-22T12:00:01.250Z' },
          { consumer: 'd', requests: 1, last_seen: '2026-11-22T12:00:01.000Z' },
        ],
      },
      { version: 2, consumers: [] },
      { version: 3, consumers: [{ consumer: 'c', requests: 1, last_seen: '2026-11-22T12:00:00.000Z' }] },
    ]);
  });
});
