import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import type { DatabaseConfig } from '@version-router/platform/config';
import { migrate, openDatabase, type Database } from '@version-router/platform/postgres';
import { startEmbeddedServer } from './embedded.js';

/** TypeScript under the tests, compiled JavaScript in dist/: node-pg-migrate loads either. */
const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url));

/**
 * The gateway's tables and their migration history live here, apart from the backend's (`public`) in a shared database.
 */
const SCHEMA = 'gateway';

const APPLICATION_NAME = 'gateway';

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
 * set, else the embedded one in GATEWAY_DATA_DIR, through the same pool and migrations. Any failure stops
 * the start (the caller prints it as one line).
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
    await migrate({
      url,
      migrationTimeoutMs,
      logger,
      redact: (text) => pool.redact(text),
      dir: MIGRATIONS_DIR,
      schema: SCHEMA,
      applicationName: APPLICATION_NAME,
      processName: 'gateway',
    });
  } catch (err) {
    await close();
    throw err;
  }
  return { database: pool, kind: embedded === undefined ? 'postgres' : 'embedded', close };
}
