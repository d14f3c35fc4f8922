import pg from 'pg';
import type { Logger } from 'pino';

/**
 * How long a process waits on PostgreSQL. A statement waits at most 5 s for a connection, then at most 3 s
 * (the server cancels it) or 3.5 s (the client gives up on a server that stopped answering): 8.5 s in all,
 * below the gateway's 9 s backend timeout and the 10 s write deadline.
 */
const timeouts = {
  connectMs: 5_000,
  statementMs: 3_000,
  readMs: 3_500,
  /** /readyz and db_up: a probe that takes longer counts as unreachable. */
  probeMs: 1_000,
  /** A statement that succeeded this recently answers a probe without asking the database again. */
  recentSuccessMs: 1_000,
} as const;

/**
 * SQLSTATE classes that mean the database cannot serve right now rather than that the statement is wrong:
 * 08 connection exception, 53 insufficient resources (too many connections), 57 operator intervention
 * (shutting down, starting up, statement timeout).
 */
const UNAVAILABLE_CLASSES = new Set(['08', '53', '57']);

/**
 * The database could not be reached in time (refused, unreachable, timed out, shutting down). The message
 * is the driver's, with the URL's password masked.
 */
export class StorageUnavailableError extends Error {
  override name = 'StorageUnavailableError';
}

/** What a process's metrics read of its pool at scrape time, and the probe they may run. */
export interface DatabaseMetricSources {
  pool: { totalCount: number; idleCount: number; waitingCount: number };
  isReachable: () => Promise<boolean>;
}

/** Per-statement timing, for a process that exports it (the backend's db_query_duration_seconds). */
export interface StatementTimer {
  queryDuration: { startTimer(labels: { operation: string }): () => unknown };
}

export interface DatabaseOptions {
  url: string;
  poolMax: number;
  logger: Logger;
  /** Shown by PostgreSQL in pg_stat_activity: which process holds a connection. */
  applicationName: string;
  /**
   * Prefix of the prepared statement each operation is named as (`<prefix>_<operation>`), so each connection
   * parses and plans it once. Unset: unnamed statements, for a server whose sessions are shared between
   * connections (PGlite behind a socket), where a name prepared by one connection exists for the next.
   */
  statementPrefix?: string;
  /** Creates the process's database metrics from the pool; called once. */
  instrument?: (sources: DatabaseMetricSources) => StatementTimer;
}

/** One process's connection pool, with the failure classification every statement shares. */
export interface Database {
  /** One statement on a pooled connection; `operation` names it (prepared statement, duration label). */
  query<Row extends pg.QueryResultRow>(
    operation: string,
    text: string,
    values: unknown[],
  ): Promise<pg.QueryResult<Row>>;
  /**
   * Runs `work` on one pooled connection, with the same failure classification, read timeout and timing as a
   * query: for a transaction (which must stay on one connection) or a COPY stream.
   */
  withClient<Result>(operation: string, work: (client: pg.PoolClient) => Promise<Result>): Promise<Result>;
  /** PostgreSQL answers (within a second). */
  isReachable(): Promise<boolean>;
  /** Error text with the URL's password masked, should a message ever quote it. */
  redact(text: string): string;
  close(): Promise<void>;
}

/** Client options shared by the pool and the migration runner (which sets its own statement and read timeouts). */
export function clientConfig(url: string, applicationName: string): pg.ClientConfig {
  return {
    connectionString: url,
    connectionTimeoutMillis: timeouts.connectMs,
    statement_timeout: timeouts.statementMs,
    application_name: applicationName,
    keepAlive: true,
  };
}

export const readTimeoutMs = timeouts.readMs;

class ReadTimeoutError extends Error {
  override name = 'ReadTimeoutError';
}

/** The password of a postgres:// URL ('' when it has none or does not parse), to be masked in every message. */
export function passwordRedactor(url: string): (text: string) => string {
  let password = '';
  try {
    password = decodeURIComponent(new URL(url).password);
  } catch {
    // Not a URL: nothing to mask.
  }
  return (text) => (password === '' ? text : text.split(password).join('***'));
}

export function openDatabase({
  url,
  poolMax,
  logger,
  applicationName,
  statementPrefix,
  instrument,
}: DatabaseOptions): Database {
  const pool = new pg.Pool({ ...clientConfig(url, applicationName), max: poolMax });
  const redact = passwordRedactor(url);
  // An idle connection whose server went away emits 'error' on the pool; unhandled, it would end the process.
  pool.on('error', (err) => logger.warn({ reason: redact(err.message) }, 'idle PostgreSQL connection failed'));

  let closed = false;
  let lastSuccessAt = 0;
  let probe: Promise<boolean> | undefined;

  const unavailable = (err: unknown): StorageUnavailableError =>
    new StorageUnavailableError(redact(err instanceof Error ? err.message : String(err)));

  const metrics = instrument?.({ pool, isReachable: () => database.isReachable() });

  /**
   * Runs one statement's `work` on a pooled connection: the failure classification, the read timeout and the
   * duration metric every statement shares. The read timeout is ours rather than pg's `query_timeout`, which
   * a COPY stream never clears: past it, the connection is closed and the statement counts as unavailable.
   */
  async function withClient<Result>(
    operation: string,
    work: (client: pg.PoolClient) => Promise<Result>,
  ): Promise<Result> {
    const stopTimer = metrics?.queryDuration.startTimer({ operation });
    try {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        throw unavailable(err);
      }
      // A checked-out client has no pool listener: a server that goes away between statements would emit
      // an 'error' nobody handles, which ends the process. The statement's own failure is handled below.
      const onConnectionError = (err: Error): void =>
        logger.warn({ reason: redact(err.message) }, 'PostgreSQL connection failed');
      client.on('error', onConnectionError);
      let readTimer: NodeJS.Timeout | undefined;
      const readTimeout = new Promise<never>((_resolve, reject) => {
        readTimer = setTimeout(
          () => reject(new ReadTimeoutError(`no answer from PostgreSQL within ${timeouts.readMs} ms`)),
          timeouts.readMs,
        );
      });
      try {
        const result = await Promise.race([work(client), readTimeout]);
        client.off('error', onConnectionError);
        client.release();
        lastSuccessAt = Date.now();
        return result;
      } catch (err) {
        client.off('error', onConnectionError);
        const databaseError = err instanceof pg.DatabaseError;
        // Anything but an answer from the server (a reset, a read timeout) leaves the connection unusable.
        client.release(databaseError ? undefined : (err as Error));
        if (databaseError && !UNAVAILABLE_CLASSES.has(err.code?.slice(0, 2) ?? '')) {
          err.message = redact(err.message);
          throw err;
        }
        throw unavailable(err);
      } finally {
        clearTimeout(readTimer);
      }
    } finally {
      stopTimer?.();
    }
  }

  const database: Database = {
    query<Row extends pg.QueryResultRow>(
      operation: string,
      text: string,
      values: unknown[],
    ): Promise<pg.QueryResult<Row>> {
      // Named, so each connection parses and plans the statement once, not on every query.
      const config =
        statementPrefix === undefined ? { text, values } : { name: `${statementPrefix}_${operation}`, text, values };
      return withClient(operation, (client) => client.query<Row>(config));
    },

    withClient,

    isReachable() {
      if (closed) return Promise.resolve(false);
      if (Date.now() - lastSuccessAt < timeouts.recentSuccessMs) return Promise.resolve(true);
      probe ??= Promise.race([
        database.query('probe', 'SELECT 1', []).then(
          () => true,
          () => false,
        ),
        new Promise<boolean>((resolve) => setTimeout(resolve, timeouts.probeMs, false).unref()),
      ]).finally(() => (probe = undefined));
      return probe;
    },

    redact,

    async close() {
      closed = true;
      await pool.end();
    },
  };
  return database;
}
