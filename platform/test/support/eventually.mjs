// The one way the tests, and the benchmarks that start processes, wait for something that happens in its own
// time. A plain module (types in eventually.d.mts) so that bench/*.mjs, run by node as they are, import it too.
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Asks `probe` every `intervalMs` (100 by default) until it answers a value other than `undefined` or `false`,
 * and answers that value. A probe asked after `timeoutMs` is the last: then the wait fails, naming `what` it
 * waited for and, from `lastSeen`, the state it saw last. A probe that throws fails the wait at once, naming
 * `what` too; a probe that expects errors on the way (a process not listening yet) catches them itself.
 */
export async function eventually(what, probe, { timeoutMs, intervalMs = 100, lastSeen }) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    let value;
    try {
      value = await probe();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(`while waiting for ${what}: ${message}`, { cause: error });
    }
    if (value !== undefined && value !== false) return value;
    const left = deadline - performance.now();
    if (left <= 0) {
      const seen = lastSeen === undefined ? '' : `\nlast seen: ${await lastSeen()}`;
      throw new Error(`not within ${timeoutMs} ms: ${what}${seen}`);
    }
    await sleep(Math.min(intervalMs, left));
  }
}
