import { pino, type Logger, type Level } from 'pino';

/** JSON lines to stdout at LOG_LEVEL; the level, not NODE_ENV, decides verbosity. */
export function createLogger(level: Level | 'silent', name: string): Logger {
  return pino({ level, name, base: { service: name } });
}
