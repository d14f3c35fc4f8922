import { describe, expect, it } from 'vitest';
import { digestOf, generateKey, keyIdOf, keyMatches } from '../../src/consumers/keys.js';

describe('API keys', () => {
  it('are vr_ + a 12-character key id + _ + 256 random bits in base64url, and only their digest is kept', () => {
    const { keyId, key, digest } = generateKey();
    expect(key).toMatch(/^vr_[A-Za-z0-9_-]{12}_[A-Za-z0-9_-]{43}$/);
    expect(keyIdOf(key)).toBe(keyId);
    expect(digest).toEqual(digestOf(key));
    expect(digest).toHaveLength(32);
    expect(keyMatches(key, digest)).toBe(true);
    expect(keyMatches(`${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`, digest)).toBe(false);
  });

  it('find the key id by position, though base64url has _ and - too', () => {
    expect(keyIdOf(`vr_a_b-c_d-e_f-_${'x'.repeat(43)}`)).toBe('a_b-c_d-e_f-');
  });

  it.each([
    ['another prefix', `sk_${'a'.repeat(12)}_${'x'.repeat(43)}`],
    ['too short', `vr_${'a'.repeat(12)}_${'x'.repeat(42)}`],
    ['too long', `vr_${'a'.repeat(12)}_${'x'.repeat(44)}`],
    ['no separator after the key id', `vr_${'a'.repeat(13)}${'x'.repeat(43)}`],
    ['a character outside base64url', `vr_${'a'.repeat(12)}_${'x'.repeat(42)}=`],
    ['empty', ''],
  ])('are refused when %s', (_what, key) => {
    expect(keyIdOf(key)).toBeUndefined();
  });
});
