import { readdirSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';
import pg from 'pg';
import type { Logger } from 'pino';
import { clientConfig, readTimeoutMs } from './database.js';

/** TypeScript under the tests, compiled JavaScript in dist/: node-pg-migrate loads either. */
const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url));
/** Dot files, source maps and declarations beside the compiled migrations are not migrations. */
const IGNORED_FILES = '(?:\\..*|.*\\.map|.*\\.d\\.ts)';
const MIGRATIONS_TABLE = 'pgmigrations';

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
 */
export async function migrate(url: string, logger: Logger, redact: (text: string) => string): Promise<void> {
  const log = logger.child({ component: 'migrations' });
  const client = new pg.Client({ ...clientConfig(url), query_timeout: readTimeoutMs });
  // The failing statement reports a lost connection; unhandled, the client's own 'error' event would end the process.
  client.on('error', (err) => log.warn({ reason: redact(err.message) }, 'PostgreSQL connection failed'));
  try {
    await client.connect();
    await runner({
      dbClient: client,
      dir: MIGRATIONS_DIR,
      ignorePattern: IGNORED_FILES,
      migrationsTable: MIGRATIONS_TABLE,
      direction: 'up',
      advisoryLockMode: 'wait',
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
    // One line, whatever the library or driver wrote (some of their messages carry a stack).
    const reason = redact(err instanceof Error ? err.message : String(err)).split('\n')[0];
    throw new Error(`PostgreSQL schema migration failed: ${reason}`, { cause: err });
  } finally {
    await client.end().catch(() => undefined);
  }
}

class SchemaNewerError extends Error {
  override name = 'SchemaNewerError';
}
