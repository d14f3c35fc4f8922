import { describe, expect, it } from 'vitest';
import { createTopK } from '../../src/accounting/top-k.js';

/** A deterministic pseudo-random sequence (mulberry32), so a failure replays. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

describe('the Space-Saving top-k table', () => {
  it('counts exactly, in any order, while fewer keys than its capacity have been seen', () => {
    const next = random(1);
    const expected = new Map<string, number>();
    const stream: string[] = [];
    for (let i = 0; i < 60; i++) {
      const times = 1 + Math.floor(next() * 40);
      expected.set(`client-${i}`, times);
      for (let n = 0; n < times; n++) stream.push(`client-${i}`);
    }
    for (let i = stream.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [stream[i], stream[j]] = [stream[j] as string, stream[i] as string];
    }
    const table = createTopK(100);
    stream.forEach((key, i) => table.offer(key, i));

    expect(table.size).toBe(60);
    expect(table.displaced).toBe(0);
    const entries = table.entries();
    expect(new Map(entries.map(({ key, count }) => [key, count]))).toEqual(expected);
    expect(entries.every(({ overestimate }) => overestimate === 0)).toBe(true);
    for (let i = 1; i < entries.length; i++) expect(entries[i - 1]!.count).toBeGreaterThanOrEqual(entries[i]!.count);
    // The last occurrence of each key is its last_seen.
    const lastIndex = new Map(stream.map((key, i) => [key, i]));
    expect(entries.every(({ key, lastSeenMs }) => lastIndex.get(key) === lastSeenMs)).toBe(true);
  });

  it('lists equal counts with the most recently seen first', () => {
    const table = createTopK(10);
    table.offer('a', 1);
    table.offer('b', 2);
    table.offer('c', 3);
    table.offer('b', 4);
    expect(table.entries().map(({ key, count }) => `${key}:${count}`)).toEqual(['b:2', 'c:1', 'a:1']);
  });

  it(
    'gives a new key the counter of the smallest count (the oldest among equals), counting it as an upper ' + 'bound',
    () => {
      const table = createTopK(2);
      table.offer('a', 1);
      table.offer('a', 2);
      table.offer('a', 3);
      table.offer('b', 4);
      table.offer('c', 5);
      expect(table.entries()).toEqual([
        { key: 'a', count: 3, overestimate: 0, lastSeenMs: 3 },
        { key: 'c', count: 2, overestimate: 1, lastSeenMs: 5 },
      ]);
      expect(table.displaced).toBe(1);
      // 'b' is gone; offering it again displaces 'c' (count 2 < 3), and it was seen last.
      table.offer('b', 6);
      expect(table.entries().map(({ key, count }) => `${key}:${count}`)).toEqual(['b:3', 'a:3']);
    },
  );

  it('stays at its capacity under a flood of 100,000 distinct keys and keeps the heavy hitters sent among them', () => {
    const table = createTopK(100);
    const heavy = { 'acme-billing': 3_000, 'legacy-mobile/4.2': 2_000, 'partner-sync': 1_500 };
    const next = random(7);
    // The heavy hitters' requests at random places among 100,000 requests of distinct keys.
    const heavyLeft = Object.entries(heavy).flatMap(([key, times]) => Array<string>(times).fill(key));
    const stream: string[] = [];
    let noise = 0;
    while (noise < 100_000 || heavyLeft.length > 0) {
      const left = heavyLeft.length;
      if (left > 0 && next() * (left + 100_000 - noise) < left) {
        const at = Math.floor(next() * left);
        stream.push(heavyLeft[at] as string);
        heavyLeft[at] = heavyLeft[left - 1] as string;
        heavyLeft.pop();
      } else stream.push(`noise-${noise++}`);
    }
    let largest = 0;
    stream.forEach((key, i) => {
      table.offer(key, i);
      if (i % 997 === 0) largest = Math.max(largest, table.size);
    });

    expect(table.size).toBe(100);
    expect(largest).toBeLessThanOrEqual(100);
    const top = table.entries().slice(0, 3);
    expect(top.map(({ key }) => key)).toEqual(Object.keys(heavy));
    // Space-Saving never under-counts, and over-counts by at most N / capacity.
    const bound = stream.length / 100;
    for (const { key, count, overestimate } of top) {
      const truth = heavy[key as keyof typeof heavy];
      expect(count).toBeGreaterThanOrEqual(truth);
      expect(count).toBeLessThanOrEqual(truth + bound);
      expect(count - overestimate).toBeLessThanOrEqual(truth);
    }
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => createTopK(0)).toThrow('capacity must be a positive integer, got 0');
    expect(() => createTopK(1.5)).toThrow(RangeError);
  });
});
