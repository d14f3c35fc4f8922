import { readdirSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { runner } from 'node-pg-migrate';
import pg from 'pg';
import type { Logger } from 'pino';
import { clientConfig, readTimeoutMs } from './database.js';

/** Dot files, source maps and declarations beside the compiled migrations are not migrations. */
const IGNORED_FILES = '(?:\\..*|.*\\.map|.*\\.d\\.ts)';
const MIGRATIONS_TABLE = 'pgmigrations';

export interface MigrationOptions {
  url: string;
  logger: Logger;
  redact: (text: string) => string;
  /** The migration files (TypeScript under the tests, compiled JavaScript in dist/: node-pg-migrate loads either). */
  dir: string;
  /**
   * The PostgreSQL schema that holds the tables and the migration history, created when missing; unset: the
   * connection's default (`public`). Two processes given one database keep apart by their schemas, so
   * neither ever sees the other's migrations.
   */
  schema?: string;
  /** Who migrates, as the refusal names it ("backend", "gateway") and PostgreSQL shows the connection. */
  applicationName: string;
  processName: string;
}

/** The migrations a build ships, by name (file name without extension), as node-pg-migrate records them. */
function knownMigrations(dir: string): Set<string> {
  const ignored = new RegExp(`^${IGNORED_FILES}$`);
  return new Set(
    readdirSync(dir)
      .filter((file) => !ignored.test(file))
      .map((file) => basename(file, extname(file))),
  );
}

/**
 * Brings the schema up to this build's, under node-pg-migrate's PostgreSQL advisory lock (replicas that start
 * together wait for each other and the first applies it once). A schema with a migration this build does not
 * know was made by a newer build: starting on it could corrupt data, so this refuses with one line.
 */
export async function migrate({ url, logger, redact, dir, schema, applicationName, processName }: MigrationOptions): Promise<void> {
  const log = logger.child({ component: 'migrations' });
  const client = new pg.Client({ ...clientConfig(url, applicationName), query_timeout: readTimeoutMs });
  // The failing statement reports a lost connection; unhandled, the client's own 'error' event would end the process.
  client.on('error', (err) => log.warn({ reason: redact(err.message) }, 'PostgreSQL connection failed'));
  try {
    await client.connect();
    await runner({
      dbClient: client,
      dir,
      ignorePattern: IGNORED_FILES,
      migrationsTable: MIGRATIONS_TABLE,
      ...(schema === undefined ? {} : { schema, migrationsSchema: schema, createSchema: true, createMigrationsSchema: true }),
      direction: 'up',
      advisoryLockMode: 'wait',
      singleTransaction: true,
      logger: { debug: (msg: string) => log.debug(msg), info: (msg: string) => log.info(msg), warn: (msg: string) => log.warn(msg), error: (msg: string) => log.error(msg) },
    });
    const table = schema === undefined ? MIGRATIONS_TABLE : `${client.escapeIdentifier(schema)}.${MIGRATIONS_TABLE}`;
    const { rows } = await client.query<{ name: string }>(`SELECT name FROM ${table} ORDER BY run_on, id`);
    const known = knownMigrations(dir);
    const unknown = rows.find(({ name }) => !known.has(name));
    if (unknown !== undefined) {
      throw new SchemaNewerError(
        `the PostgreSQL schema is newer than this ${processName} knows (migration ${unknown.name} was applied by a newer version); run that version or a newer one`,
      );
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
