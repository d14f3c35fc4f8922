import { pino, type Logger, type Level } from 'pino';
import pretty from 'pino-pretty';

export interface LoggerOptions {
  /**
   * Readable lines for a person at a terminal (`npm start`): `gateway 12:00:00.123 INFO: …`, one line
   * each, prefixed with the process name because two processes share the terminal. JSON otherwise
   * (containers, CI, a log collector). main.ts passes whether stdout is a TTY.
   */
  pretty: boolean;
  /** Where JSON lines go instead of stdout (tests read them). */
  destination?: pino.DestinationStream;
}

/**
 * Lines to stdout at LOG_LEVEL; the level, not NODE_ENV, decides verbosity.
 *
 * Written synchronously, one write per line, in both forms, so lines leave the process in order and
 * none is lost on a crash. pino's default destination writes through libuv's thread pool: its exit
 * flush can write the last lines ahead of a write still in flight ("stopped" was not always the last
 * line), and waking a worker thread per write multiplied the context switches per request
 * (bench/README.md).
 */
export function createLogger(level: Level | 'silent', name: string, { pretty: readable, destination: lines }: LoggerOptions = { pretty: false }): Logger {
  const destination = readable
    ? pretty({
        destination: 1,
        sync: true,
        singleLine: true,
        translateTime: 'HH:MM:ss.l',
        ignore: 'pid,hostname,service,name',
        // The time arrives formatted by translateTime, as text.
        customPrettifiers: { time: (time) => `${name} ${time as string}` },
      })
    : (lines ?? pino.destination({ dest: 1, sync: true }));
  return pino(
    {
      level,
      name,
      base: { service: name },
      // Credentials never reach the log, whoever logs a request or its headers: a consumer's API key, an
      // admin token (docs/behaviour.md#consumers-and-api-keys).
      redact: { paths: CREDENTIAL_PATHS, censor: '[redacted]' },
      hooks: {
        // Libraries (the proxy) warn when a request fails because its client hung up; that is the client's
        // doing, and at warn level a slow-client attack would flood the log. One info line keeps the trace.
        logMethod(args, method, levelValue) {
          if (levelValue > pino.levels.values.info! && isClientAbort(args[0])) {
            this.info(...(args as [Error, string]));
            return;
          }
          method.apply(this, args);
        },
      },
    },
    destination,
  );
}

/**
 * Where a credential would sit in a logged object: a request's headers, under the keys a request or its
 * headers are logged by. Named in full, not as `*.headers…`: a leading wildcard makes pino copy and walk
 * every logged object (about 6 µs a line on Node 24, two lines per request on a deprecated version;
 * bench/README.md "Consumer keys"), while named keys cost nothing on a line that has none of them.
 */
const CREDENTIAL_PATHS = [
  'req.headers["api-key"]',
  'req.headers.authorization',
  'request.headers["api-key"]',
  'request.headers.authorization',
  'headers["api-key"]',
  'headers.authorization',
];

/** Node's error on a request whose client closed the connection before the request was complete. */
function isClientAbort(value: unknown): boolean {
  return value instanceof Error && (value as NodeJS.ErrnoException).code === 'ECONNRESET' && value.message === 'aborted';
}
