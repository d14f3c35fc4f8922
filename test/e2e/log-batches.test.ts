import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { repoRoot } from '../../scripts/paths.mjs';

/**
 * The JSON log's batches, in a real process with stdout a pipe, as in a container (the built platform logger,
 * `npm run build` first). The child blocks its event loop between lines, so no timer can write for it there:
 * a line on the pipe before the block ends was written by the line that ended the batch, not by the timer.
 * Its stderr (the uncaught exception's report) is not read.
 */
interface Arrival {
  msg: string;
  /** When the child logged it (pino's `time`, ms). */
  loggedAt: number;
  /** When it came out of the pipe here (ms, the same clock). */
  arrivedAt: number;
}

/** Runs `script` (an ES module body with `log`, a logger at info, and `block(ms)` in scope) to its exit. */
function linesOf(script: string, { until }: { until?: string } = {}): Promise<Arrival[]> {
  const logger = join(repoRoot, 'platform/dist/logger.js');
  const source = `import { createLogger } from ${JSON.stringify(logger)};
const log = createLogger('info', 'batches', { pretty: false });
const block = (ms) => { const end = Date.now() + ms; while (Date.now() < end); };
${script}`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', source], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const arrivals: Arrival[] = [];
    let pending = '';
    child.stdout.on('data', (chunk: Buffer) => {
      const arrivedAt = Date.now();
      const lines = (pending + chunk.toString()).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const { msg, time } = JSON.parse(line) as { msg: string; time: number };
        arrivals.push({ msg, loggedAt: time, arrivedAt });
        if (msg === until) child.kill('SIGKILL');
      }
    });
    child.once('error', reject);
    child.once('close', () => resolve(arrivals));
  });
}

it('writes info lines in a batch that a warning ends, and the lines after it when the process exits', async () => {
  const arrivals = await linesOf(`
log.info('first');
log.info('second');
block(300);
log.warn('warning');
block(1_000);
log.info('last');
process.exit(0);
`);
  expect(arrivals.map(({ msg }) => msg)).toEqual(['first', 'second', 'warning', 'last']);
  const [first, second, warning, last] = arrivals as [Arrival, Arrival, Arrival, Arrival];
  // Not one write per line: the info lines waited for the warning, which left at once.
  expect(first.arrivedAt).toBeGreaterThanOrEqual(warning.loggedAt);
  expect(second.arrivedAt).toBeGreaterThanOrEqual(warning.loggedAt);
  expect(warning.arrivedAt).toBeLessThan(last.loggedAt);
});

it('writes a lone info line within a fraction of a second, without a warning or an exit', async () => {
  const arrivals = await linesOf(`log.info('alone'); setTimeout(() => {}, 10_000);`, { until: 'alone' });
  const [alone] = arrivals as [Arrival];
  expect(alone.msg).toBe('alone');
  // Written by the 100 ms flush; the bound leaves room for a busy test machine.
  expect(alone.arrivedAt - alone.loggedAt).toBeLessThan(1_000);
});

it('writes the lines logged before an uncaught exception ends the process', async () => {
  const arrivals = await linesOf(`
log.info('before the crash');
log.info('just before the crash');
setTimeout(() => { throw new Error('crash'); }, 0);
`);
  expect(arrivals.map(({ msg }) => msg)).toEqual(['before the crash', 'just before the crash']);
});

it('keeps the lines of two loggers of one process in the order they were logged', async () => {
  const arrivals = await linesOf(`
const other = createLogger('info', 'other', { pretty: false });
log.info('one');
other.info('two');
log.info('three');
process.exit(0);
`);
  expect(arrivals.map(({ msg }) => msg)).toEqual(['one', 'two', 'three']);
});
