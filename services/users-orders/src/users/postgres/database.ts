import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { createDatabaseMetrics } from '../../metrics.js';
import { StorageUnavailableError } from '../store.js';

/**
 * How long the backend waits on PostgreSQL. A request waits at most 5 s for a connection, then its
 * statement at most 3 s (the server cancels it) or 3.5 s (the client gives up on a server that stopped
 * answering): 8.5 s in all, below the gateway's 9 s backend timeout and the 10 s write deadline.
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

/** Bytes a COPY stream buffers before handing them over: one chunk for a listing batch of about 150 KB. */
const COPY_CHUNK_BYTES = 1 << 20;

export interface DatabaseOptions {
  url: string;
  poolMax: number;
  logger: Logger;
  /** The backend's registry: the pool and statement metrics go there. */
  registry: Registry;
}

/** One statement; `statement` names it as a prepared statement, so one name always goes with one text. */
export type Statement = <Row extends pg.QueryResultRow>(statement: string, text: string, values: unknown[]) => Promise<pg.QueryResult<Row>>;

/** One replica's connection pool, with the failure classification and metrics every statement shares. */
export interface Database {
  /** One statement on a pooled connection; `operation` names its prepared statement (one text per operation) and labels its duration. */
  query<Row extends pg.QueryResultRow>(operation: string, text: string, values: unknown[]): Promise<pg.QueryResult<Row>>;
  /**
   * Statements in one transaction on one pooled connection, timed together as `operation`: committed when
   * `work` resolves, rolled back when it throws. A connection lost on the way commits nothing, unless it was
   * lost during the COMMIT itself, after which the outcome is unknown (StorageUnavailableError either way).
   */
  transaction<Result>(operation: string, work: (statement: Statement) => Promise<Result>): Promise<Result>;
  /**
   * The bytes a `COPY (…) TO STDOUT` statement writes, read on a pooled connection as they arrive: no string
   * or row object is made of them (COPY takes no parameters: `text` must be complete).
   */
  copyOut(operation: string, text: string): Promise<Buffer>;
  /** PostgreSQL answers (within a second): what /readyz and db_up report. */
  isReachable(): Promise<boolean>;
  /** Error text with the URL's password masked, should a message ever quote it. */
  redact(text: string): string;
  close(): Promise<void>;
}

/** Client options shared by the pool and the migration runner (which gives up on a silent server after `readTimeoutMs`). */
export function clientConfig(url: string): pg.ClientConfig {
  return {
    connectionString: url,
    connectionTimeoutMillis: timeouts.connectMs,
    statement_timeout: timeouts.statementMs,
    application_name: 'users-orders',
    keepAlive: true,
  };
}

export const readTimeoutMs = timeouts.readMs;

class ReadTimeoutError extends Error {
  override name = 'ReadTimeoutError';
}

export function openDatabase({ url, poolMax, logger, registry }: DatabaseOptions): Database {
  const pool = new pg.Pool({ ...clientConfig(url), max: poolMax });
  const password = passwordOf(url);
  const redact = (text: string): string => (password === '' ? text : text.split(password).join('***'));
  // An idle connection whose server went away emits 'error' on the pool; unhandled, it would end the process.
  pool.on('error', (err) => logger.warn({ reason: redact(err.message) }, 'idle PostgreSQL connection failed'));

  let closed = false;
  let lastSuccessAt = 0;
  let probe: Promise<boolean> | undefined;

  const unavailable = (err: unknown): StorageUnavailableError => new StorageUnavailableError(redact(err instanceof Error ? err.message : String(err)));

  const metrics = createDatabaseMetrics(registry, { pool, isReachable: () => database.isReachable() });

  /**
   * Runs one statement's `work` on a pooled connection: the failure classification, the read timeout and the
   * duration metric every statement shares. The read timeout is ours rather than pg's `query_timeout`, which
   * a COPY stream never clears: past it, the connection is closed and the statement counts as unavailable.
   */
  async function onClient<Result>(operation: string, work: (client: pg.PoolClient) => Promise<Result>): Promise<Result> {
    const stopTimer = metrics.queryDuration.startTimer({ operation });
    try {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        throw unavailable(err);
      }
      // A checked-out client has no pool listener: a server that goes away between statements would emit
      // an 'error' nobody handles, which ends the process. The statement's own failure is handled below.
      const onConnectionError = (err: Error): void => logger.warn({ reason: redact(err.message) }, 'PostgreSQL connection failed');
      client.on('error', onConnectionError);
      let readTimer: NodeJS.Timeout | undefined;
      const readTimeout = new Promise<never>((_resolve, reject) => {
        readTimer = setTimeout(() => reject(new ReadTimeoutError(`no answer from PostgreSQL within ${timeouts.readMs} ms`)), timeouts.readMs);
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
      stopTimer();
    }
  }

  // Named, so each connection parses and plans the statement once (about 40 % less time per query here).
  const prepared =
    (client: pg.PoolClient): Statement =>
    <Row extends pg.QueryResultRow>(statement: string, text: string, values: unknown[]) =>
      client.query<Row>({ name: `users_${statement}`, text, values });

  const database: Database = {
    query<Row extends pg.QueryResultRow>(operation: string, text: string, values: unknown[]): Promise<pg.QueryResult<Row>> {
      return onClient(operation, (client) => prepared(client)<Row>(operation, text, values));
    },

    transaction<Result>(operation: string, work: (statement: Statement) => Promise<Result>): Promise<Result> {
      return onClient(operation, async (client) => {
        await client.query('BEGIN');
        let result: Result;
        try {
          result = await work(prepared(client));
        } catch (err) {
          // A connection that cannot roll back is given up (the rollback's error is not a DatabaseError, so the
          // pool closes it), and the server rolls back what it had; otherwise it goes back to the pool clean.
          await client.query('ROLLBACK');
          throw err;
        }
        await client.query('COMMIT');
        return result;
      });
    },

    copyOut(operation: string, text: string): Promise<Buffer> {
      return onClient(operation, async (client) => {
        // pg-copy-streams hands over the CopyData payloads as Buffers; a large buffer makes few, large chunks.
        const chunks: Buffer[] = [];
        for await (const chunk of client.query(copyTo(text, { highWaterMark: COPY_CHUNK_BYTES }))) chunks.push(chunk as Buffer);
        return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      });
    },

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

function passwordOf(url: string): string {
  try {
    return decodeURIComponent(new URL(url).password);
  } catch {
    return '';
  }
}
