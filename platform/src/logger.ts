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
 * JSON lines leave in batches (see batchedStdout), readable ones one write each; both are written
 * synchronously, on the main thread, so lines leave in order. pino's default destination writes through
 * libuv's thread pool: its exit flush can write the last lines ahead of a write still in flight
 * ("stopped" was not always the last line), and waking a worker thread per write multiplied the context
 * switches per request (bench/README.md).
 */
export function createLogger(
  level: Level | 'silent',
  name: string,
  { pretty: readable, destination: lines }: LoggerOptions = { pretty: false },
): Logger {
  const batched = readable || lines !== undefined ? undefined : batchedStdout();
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
    : (lines ?? batched);
  return pino(
    {
      level,
      name,
      base: { service: name },
      // Credentials never reach the log, whoever logs a request or its headers: a consumer's API key, an
      // admin token (docs/consumers.md#consumers-and-api-keys).
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
          // A warning or an error leaves at once, with the lines before it: what an operator is paged for is
          // never among the lines a kill can take.
          // flush, not flushSync: both write at once in sync mode, and flushSync also fsyncs, which on a file is a
          // disk wait per line in an outage that logs an error per request.
          if (batched !== undefined && levelValue >= pino.levels.values.warn!) batched.flush();
        },
      },
    },
    destination,
  );
}

/**
 * Where a credential would sit in a logged object: a request's headers, under the keys a request or its
 * headers are logged by. Named in full, not as `*.headers…`: a leading wildcard makes pino copy and walk
 * every logged object (about 6 µs a line on Node 24; bench/README.md "Consumer keys"), while named keys
 * cost nothing on a line that has none of them.
 */
const CREDENTIAL_PATHS = [
  'req.headers["api-key"]',
  'req.headers.authorization',
  'request.headers["api-key"]',
  'request.headers.authorization',
  'headers["api-key"]',
  'headers.authorization',
];

/** The most JSON lines' characters held before they are written: a request's line is about 250. */
const LOG_BATCH_CHARS = 8 * 1024;
/** The longest an info line waits for its write. */
const LOG_FLUSH_INTERVAL_MS = 100;

/**
 * One batched stdout per process, whichever loggers write to it: two buffers on one descriptor would let one
 * logger's lines overtake the other's, and each would add a timer and an exit hook.
 */
let sharedStdout: LineBatches | undefined;

/**
 * JSON lines gathered in an array and handed to sonic-boom (pino's synchronous destination) as one string per
 * batch, which it writes at once, retrying a full pipe or a short write as it does for any write. Not sonic-boom's
 * own batching (`minLength`): it appends each line to the string it holds and measures that string's UTF-8
 * length on every write, so a batch of n lines cost a scan of n²/2 lines (bench/README.md, "Profile and levers,
 * 2026-11-28 (second pass)"); here each batch is joined and measured once.
 */
class LineBatches implements pino.DestinationStream {
  private lines: string[] = [];
  private held = 0;

  constructor(private readonly out: ReturnType<typeof pino.destination>) {}

  write(line: string): void {
    this.lines.push(line);
    this.held += line.length;
    if (this.held >= LOG_BATCH_CHARS) this.flush();
  }

  /** Writes what is held now; `done` as pino's logger.flush(done) passes it, called once it is written. */
  flush(done?: (error?: Error) => void): void {
    const { lines } = this;
    if (lines.length > 0) {
      this.lines = [];
      this.held = 0;
      this.out.write(lines.length === 1 ? (lines[0] as string) : lines.join(''));
    }
    done?.();
  }

  /** Writes what is held and waits for the descriptor (the exit hook). */
  flushSync(): void {
    this.flush();
    this.out.flushSync();
  }
}

/**
 * stdout for JSON lines, written in batches: once LOG_BATCH_CHARS have gathered, every LOG_FLUSH_INTERVAL_MS,
 * after any line at warn or above (the logMethod hook) and when the process exits, a crash included. One
 * write(2) per line cost every request measurable CPU (bench/README.md#tuning-history-before--after); a busy
 * moment's batch holds tens of lines. The cost: a process killed outright (SIGKILL, the kernel's out-of-memory
 * killer) loses the info lines of its last 100 ms. Still synchronous: a stdout that stops draining stalls the
 * process rather than growing its memory.
 */
function batchedStdout(): LineBatches {
  if (sharedStdout === undefined) {
    const stdout = new LineBatches(pino.destination({ dest: 1, sync: true }));
    // Unreferenced, as sonic-boom's own periodic flush: a timer alone keeps no process alive.
    setInterval(() => stdout.flush(), LOG_FLUSH_INTERVAL_MS).unref();
    process.on('exit', () => stdout.flushSync());
    sharedStdout = stdout;
  }
  return sharedStdout;
}

/** Node's error on a request whose client closed the connection before the request was complete. */
function isClientAbort(value: unknown): boolean {
  return (
    value instanceof Error && (value as NodeJS.ErrnoException).code === 'ECONNRESET' && value.message === 'aborted'
  );
}
