import { readdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { basename, extname } from 'node:path';
import { PG_MIGRATE_LOCK_ID, runner } from 'node-pg-migrate';
import pg from 'pg';
import type { Logger } from 'pino';
import { clientConfig, passwordRedactor, type Database } from './database.js';

/** Dot files, source maps and declarations beside the compiled migrations are not migrations. */
const IGNORED_FILES = '(?:\\..*|.*\\.map|.*\\.d\\.ts)';
const MIGRATIONS_TABLE = 'pgmigrations';
/**
 * As for requests: the client gives up on a silent server this long after the server would have cancelled the
 * statement.
 */
const READ_MARGIN_MS = 500;
/** SQLSTATE query_canceled: here, a statement ran past statement_timeout. */
const QUERY_CANCELED = '57014';
/** SQLSTATE lock_not_available: here, a statement waited past lock_timeout. */
const LOCK_NOT_AVAILABLE = '55P03';
/**
 * lock_timeout of a migration's statements. A statement waiting for a table lock queues every request on that
 * table behind it; past this it gives up, its transaction rolls back, and the migration is tried again after
 * LOCK_RETRY_PAUSE_MS, so requests get through in between. DATABASE_MIGRATION_TIMEOUT_MS bounds the whole.
 */
const LOCK_TIMEOUT_MS = 2_000;
const LOCK_RETRY_PAUSE_MS = 1_000;

export interface MigrationOptions {
  url: string;
  /**
   * DATABASE_MIGRATION_TIMEOUT_MS: bounds the wait for another replica's migration and each migration
   * statement, instead of the requests' 3 s statement timeout (a migration may take minutes).
   */
  migrationTimeoutMs: number;
  logger: Logger;
  /** Masks the URL's password in a message; unset: the password of `url`. */
  redact?: (text: string) => string;
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
 * together wait for each other and the first applies it once). A schema with migrations this build does not
 * know was made by a newer build: one release newer is run on with a warning (a rollback), more is refused
 * with one line, since starting on it could corrupt data.
 */
export async function migrate({
  url,
  migrationTimeoutMs,
  logger,
  redact = passwordRedactor(url),
  dir,
  schema,
  applicationName,
  processName,
}: MigrationOptions): Promise<void> {
  const log = logger.child({ component: 'migrations' });
  const client = new pg.Client({
    ...clientConfig(url, applicationName),
    statement_timeout: migrationTimeoutMs,
    query_timeout: migrationTimeoutMs + READ_MARGIN_MS,
  });
  // The failing statement reports a lost connection; unhandled, the client's own 'error' event would end the process.
  client.on('error', (err) => log.warn({ reason: redact(err.message) }, 'PostgreSQL connection failed'));
  // Which bound a cancelled statement ran into, for the message.
  let waitingForLock = false;
  try {
    await client.connect();
    waitingForLock = true;
    await lockMigrations(client, log, migrationTimeoutMs);
    waitingForLock = false;
    // After the advisory lock: that wait is another replica's migration, bounded by the migration timeout alone.
    await client.query(`SET lock_timeout = ${LOCK_TIMEOUT_MS}`);
    const giveUpAt = Date.now() + migrationTimeoutMs;
    for (;;) {
      try {
        await runner({
          dbClient: client,
          dir,
          ignorePattern: IGNORED_FILES,
          migrationsTable: MIGRATIONS_TABLE,
          ...(schema === undefined
            ? {}
            : { schema, migrationsSchema: schema, createSchema: true, createMigrationsSchema: true }),
          direction: 'up',
          // Taken above, on this session: ending the connection releases it.
          noLock: true,
          singleTransaction: true,
          logger: {
            debug: (msg: string) => log.debug(msg),
            info: (msg: string) => log.info(msg),
            warn: (msg: string) => log.warn(msg),
            error: (msg: string) => log.error(msg),
          },
        });
        break;
      } catch (err) {
        if (!(err instanceof pg.DatabaseError && err.code === LOCK_NOT_AVAILABLE)) throw err;
        if (Date.now() + LOCK_RETRY_PAUSE_MS >= giveUpAt) {
          throw new MigrationLockTimeout(migrationTimeoutMs, { cause: err });
        }
        log.warn(
          { lockTimeoutMs: LOCK_TIMEOUT_MS, retryInMs: LOCK_RETRY_PAUSE_MS },
          'a migration statement waited too long for a lock; trying again',
        );
        await sleep(LOCK_RETRY_PAUSE_MS);
      }
    }
    const { rows } = await client.query<AppliedMigration>(appliedMigrationsQuery(schema));
    checkSchemaAge(rows, knownMigrations(dir), processName, log);
  } catch (err) {
    if (err instanceof SchemaNewerError || err instanceof MigrationLockTimeout) throw err;
    if (err instanceof pg.DatabaseError && err.code === QUERY_CANCELED) {
      const what = waitingForLock
        ? "waited for another replica's schema migration (the PostgreSQL advisory lock)"
        : 'a migration statement ran';
      throw new Error(
        `PostgreSQL schema migration failed: ${what} longer than DATABASE_MIGRATION_TIMEOUT_MS (` +
          `${migrationTimeoutMs} ms)`,
        { cause: err },
      );
    }
    // One line, whatever the library or driver wrote (some of their messages carry a stack).
    const reason = redact(err instanceof Error ? err.message : String(err)).split('\n')[0];
    throw new Error(`PostgreSQL schema migration failed: ${reason}`, { cause: err });
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * node-pg-migrate's own advisory lock (its id, so its command-line tool and every process migrating this
 * database wait for each other), taken here so that a replica that has to wait says so: it is not ready meanwhile.
 */
async function lockMigrations(client: pg.Client, log: Logger, timeoutMs: number): Promise<void> {
  const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS locked', [
    PG_MIGRATE_LOCK_ID,
  ]);
  if (rows[0]?.locked === true) return;
  log.info({ timeoutMs }, "waiting for another replica's schema migration");
  await client.query('SELECT pg_advisory_lock($1::bigint)', [PG_MIGRATE_LOCK_ID]);
  log.info("another replica's schema migration finished");
}

/** A row of node-pg-migrate's history: the migration's name and when the run that applied it began. */
interface AppliedMigration {
  name: string;
  run_on: string;
}

/** The applied migrations in the order they were applied, from the history table in `schema` (unset: `public`). */
function appliedMigrationsQuery(schema: string | undefined): string {
  const table = schema === undefined ? MIGRATIONS_TABLE : `${escapeIdentifier(schema)}.${MIGRATIONS_TABLE}`;
  return `SELECT name, run_on::text FROM ${table} ORDER BY run_on, id`;
}

const escapeIdentifier = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/**
 * A build runs on a schema one release newer than it knows, so that an operator can roll back a release whose
 * migration has run (docs/runbook.md "Rolling back a release with a migration"): a release only adds what its
 * predecessor does not read and drops only what that predecessor no longer reads (expand/contract,
 * docs/decisions.md). One release's migrations are applied by one run, in one transaction, so they share their
 * `run_on`: unknown migrations with one `run_on` are one release newer, logged with a warning; more are refused.
 */
function checkSchemaAge(applied: AppliedMigration[], known: Set<string>, processName: string, log: Logger): void {
  const unknown = applied.filter(({ name }) => !known.has(name));
  const [first] = unknown;
  if (first === undefined) return;
  const releases = new Set(unknown.map(({ run_on: runOn }) => runOn)).size;
  const names = unknown.map(({ name }) => name).join(', ');
  if (releases > 1) {
    throw new SchemaNewerError(
      `the PostgreSQL schema is ${releases} releases newer than this ${processName} knows ` +
        `(migrations ${names} were applied by newer versions); ` +
        'a version runs on a schema at most one release newer: run a newer one',
    );
  }
  log.warn(
    { migrations: unknown.map(({ name }) => name) },
    `the PostgreSQL schema is one release newer than this ${processName} knows (a rollback?); running on it`,
  );
}

class SchemaNewerError extends Error {
  override name = 'SchemaNewerError';
}

class MigrationLockTimeout extends Error {
  override name = 'MigrationLockTimeout';
  constructor(migrationTimeoutMs: number, options: ErrorOptions) {
    super(
      'PostgreSQL schema migration failed: a migration statement waited for a table lock longer than ' +
        `DATABASE_MIGRATION_TIMEOUT_MS (${migrationTimeoutMs} ms), ` +
        `giving it up every ${LOCK_TIMEOUT_MS} ms (lock_timeout) to let requests through`,
      options,
    );
  }
}

/** SQLSTATE undefined_table: no migration history yet (nor, for the gateway, its schema). */
const UNDEFINED_TABLE = '42P01';
/** How often a start in `check` mode reads the migration history again while this build's migrations are missing. */
const CHECK_INTERVAL_MS = 1_000;

export interface SchemaCheckOptions {
  /** The process's own pool: the check takes one of its connections, never one more. */
  database: Database;
  /** DATABASE_MIGRATION_TIMEOUT_MS: how long to wait for this build's migrations to be applied. */
  migrationTimeoutMs: number;
  logger: Logger;
  dir: string;
  schema?: string;
  processName: string;
  /** The command that applies this build's migrations, as the refusal names it. */
  migrateCommand: string;
}

/**
 * For a process that never changes the schema (DATABASE_MIGRATIONS=check): resolves once the schema holds every
 * migration this build ships and is at most one release newer (checkSchemaAge), reading the history through the
 * process's pool, as a role that may not change the schema may. While some of this build's migrations are missing
 * (its migration command, run before the rollout, has not finished) it waits, up to `migrationTimeoutMs`, then
 * refuses with one line naming them. A schema newer by two releases or more is refused at once.
 */
export async function checkSchema({
  database,
  migrationTimeoutMs,
  logger,
  dir,
  schema,
  processName,
  migrateCommand,
}: SchemaCheckOptions): Promise<void> {
  const log = logger.child({ component: 'migrations' });
  const known = knownMigrations(dir);
  const giveUpAt = Date.now() + migrationTimeoutMs;
  let waiting = false;
  for (;;) {
    let applied: AppliedMigration[];
    try {
      applied = (await database.query<AppliedMigration>('schema_check', appliedMigrationsQuery(schema), [])).rows;
    } catch (err) {
      if (!(err instanceof pg.DatabaseError && err.code === UNDEFINED_TABLE)) {
        const reason = database.redact(err instanceof Error ? err.message : String(err)).split('\n')[0];
        throw new Error(`PostgreSQL schema check failed: ${reason}`, { cause: err });
      }
      applied = [];
    }
    const present = new Set(applied.map(({ name }) => name));
    const missing = [...known].filter((name) => !present.has(name)).sort();
    if (missing.length === 0) {
      checkSchemaAge(applied, known, processName, log);
      if (waiting) log.info("this build's schema migrations are applied");
      return;
    }
    if (Date.now() + CHECK_INTERVAL_MS >= giveUpAt) {
      throw new Error(
        `the PostgreSQL schema lacks this ${processName}'s migrations ${missing.join(', ')} after waiting ` +
          `DATABASE_MIGRATION_TIMEOUT_MS (${migrationTimeoutMs} ms); with DATABASE_MIGRATIONS=check it never applies ` +
          `them: run \`${migrateCommand}\` first`,
      );
    }
    if (!waiting)
      log.info(
        { migrations: missing, timeoutMs: migrationTimeoutMs },
        `waiting for this ${processName}'s schema migrations to be applied (\`${migrateCommand}\`)`,
      );
    waiting = true;
    await sleep(CHECK_INTERVAL_MS);
  }
}
