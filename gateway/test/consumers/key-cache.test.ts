import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { generateKey } from '../../src/consumers/keys.js';
import { loadKeyCache, type KeyCache } from '../../src/consumers/key-cache.js';
import { createMemoryConsumerStore, type MemoryConsumerStore } from '../support/memory-store.js';

/** A store with one consumer and two keys of it, and a cache loaded from it that polls only when told to. */
async function twoKeys(): Promise<{
  store: MemoryConsumerStore;
  keys: KeyCache;
  first: ReturnType<typeof generateKey>;
  second: ReturnType<typeof generateKey>;
}> {
  const store = createMemoryConsumerStore();
  const acme = { id: 'acme', name: 'Acme', contact_email: null, webhook_url: null, webhook_secret: null };
  await store.createConsumer({ ...acme, pinned_version: null }, 0);
  const first = generateKey();
  const second = generateKey();
  await store.addKey('acme', first, 0);
  await store.addKey('acme', second, 0);
  const keys = await loadKeyCache({
    store,
    logger: pino({ level: 'silent' }),
    learnFirstUses: () => undefined,
    pollIntervalMs: 3_600_000,
  });
  return { store, keys, first, second };
}

describe('the key cache, on one keep-alive connection', () => {
  it(
    'refuses a key the connection proved before once it is revoked here, or on another replica after the next ' +
      'poll',
    async () => {
      const { store, keys, first, second } = await twoKeys();
      const connection = {};
      expect(keys.entryOf(first.key, connection)?.consumerId).toBe('acme');
      expect(keys.entryOf(first.key, connection)?.consumerId).toBe('acme');
      keys.revoke(first.keyId);
      expect(keys.entryOf(first.key, connection)?.consumerId).toBeUndefined();

      expect(keys.entryOf(second.key, connection)?.consumerId).toBe('acme');
      await store.revokeKey('acme', second.keyId, 1);
      expect(keys.entryOf(second.key, connection)?.consumerId).toBe('acme');
      await keys.refresh();
      expect(keys.entryOf(second.key, connection)?.consumerId).toBeUndefined();
      keys.stop();
    },
  );

  it('keeps accepting the key when the registry replaces its entry with the same key, as a poll does', async () => {
    const { keys, first } = await twoKeys();
    const connection = {};
    expect(keys.entryOf(first.key, connection)?.consumerId).toBe('acme');
    keys.remember({ keyId: first.keyId, consumerId: 'acme', digest: first.digest, revoked: false, pin: null });
    expect(keys.entryOf(first.key, connection)?.consumerId).toBe('acme');
    keys.remember({ keyId: first.keyId, consumerId: 'acme', digest: Buffer.alloc(32), revoked: false, pin: null });
    expect(keys.entryOf(first.key, connection)?.consumerId).toBeUndefined();
    keys.stop();
  });

  it('checks another key on the same connection on its own: a wrong one after a right one is refused', async () => {
    const { keys, first } = await twoKeys();
    const connection = {};
    expect(keys.entryOf(first.key, connection)?.consumerId).toBe('acme');
    const forged = `${first.key.slice(0, -1)}${first.key.endsWith('A') ? 'B' : 'A'}`;
    expect(keys.entryOf(forged, connection)?.consumerId).toBeUndefined();
    expect(keys.entryOf(forged, {})?.consumerId).toBeUndefined();
    expect(keys.entryOf(first.key, connection)?.consumerId).toBe('acme');
    keys.stop();
  });
});
