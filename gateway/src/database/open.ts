import type { Logger } from 'pino';
import type { DatabaseConfig } from '@version-router/platform/config';
import { openDatabase, type Database } from '@version-router/platform/postgres';
import { startEmbeddedServer } from './embedded.js';
import { APPLICATION_NAME, gatewaySchema } from './migrate.js';

/** The embedded store has no other replica to wait for: this only bounds a migration statement that hangs. */
const EMBEDDED_MIGRATION_TIMEOUT_MS = 600_000;

export interface StoreLocation {
  /** DATABASE_URL: a PostgreSQL server shared by the replicas. */
  database: DatabaseConfig | undefined;
  /** GATEWAY_DATA_DIR: the embedded store's directory when there is no DATABASE_URL. */
  dataDir: string;
}

/** The gateway's open database, where it lives, and how to close it. */
export interface GatewayDatabase {
  /** The pool every store of the gateway runs on (the consumers', the notices'). */
  database: Database;
  /** For the start-up log line: `postgres` or `embedded`. */
  kind: 'postgres' | 'embedded';
  /** Ends the pool, then the embedded server when there is one. */
  close: () => Promise<void>;
}

/**
 * Opens the gateway's database and brings its schema up to this build's: PostgreSQL when DATABASE_URL is
 * set, else the embedded one in GATEWAY_DATA_DIR, through the same pool and migrations. With
 * DATABASE_MIGRATIONS=check a PostgreSQL schema is only checked (waited for) instead; the embedded store is this
 * process's own and always migrated. Any failure stops the start (the caller prints it as one line).
 */
export async function openGatewayDatabase(
  { database, dataDir }: StoreLocation,
  logger: Logger,
): Promise<GatewayDatabase> {
  const embedded = database === undefined ? await startEmbeddedServer(dataDir, logger) : undefined;
  // PGlite is one session shared by its connections: one pooled connection, unnamed statements.
  const { url, poolMax, migrationTimeoutMs } =
    embedded === undefined
      ? (database as DatabaseConfig)
      : { url: embedded.url, poolMax: 1, migrationTimeoutMs: EMBEDDED_MIGRATION_TIMEOUT_MS };
  const pool = openDatabase({ url, poolMax, logger, applicationName: APPLICATION_NAME });
  const close = async (): Promise<void> => {
    await pool.close();
    await embedded?.close();
  };
  try {
    if (database?.migrations === 'check') await gatewaySchema.check(pool, { migrationTimeoutMs }, logger);
    else await gatewaySchema.apply({ url, migrationTimeoutMs }, logger, (text) => pool.redact(text));
  } catch (err) {
    await close();
    throw err;
  }
  return { database: pool, kind: embedded === undefined ? 'postgres' : 'embedded', close };
}
