/** One tracked key as read out of a table. */
interface TopKEntry {
  key: string;
  /** Requests counted for the key; an upper bound once the key displaced another (see `overestimate`). */
  count: number;
  /** How much of `count` may belong to keys this one displaced; 0 when the count is exact. */
  overestimate: number;
  /** Epoch milliseconds of the key's latest request. */
  lastSeenMs: number;
}

export interface TopK {
  readonly capacity: number;
  /** Keys tracked now (at most `capacity`). */
  readonly size: number;
  /** Keys that had to be displaced to make room since the table was created. */
  readonly displaced: number;
  /** Counts one occurrence of `key`; allocates nothing once the key is tracked or the table is full. */
  offer(key: string, nowMs: number): void;
  /** The tracked keys, by count descending (ties: the most recently seen first). */
  entries(): TopKEntry[];
}

/**
 * The Space-Saving algorithm (Metwally, Agrawal, El Abbadi, "Efficient Computation of Frequent and
 * Top-k Elements in Data Streams", 2005): at most `capacity` counters. An untracked key takes over the
 * counter with the smallest count and adds one to it, so counts never under-estimate, and every key
 * seen more than N / capacity times out of N is guaranteed to be in the table, however many other keys
 * arrive. While fewer than `capacity` distinct keys have been seen every count is exact.
 *
 * Counters live in preallocated parallel arrays ordered by a binary min-heap on (count, last seen),
 * so finding the counter to take over is O(1) and a count is O(log capacity) without allocating.
 */
export function createTopK(capacity: number): TopK {
  if (!Number.isInteger(capacity) || capacity < 1)
    throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
  const keys: string[] = new Array<string>(capacity).fill('');
  const counts = new Float64Array(capacity);
  const overestimates = new Float64Array(capacity);
  const lastSeen = new Float64Array(capacity);
  // heap[i] is a slot; positionOf[slot] is its index in heap.
  const heap = new Int32Array(capacity);
  const positionOf = new Int32Array(capacity);
  const slotOf = new Map<string, number>();
  let size = 0;
  let displaced = 0;

  // Smaller count first; among equal counts the one seen longest ago goes first.
  const before = (a: number, b: number): boolean =>
    counts[a]! < counts[b]! || (counts[a] === counts[b] && lastSeen[a]! < lastSeen[b]!);
  const place = (position: number, slot: number): void => {
    heap[position] = slot;
    positionOf[slot] = position;
  };
  const siftUp = (start: number): void => {
    const slot = heap[start]!;
    let position = start;
    while (position > 0) {
      const parent = (position - 1) >> 1;
      if (!before(slot, heap[parent]!)) break;
      place(position, heap[parent]!);
      position = parent;
    }
    place(position, slot);
  };
  const siftDown = (start: number): void => {
    const slot = heap[start]!;
    let position = start;
    for (;;) {
      const left = 2 * position + 1;
      if (left >= size) break;
      const right = left + 1;
      const child = right < size && before(heap[right]!, heap[left]!) ? right : left;
      if (!before(heap[child]!, slot)) break;
      place(position, heap[child]!);
      position = child;
    }
    place(position, slot);
  };

  return {
    capacity,
    get size() {
      return size;
    },
    get displaced() {
      return displaced;
    },
    offer(key, nowMs) {
      let slot = slotOf.get(key);
      if (slot !== undefined) {
        counts[slot]! += 1;
        lastSeen[slot] = nowMs;
        siftDown(positionOf[slot]!);
        return;
      }
      if (size < capacity) {
        slot = size;
        keys[slot] = key;
        counts[slot] = 1;
        overestimates[slot] = 0;
        lastSeen[slot] = nowMs;
        slotOf.set(key, slot);
        place(size, slot);
        size += 1;
        siftUp(size - 1);
        return;
      }
      slot = heap[0]!;
      slotOf.delete(keys[slot]!);
      displaced += 1;
      keys[slot] = key;
      overestimates[slot] = counts[slot]!;
      counts[slot]! += 1;
      lastSeen[slot] = nowMs;
      slotOf.set(key, slot);
      siftDown(0);
    },
    entries() {
      const out: TopKEntry[] = [];
      for (let slot = 0; slot < size; slot++) {
        out.push({
          key: keys[slot]!,
          count: counts[slot]!,
          overestimate: overestimates[slot]!,
          lastSeenMs: lastSeen[slot]!,
        });
      }
      return out.sort((a, b) => b.count - a.count || b.lastSeenMs - a.lastSeenMs);
    },
  };
}
