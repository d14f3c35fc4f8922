/** The window the status page reports: the last 5 minutes, in one-second buckets. */
export const WINDOW_SECONDS = 300;

interface RecentTraffic {
  /** Requests per version within the window, for versions with at least one. */
  byVersion: Map<number, number>;
  /** Requests that named no valid version (406, conflicting 400) within the window. */
  unversioned: number;
}

export interface TrafficRing {
  /** One request on `version` (null: the request named no valid version) at `nowMs`. */
  count(version: number | null, nowMs: number): void;
  /** The requests of the seconds in (now − 5 min, now]. */
  recent(nowMs: number): RecentTraffic;
}

/**
 * A ring of per-second counters per version: the bucket of second s is s mod 300, reused once its
 * second is over 5 minutes old. Counting allocates nothing except one ring the first time a version
 * is seen, and versions come from the policy file, so memory is bounded by it.
 */
export function createTrafficRing(): TrafficRing {
  // The second each bucket currently holds; a bucket holding another second is stale.
  const secondOf = new Float64Array(WINDOW_SECONDS).fill(Number.NaN);
  const rings = new Map<number, Uint32Array>();
  const unversioned = new Uint32Array(WINDOW_SECONDS);

  const bucketFor = (nowMs: number): number => {
    const second = Math.floor(nowMs / 1000);
    const bucket = ((second % WINDOW_SECONDS) + WINDOW_SECONDS) % WINDOW_SECONDS;
    if (secondOf[bucket] !== second) {
      secondOf[bucket] = second;
      for (const ring of rings.values()) ring[bucket] = 0;
      unversioned[bucket] = 0;
    }
    return bucket;
  };

  return {
    count(version, nowMs) {
      const bucket = bucketFor(nowMs);
      if (version === null) {
        unversioned[bucket]! += 1;
        return;
      }
      let ring = rings.get(version);
      if (ring === undefined) {
        ring = new Uint32Array(WINDOW_SECONDS);
        rings.set(version, ring);
      }
      ring[bucket]! += 1;
    },
    recent(nowMs) {
      const now = Math.floor(nowMs / 1000);
      const inWindow = (bucket: number): boolean =>
        secondOf[bucket]! <= now && secondOf[bucket]! > now - WINDOW_SECONDS;
      const byVersion = new Map<number, number>();
      for (const [version, ring] of rings) {
        let total = 0;
        for (let bucket = 0; bucket < WINDOW_SECONDS; bucket++) if (inWindow(bucket)) total += ring[bucket]!;
        if (total > 0) byVersion.set(version, total);
      }
      let other = 0;
      for (let bucket = 0; bucket < WINDOW_SECONDS; bucket++) if (inWindow(bucket)) other += unversioned[bucket]!;
      return { byVersion, unversioned: other };
    },
  };
}
