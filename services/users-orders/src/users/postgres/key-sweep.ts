import type { Logger } from 'pino';
import type { Clock } from '@version-router/platform/clock';
import type { PostgresUserStore } from './store.js';

export interface KeySweepOptions {
  store: Pick<PostgresUserStore, 'deleteExpiredKeys'>;
  clock: Clock;
  logger: Logger;
  /** Time between two sweeps of this replica. */
  intervalMs?: number;
  /** Keys one statement deletes at most: each is short, and skips rows a request holds. */
  batchSize?: number;
  /** Statements one sweep runs at most, so a backlog is worked off over several sweeps. */
  maxBatches?: number;
}

export interface KeySweep {
  /** Stops the timer and waits for a sweep under way. */
  stop(): Promise<void>;
}

/**
 * Deletes expired Idempotency-Keys in the background. Requests never wait for it: reads ignore expired rows
 * anyway, so the sweep only keeps the table small. Every replica runs one; batches skip the rows another
 * replica's sweep holds. A failed sweep (the database down) is logged and tried again at the next interval.
 */
export function startKeySweep({
  store,
  clock,
  logger,
  intervalMs = 5 * 60_000,
  batchSize = 1_000,
  maxBatches = 100,
}: KeySweepOptions): KeySweep {
  let running: Promise<number> | undefined;
  const sweep = async (): Promise<number> => {
    const now = new Date(clock()).toISOString();
    let deleted = 0;
    for (let batch = 0; batch < maxBatches; batch++) {
      const count = await store.deleteExpiredKeys(now, batchSize);
      deleted += count;
      if (count < batchSize) break;
    }
    return deleted;
  };
  const tick = (): void => {
    running ??= sweep()
      .then(
        (deleted) => {
          if (deleted > 0) logger.debug({ deleted }, 'expired idempotency keys deleted');
          return deleted;
        },
        (err: unknown) => {
          logger.warn(
            { reason: err instanceof Error ? err.message : String(err) },
            'deleting expired idempotency keys failed',
          );
          return 0;
        },
      )
      .finally(() => (running = undefined));
  };
  const timer = setInterval(tick, intervalMs).unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
