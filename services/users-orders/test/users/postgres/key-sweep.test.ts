import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { pino } from 'pino';
import { capturedLog } from '../../../../../platform/test/support/captured-log.js';
import { eventually } from '../../../../../platform/test/support/eventually.mjs';
import { startKeySweep } from '../../../src/users/postgres/key-sweep.js';

/** A store whose expired keys are a number; each call deletes up to `limit` of them, or fails while `failing`. */
function fakeStore(expired: number) {
  const calls: { now: string; limit: number }[] = [];
  const store = {
    expired,
    failing: false,
    calls,
    deleteExpiredKeys(now: string, limit: number): Promise<number> {
      calls.push({ now, limit });
      if (store.failing) return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
      const deleted = Math.min(limit, store.expired);
      store.expired -= deleted;
      return Promise.resolve(deleted);
    },
  };
  return store;
}

/** How long, and how often, a test here waits for the sweep's next step (`eventually`). */
const NEXT_STEP = { timeoutMs: 5_000, intervalMs: 5 };

describe('the sweep of expired Idempotency-Keys', () => {
  it('deletes in batches of at most batchSize, as of the clock, until a batch comes back short', async () => {
    const store = fakeStore(25);
    const { destination, lines } = capturedLog();
    const logger = pino({ level: 'debug' }, destination);
    const sweep = startKeySweep({
      store,
      clock: () => Date.parse('2026-11-23T10:00:00.000Z'),
      logger,
      intervalMs: 20,
      batchSize: 10,
    });
    onTestFinished(() => sweep.stop());
    await eventually('three calls to the store', () => store.calls.length >= 3, NEXT_STEP);
    await sweep.stop();
    expect(store.calls.slice(0, 3)).toEqual(Array(3).fill({ now: '2026-11-23T10:00:00.000Z', limit: 10 }));
    expect(store.expired).toBe(0);
    expect(lines.find((line) => line.msg === 'expired idempotency keys deleted')).toMatchObject({ deleted: 25 });
  });

  it('runs at most maxBatches statements per sweep, leaving the rest to the next one', async () => {
    const store = fakeStore(1_000);
    const { destination, lines } = capturedLog();
    const logger = pino({ level: 'debug' }, destination);
    const sweep = startKeySweep({ store, clock: Date.now, logger, intervalMs: 20, batchSize: 10, maxBatches: 3 });
    onTestFinished(() => sweep.stop());
    const sweepsLogged = () => lines.filter((line) => line.msg === 'expired idempotency keys deleted').length;
    await eventually('two sweeps logged', () => sweepsLogged() >= 2, NEXT_STEP);
    await sweep.stop();
    expect(lines.filter((line) => line.msg === 'expired idempotency keys deleted').map((line) => line.deleted)).toEqual(
      Array(store.calls.length / 3).fill(30),
    );
  });

  it('logs a failed sweep and tries again at the next interval; stop() ends the timer', async () => {
    const store = fakeStore(5);
    store.failing = true;
    const { destination, lines } = capturedLog();
    const logger = pino({ level: 'debug' }, destination);
    const sweep = startKeySweep({ store, clock: Date.now, logger, intervalMs: 20 });
    onTestFinished(() => sweep.stop());
    await eventually('a first call to the store', () => store.calls.length >= 1, NEXT_STEP);
    store.failing = false;
    await eventually('every expired key deleted', () => store.expired === 0, NEXT_STEP);
    await sweep.stop();
    const calls = store.calls.length;
    expect(lines.find((line) => line.msg === 'deleting expired idempotency keys failed')).toMatchObject({
      level: 40,
      reason: 'connect ECONNREFUSED 127.0.0.1:5432',
    });
    await sleep(100);
    expect(store.calls.length).toBe(calls);
  });
});
