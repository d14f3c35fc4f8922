import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from '../../src/pagination/cursor.js';

describe('cursor encoding', () => {
  it('round-trips every id the service issues', () => {
    for (const seq of [1, 9, 10, 99, 12_345, Number.MAX_SAFE_INTEGER])
      expect(decodeCursor(encodeCursor(`user-${seq}`))).toBe(seq);
  });
});
