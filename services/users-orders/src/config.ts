import { join } from 'node:path';
import { ConfigError, filePathSchema, hostSchema, logLevelSchema, portSchema, readEnv, shutdownDelaySchema } from '@version-router/platform/config';
import { z } from 'zod';

/** Where the users live when one replica is not enough (docs/deployment.md#users-in-postgresql). */
export interface DatabaseConfig {
  /** DATABASE_URL as given: it may hold a password, so it is never printed. */
  url: string;
  /** DATABASE_POOL_MAX: connections this replica opens at most. */
  poolMax: number;
}

export interface BackendConfig {
  host: string;
  port: number;
  /** The admin listener's own address: loopback unless set (the container sets 0.0.0.0 on its internal network). */
  adminHost: string;
  adminPort: number;
  /** SEED_DIR: the folder of the read-only resources' seed files, `<resource>.json` each, read at start. */
  seedDir: string;
  /** ORDERS_FILE: the orders' seed file, `<SEED_DIR>/orders.json` unless set. */
  ordersFile: string;
  /** SHUTDOWN_DELAY_MS: serve on, reported not ready, this long after SIGTERM before closing the listener. */
  shutdownDelayMs: number;
  logLevel: z.output<typeof logLevelSchema>;
  /** Unset: users are kept in this process's memory. */
  database: DatabaseConfig | undefined;
}

const poolMaxSchema = z
  .string()
  .regex(/^[0-9]{1,3}$/, 'must be an integer from 1 to 100')
  .transform(Number)
  .refine((max) => max >= 1 && max <= 100, 'must be an integer from 1 to 100');

/**
 * A postgres:// or postgresql:// URL with a host (or a socket directory). The value is never echoed back: where it parses, the
 * message shows it with the password masked; where it does not, it is not shown at all.
 */
function parseDatabaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('DATABASE_URL: must be a URL like postgres://user:password@host:5432/database (value not shown: it may hold a password)');
  }
  if (url.password !== '') url.password = '***';
  const shown = JSON.stringify(url.href);
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') throw new ConfigError(`DATABASE_URL: must start with postgres:// or postgresql:// (got ${shown})`);
  // postgres:///db?host=/run/postgresql names a Unix socket directory instead of a host.
  if (url.hostname === '' && !url.searchParams.has('host')) throw new ConfigError(`DATABASE_URL: must name a host (got ${shown})`);
  return raw;
}

/** The backend's environment (docs/configuration.md#environment-variables): pure, so tests can pass any environment; throws ConfigError naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv): BackendConfig {
  const vars = readEnv(env, {
    BACKEND_HOST: { schema: hostSchema, default: '127.0.0.1' },
    BACKEND_PORT: { schema: portSchema, default: '8081' },
    BACKEND_ADMIN_HOST: { schema: hostSchema, default: '127.0.0.1' },
    BACKEND_ADMIN_PORT: { schema: portSchema, default: '9465' },
    // Relative paths resolve against the working directory (the repository root under npm start).
    SEED_DIR: { schema: z.string().min(1, 'must name a folder'), default: 'ops/seed' },
    SHUTDOWN_DELAY_MS: { schema: shutdownDelaySchema, default: '0' },
    LOG_LEVEL: { schema: logLevelSchema, default: 'info' },
    DATABASE_POOL_MAX: { schema: poolMaxSchema, default: '10' },
  });
  // ORDERS_FILE keeps its own variable (set in the images and older deployments); unset, it is one seed file among the others.
  const { ORDERS_FILE } = readEnv(env, { ORDERS_FILE: { schema: filePathSchema, default: join(vars.SEED_DIR, 'orders.json') } });
  const databaseUrl = env.DATABASE_URL;
  return {
    host: vars.BACKEND_HOST,
    port: vars.BACKEND_PORT,
    adminHost: vars.BACKEND_ADMIN_HOST,
    adminPort: vars.BACKEND_ADMIN_PORT,
    seedDir: vars.SEED_DIR,
    ordersFile: ORDERS_FILE,
    shutdownDelayMs: vars.SHUTDOWN_DELAY_MS,
    logLevel: vars.LOG_LEVEL,
    database: databaseUrl === undefined || databaseUrl === '' ? undefined : { url: parseDatabaseUrl(databaseUrl), poolMax: vars.DATABASE_POOL_MAX },
  };
}

/** The one place the process environment is read. */
export function loadProcessConfig(): BackendConfig {
  return loadConfig(process.env);
}
