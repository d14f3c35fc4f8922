import { readdirSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PG_MIGRATE_LOCK_ID, runner } from 'node-pg-migrate';
import pg from 'pg';
import type { Logger } from 'pino';
import type { DatabaseConfig } from '../../config.js';
import { clientConfig } from './database.js';

/** TypeScript under the tests, compiled JavaScript in dist/: node-pg-migrate loads either. */
const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url));
/** Dot files, source maps and declarations beside the compiled migrations are not migrations. */
const IGNORED_FILES = '(?:\\..*|.*\\.map|.*\\.d\\.ts)';
const MIGRATIONS_TABLE = 'pgmigrations';
/** As for requests: the client gives up on a silent server this long after the server would have cancelled the statement. */
const READ_MARGIN_MS = 500;
/** SQLSTATE query_canceled: here, a statement ran past statement_timeout. */
const QUERY_CANCELED = '57014';

/** The migrations this build ships, by name (file name without extension), as node-pg-migrate records them. */
function knownMigrations(): Set<string> {
  const ignored = new RegExp(`^${IGNORED_FILES}$`);
  return new Set(
    readdirSync(MIGRATIONS_DIR)
      .filter((file) => !ignored.test(file))
      .map((file) => basename(file, extname(file))),
  );
}

/**
 * Brings the schema up to this build's, under node-pg-migrate's PostgreSQL advisory lock (replicas that start
 * together wait for each other and the first applies it once). A schema with a migration this build does not
 * know was made by a newer backend: starting on it could corrupt data, so this refuses with one line.
 *
 * A migration may take minutes: neither the wait for the lock (another replica migrating) nor a migration
 * statement is bound by the requests' 3 s statement timeout, each by DATABASE_MIGRATION_TIMEOUT_MS instead.
 */
export async function migrate({ url, migrationTimeoutMs }: Pick<DatabaseConfig, 'url' | 'migrationTimeoutMs'>, logger: Logger, redact: (text: string) => string): Promise<void> {
  const log = logger.child({ component: 'migrations' });
  const client = new pg.Client({ ...clientConfig(url), statement_timeout: migrationTimeoutMs, query_timeout: migrationTimeoutMs + READ_MARGIN_MS });
  // The failing statement reports a lost connection; unhandled, the client's own 'error' event would end the process.
  client.on('error', (err) => log.warn({ reason: redact(err.message) }, 'PostgreSQL connection failed'));
  // Which bound a cancelled statement ran into, for the message.
  let waitingForLock = false;
  try {
    await client.connect();
    waitingForLock = true;
    await lockMigrations(client, log, migrationTimeoutMs);
    waitingForLock = false;
    await runner({
      dbClient: client,
      dir: MIGRATIONS_DIR,
      ignorePattern: IGNORED_FILES,
      migrationsTable: MIGRATIONS_TABLE,
      direction: 'up',
      // Taken above, on this session: ending the connection releases it.
      noLock: true,
      singleTransaction: true,
      logger: { debug: (msg: string) => log.debug(msg), info: (msg: string) => log.info(msg), warn: (msg: string) => log.warn(msg), error: (msg: string) => log.error(msg) },
    });
    const { rows } = await client.query<{ name: string }>(`SELECT name FROM ${MIGRATIONS_TABLE} ORDER BY run_on, id`);
    const known = knownMigrations();
    const unknown = rows.find(({ name }) => !known.has(name));
    if (unknown !== undefined) {
      throw new SchemaNewerError(`the PostgreSQL schema is newer than this backend knows (migration ${unknown.name} was applied by a newer version); run that version or a newer one`);
    }
  } catch (err) {
    if (err instanceof SchemaNewerError) throw err;
    if (err instanceof pg.DatabaseError && err.code === QUERY_CANCELED) {
      const what = waitingForLock ? "waited for another replica's schema migration (the PostgreSQL advisory lock)" : 'a migration statement ran';
      throw new Error(`PostgreSQL schema migration failed: ${what} longer than DATABASE_MIGRATION_TIMEOUT_MS (${migrationTimeoutMs} ms)`, { cause: err });
    }
    // One line, whatever the library or driver wrote (some of their messages carry a stack).
    const reason = redact(err instanceof Error ? err.message : String(err)).split('\n')[0];
    throw new Error(`PostgreSQL schema migration failed: ${reason}`, { cause: err });
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * node-pg-migrate's own advisory lock (its id, so its command-line tool waits for the backend and the other
 * way round), taken here so that a replica that has to wait says so: it is not ready meanwhile.
 */
async function lockMigrations(client: pg.Client, log: Logger, timeoutMs: number): Promise<void> {
  const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS locked', [PG_MIGRATE_LOCK_ID]);
  if (rows[0]?.locked === true) return;
  log.info({ timeoutMs }, "waiting for another replica's schema migration");
  await client.query('SELECT pg_advisory_lock($1::bigint)', [PG_MIGRATE_LOCK_ID]);
  log.info("another replica's schema migration finished");
}

class SchemaNewerError extends Error {
  override name = 'SchemaNewerError';
}
