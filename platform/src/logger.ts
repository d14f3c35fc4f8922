import { pino, type Logger, type Level } from 'pino';

/**
 * JSON lines to stdout at LOG_LEVEL; the level, not NODE_ENV, decides verbosity.
 *
 * Written synchronously, one write per line, so lines leave the process in order and none is lost on a
 * crash. pino's default destination writes through libuv's thread pool: its exit flush can write the
 * last lines ahead of a write still in flight ("stopped" was not always the last line), and waking a
 * worker thread per write multiplied the context switches per request (bench/README.md).
 */
export function createLogger(level: Level | 'silent', name: string): Logger {
  return pino({ level, name, base: { service: name } }, pino.destination({ dest: 1, sync: true }));
}
