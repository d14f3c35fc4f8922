import { filePathSchema, hostSchema, logLevelSchema, portSchema, readAdminToken, readDatabaseConfig, readEnv, shutdownDelaySchema, type DatabaseConfig } from '@version-router/platform/config';
import { z } from 'zod';

export interface BackendConfig {
  host: string;
  port: number;
  /** The admin listener's own address: loopback unless set (the container sets 0.0.0.0 on its internal network). */
  adminHost: string;
  adminPort: number;
  /** ORDERS_FILE: main.ts reads it at start. */
  ordersFile: string;
  /** SHUTDOWN_DELAY_MS: serve on, reported not ready, this long after SIGTERM before closing the listener. */
  shutdownDelayMs: number;
  logLevel: z.output<typeof logLevelSchema>;
  /** Unset: users are kept in this process's memory. */
  database: DatabaseConfig | undefined;
  /** ADMIN_TOKEN: the Bearer token the admin listener asks for (all but /healthz, /readyz, /metrics); unset: none. */
  adminToken: string | undefined;
}

/** The backend's environment (docs/configuration.md#environment-variables): pure, so tests can pass any environment; throws ConfigError naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv): BackendConfig {
  const vars = readEnv(env, {
    BACKEND_HOST: { schema: hostSchema, default: '127.0.0.1' },
    BACKEND_PORT: { schema: portSchema, default: '8081' },
    BACKEND_ADMIN_HOST: { schema: hostSchema, default: '127.0.0.1' },
    BACKEND_ADMIN_PORT: { schema: portSchema, default: '9465' },
    // Relative paths resolve against the working directory (the repository root under npm start).
    ORDERS_FILE: { schema: filePathSchema, default: 'ops/seed/orders.json' },
    SHUTDOWN_DELAY_MS: { schema: shutdownDelaySchema, default: '0' },
    LOG_LEVEL: { schema: logLevelSchema, default: 'info' },
  });
  return {
    host: vars.BACKEND_HOST,
    port: vars.BACKEND_PORT,
    adminHost: vars.BACKEND_ADMIN_HOST,
    adminPort: vars.BACKEND_ADMIN_PORT,
    ordersFile: vars.ORDERS_FILE,
    shutdownDelayMs: vars.SHUTDOWN_DELAY_MS,
    logLevel: vars.LOG_LEVEL,
    database: readDatabaseConfig(env),
    adminToken: readAdminToken(env),
  };
}

/** The one place the process environment is read. */
export function loadProcessConfig(): BackendConfig {
  return loadConfig(process.env);
}
