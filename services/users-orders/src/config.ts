import { join } from 'node:path';
import {
  filePathSchema,
  hostSchema,
  logLevelSchema,
  portSchema,
  readAdminToken,
  readDatabaseConfig,
  readEnv,
  shutdownDelaySchema,
  type DatabaseConfig,
} from '@version-router/platform/config';
import { readTracingConfig, type TracingConfig } from '@version-router/platform/tracing';
import { z } from 'zod';

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
  /** ADMIN_TOKEN: the Bearer token the admin listener asks for (all but /healthz, /readyz, /metrics); unset: none. */
  adminToken: string | undefined;
  /** The OTEL_* variables: undefined when tracing is off (docs/tracing.md#turning-tracing-on). */
  tracing: TracingConfig | undefined;
}

/**
 * The backend's environment (docs/configuration.md#environment-variables): pure, so tests can pass any environment;
 * throws ConfigError naming the variable.
 */
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
  });
  // ORDERS_FILE keeps its own variable (set in the images and older deployments); unset, it is one seed file among the
  // others.
  const { ORDERS_FILE } = readEnv(env, {
    ORDERS_FILE: { schema: filePathSchema, default: join(vars.SEED_DIR, 'orders.json') },
  });
  return {
    host: vars.BACKEND_HOST,
    port: vars.BACKEND_PORT,
    adminHost: vars.BACKEND_ADMIN_HOST,
    adminPort: vars.BACKEND_ADMIN_PORT,
    seedDir: vars.SEED_DIR,
    ordersFile: ORDERS_FILE,
    shutdownDelayMs: vars.SHUTDOWN_DELAY_MS,
    logLevel: vars.LOG_LEVEL,
    database: readDatabaseConfig(env),
    adminToken: readAdminToken(env),
    tracing: readTracingConfig(env, 'users-orders'),
  };
}

/** The one place the process environment is read. */
export function loadProcessConfig(): BackendConfig {
  return loadConfig(process.env);
}
