import { openDatabase as openPostgres, type Database as PostgresDatabase } from '@version-router/platform/postgres';
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

/** One replica's connection pool (the platform's: failure classes, timeouts), with the users' COPY reads. */
export interface Database extends PostgresDatabase {
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
    statementPrefix: 'users',
    instrument: (sources) => createDatabaseMetrics(registry, sources),
  });
  return {
    ...database,
    copyOut(operation, text) {
      return database.withClient(operation, async (client) => {
        // pg-copy-streams hands over the CopyData payloads as Buffers; a large buffer makes few, large chunks.
        const chunks: Buffer[] = [];
        for await (const chunk of client.query(copyTo(text, { highWaterMark: COPY_CHUNK_BYTES }))) chunks.push(chunk as Buffer);
        return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      });
    },
  };
}
