import { afterEach, describe, expect, it, vi } from 'vitest';
import { clockStartingAt } from '../src/clock.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('clockStartingAt', () => {
  it('reads the given instant at first, then advances with the monotonic clock, whatever the date does', () => {
    vi.useFakeTimers({ toFake: ['performance', 'Date'], now: Date.parse('2026-11-28T12:00:00Z') });
    const start = Date.parse('2029-10-03T00:00:00Z');
    const clock = clockStartingAt(start);
    expect(clock()).toBe(start);
    vi.advanceTimersByTime(90_500);
    expect(clock()).toBe(start + 90_500);
    vi.setSystemTime(Date.parse('2020-01-01T00:00:00Z'));
    expect(clock()).toBe(start + 90_500);
  });
});
