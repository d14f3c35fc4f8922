import { openDatabase as openPostgres, type Database as PostgresDatabase } from '@version-router/platform/postgres';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { createDatabaseMetrics } from '../../metrics.js';

/** How long a statement may go unanswered before it counts as unavailable (the platform pool's read timeout). */
export { readTimeoutMs } from '@version-router/platform/postgres';

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
export type Statement = <Row extends pg.QueryResultRow>(
  statement: string,
  text: string,
  values: unknown[],
) => Promise<pg.QueryResult<Row>>;

/** Statement names: the backend's prefix, as the platform pool names its own queries. */
const STATEMENT_PREFIX = 'users';

/**
 * One replica's connection pool (the platform's: failure classes, timeouts), with the users' transactions and COPY
 * reads.
 */
export interface Database extends PostgresDatabase {
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
}

export function openDatabase({ url, poolMax, logger, registry }: DatabaseOptions): Database {
  const database = openPostgres({
    url,
    poolMax,
    logger,
    applicationName: 'users-orders',
    statementPrefix: STATEMENT_PREFIX,
    instrument: (sources) => createDatabaseMetrics(registry, sources),
  });
  return {
    ...database,
    transaction<Result>(operation: string, work: (statement: Statement) => Promise<Result>): Promise<Result> {
      return database.withClient(operation, async (client) => {
        // Named, as the pool's own queries are: each connection parses and plans a statement once.
        const statement: Statement = (name, text, values) =>
          client.query({ name: `${STATEMENT_PREFIX}_${name}`, text, values });
        await client.query('BEGIN');
        let result: Result;
        try {
          result = await work(statement);
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
    copyOut(operation, text) {
      return database.withClient(operation, async (client) => {
        // pg-copy-streams hands over the CopyData payloads as Buffers; a large buffer makes few, large chunks.
        const chunks: Buffer[] = [];
        for await (const chunk of client.query(copyTo(text, { highWaterMark: COPY_CHUNK_BYTES })))
          chunks.push(chunk as Buffer);
        return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      });
    },
  };
}
