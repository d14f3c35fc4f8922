import { describe, expect, it } from 'vitest';
import { nextAttemptAt, RETRY_FOR_MS } from '../../src/notices/retry.js';

const MINUTE = 60_000;
const HOUR = 3_600_000;

describe('nextAttemptAt', () => {
  it('waits the check interval after the first failure, then twice as long each time, never more than an hour', () => {
    const middle = () => 0.5;
    expect(
      [1, 2, 3, 4, 5, 6, 7, 8, 40].map((attempts) => (nextAttemptAt(attempts, 0, 0, MINUTE, middle) ?? 0) / MINUTE),
    ).toEqual([1, 2, 4, 8, 16, 32, 60, 60, 60]);
  });

  it('draws each wait within ±20 %, so replicas that failed together do not retry together', () => {
    expect(nextAttemptAt(3, 0, 0, MINUTE, () => 0)).toBe(0.8 * 4 * MINUTE);
    expect(nextAttemptAt(3, 0, 0, MINUTE, () => 1)).toBe(1.2 * 4 * MINUTE);
  });

  it('gives up 24 h after the first attempt: no next attempt then, one just before', () => {
    expect(nextAttemptAt(30, 1_000, 1_000 + RETRY_FOR_MS - 1, MINUTE, () => 0.5)).toBe(1_000 + RETRY_FOR_MS - 1 + HOUR);
    expect(nextAttemptAt(30, 1_000, 1_000 + RETRY_FOR_MS, MINUTE, () => 0.5)).toBeUndefined();
    expect(RETRY_FOR_MS).toBe(24 * HOUR);
  });
});
