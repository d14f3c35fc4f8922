import type { User } from '../schemas.js';
import { KEY_LIFETIME_MS, type KeyedCreate, type KeyedOutcome } from './key.js';

interface RememberedCreate {
  fingerprint: string;
  /** The user as the first answer carried it; records are never mutated, so a later update does not change it. */
  user: User;
  expiresAt: number;
}

/** Keys one in-memory store remembers at most; past it the oldest is forgotten first. */
const MEMORY_KEYS_DEFAULT = 10_000;

/**
 * The Idempotency-Keys of the in-memory store: at most `maxKeys`, oldest dropped first, each for 24 h. Kept in
 * the order they were first used, which is the order they expire in, so expired keys are dropped from the front
 * as new ones come. A keyed create runs within one turn of the event loop, so no second request can find the
 * first one still running here.
 */
export class MemoryIdempotencyKeys {
  private readonly remembered = new Map<string, RememberedCreate>();

  constructor(private readonly maxKeys = MEMORY_KEYS_DEFAULT) {
    if (!Number.isSafeInteger(maxKeys) || maxKeys < 1)
      throw new RangeError(`maxKeys must be a positive integer, got ${maxKeys}`);
  }

  /**
   * Runs `create` unless the key was used within its lifetime, in which case the first answer (or a refusal) is
   * returned.
   */
  createOnce({ key, fingerprint }: KeyedCreate, nowMs: number, create: () => User): KeyedOutcome {
    const earlier = this.remembered.get(key);
    if (earlier !== undefined && earlier.expiresAt > nowMs)
      return earlier.fingerprint === fingerprint ? { kind: 'replayed', user: earlier.user } : { kind: 'reused' };
    this.remembered.delete(key);
    const user = create();
    this.remembered.set(key, { fingerprint, user, expiresAt: nowMs + KEY_LIFETIME_MS });
    for (const [oldest, { expiresAt }] of this.remembered) {
      if (this.remembered.size <= this.maxKeys && expiresAt > nowMs) break;
      this.remembered.delete(oldest);
    }
    return { kind: 'created', user };
  }

  get size(): number {
    return this.remembered.size;
  }
}
