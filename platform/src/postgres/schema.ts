import type { Logger } from 'pino';
import { checkSchema, migrate } from './migrate.js';
import type { Database } from './database.js';

/** One process's schema: where its migrations are, who applies them, and the command that does it before a rollout. */
export interface SchemaDefinition {
  /** The migration files (TypeScript under the tests, compiled JavaScript in dist/: node-pg-migrate loads either). */
  dir: string;
  /** The PostgreSQL schema of its tables and history; unset: the connection's default (`public`). */
  schema?: string;
  /** The connection's application_name, as PostgreSQL shows it. */
  applicationName: string;
  /** Who migrates, as a refusal names it ("backend", "gateway"). */
  processName: string;
  /** What applies this build's migrations without serving (the process's src/migrate.ts, built). */
  migrateCommand: string;
}

/** The two ways a process meets its schema (DATABASE_MIGRATIONS=apply or check), bound to its definition. */
export interface SchemaMigrations {
  readonly migrateCommand: string;
  /** Brings the schema up to this build's (the runner's advisory lock; a newer schema refused as it says). */
  apply(
    database: { url: string; migrationTimeoutMs: number },
    logger: Logger,
    redact?: (text: string) => string,
  ): Promise<void>;
  /** Waits, through the process's own pool, for the schema to hold this build's migrations (applied elsewhere). */
  check(database: Database, { migrationTimeoutMs }: { migrationTimeoutMs: number }, logger: Logger): Promise<void>;
}

export function schemaMigrations({
  dir,
  schema,
  applicationName,
  processName,
  migrateCommand,
}: SchemaDefinition): SchemaMigrations {
  const inSchema = schema === undefined ? {} : { schema };
  return {
    migrateCommand,
    apply: ({ url, migrationTimeoutMs }, logger, redact) =>
      migrate({
        url,
        migrationTimeoutMs,
        logger,
        ...(redact === undefined ? {} : { redact }),
        dir,
        ...inSchema,
        applicationName,
        processName,
      }),
    check: (database, { migrationTimeoutMs }, logger) =>
      checkSchema({ database, migrationTimeoutMs, logger, dir, ...inSchema, processName, migrateCommand }),
  };
}
