import { describe, expect, it } from 'vitest';
import { WINDOW_SECONDS, createTrafficRing } from '../../src/accounting/traffic.js';

const T0 = Date.parse('2026-11-22T12:00:00.000Z');

describe('the ring of per-second request counters', () => {
  it('sums the last 5 minutes per version, with requests that named no version apart', () => {
    const ring = createTrafficRing();
    ring.count(1, T0);
    ring.count(1, T0 + 999);
    ring.count(2, T0 + 1_000);
    ring.count(null, T0 + 2_000);
    ring.count(1, T0 + 299_000);
    expect(ring.recent(T0 + 299_500)).toEqual({
      byVersion: new Map([
        [1, 3],
        [2, 1],
      ]),
      unversioned: 1,
    });
  });

  it('drops each second once it is 5 minutes old, also when its bucket is not reused', () => {
    const ring = createTrafficRing();
    ring.count(1, T0);
    ring.count(2, T0 + 1_000);
    // Second T0 leaves the window at T0 + 300 s; second T0 + 1 s one second later.
    expect(ring.recent(T0 + (WINDOW_SECONDS - 1) * 1_000).byVersion).toEqual(
      new Map([
        [1, 1],
        [2, 1],
      ]),
    );
    expect(ring.recent(T0 + WINDOW_SECONDS * 1_000).byVersion).toEqual(new Map([[2, 1]]));
    expect(ring.recent(T0 + (WINDOW_SECONDS + 1) * 1_000)).toEqual({ byVersion: new Map(), unversioned: 0 });
  });

  it("reuses a bucket for a new second: the old second's counts of every version are cleared", () => {
    const ring = createTrafficRing();
    ring.count(1, T0);
    ring.count(null, T0);
    ring.count(2, T0 + WINDOW_SECONDS * 1_000);
    expect(ring.recent(T0 + WINDOW_SECONDS * 1_000)).toEqual({ byVersion: new Map([[2, 1]]), unversioned: 0 });
  });

  it('counts nothing in the future of the reading (a clock set back)', () => {
    const ring = createTrafficRing();
    ring.count(1, T0 + 60_000);
    expect(ring.recent(T0).byVersion).toEqual(new Map());
  });
});
