import { pino, type Logger, type Level } from 'pino';

/**
 * JSON lines to stdout at LOG_LEVEL; the level, not NODE_ENV, decides verbosity.
 *
 * Written synchronously, one write per line. pino's default destination writes through libuv's thread
 * pool: every line of an idle-then-busy server wakes a worker thread, which doubled the context switches
 * per request and cost throughput (bench/README.md), and its exit flush can write the last lines before
 * a write still in flight, so "stopped" was not always the last line.
 */
export function createLogger(level: Level | 'silent', name: string): Logger {
  return pino({ level, name, base: { service: name } }, pino.destination({ dest: 1, sync: true }));
}
