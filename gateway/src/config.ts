import { z } from 'zod';
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
import { serverLimits } from '@version-router/platform/server-limits';

export interface GatewayConfig {
  host: string;
  port: number;
  /** The admin listener's own address: it names clients and reloads the policy, so loopback unless set. */
  adminHost: string;
  adminPort: number;
  backendUrl: string;
  backendTimeoutMs: number;
  /** API_VERSIONS_FILE: main.ts reads it at start, and again on every reload. */
  policyPath: string;
  /** API_VERSIONS_WATCH: reload the policy file when its content changes, without a signal. */
  watchPolicy: boolean;
  /** SHUTDOWN_DELAY_MS: serve on, reported not ready, this long after SIGTERM before closing the listener. */
  shutdownDelayMs: number;
  logLevel: z.output<typeof logLevelSchema>;
  /** ADMIN_TOKEN: the Bearer token the admin listener asks for (all but /healthz, /readyz, /metrics); unset: none. */
  adminToken: string | undefined;
  /** DATABASE_URL: consumers, keys and their usage in PostgreSQL (schema `gateway`), shared by every replica. */
  database: DatabaseConfig | undefined;
  /** GATEWAY_DATA_DIR: where the embedded store keeps them when DATABASE_URL is unset. */
  dataDir: string;
}

/** An http origin (no path, query or credentials): the gateway appends the request's own path. */
const backendUrlSchema = z
  .string()
  .refine((text) => URL.canParse(text), 'must be an http:// URL such as http://127.0.0.1:8081')
  .transform((text) => new URL(text))
  .refine((url) => url.protocol === 'http:', 'must use http://')
  .refine((url) => url.pathname === '/' && url.search === '' && url.hash === '' && url.username === '', 'must be an origin only (no path, query or credentials)')
  .transform((url) => url.origin);

/**
 * undici checks its header/body timeouts on a ~0.5 s tick, so the 504 leaves up to ~0.5 s after the limit;
 * capped a second below the 10 s write deadline so the client gets the 504 rather than a cut connection.
 */
const MAX_BACKEND_TIMEOUT_MS = serverLimits.writeTimeoutMs - 1_000;
const backendTimeoutSchema = z
  .string()
  .regex(/^\d+$/, 'must be a whole number of milliseconds')
  .transform(Number)
  .refine((ms) => ms >= 1 && ms <= MAX_BACKEND_TIMEOUT_MS, `must be between 1 and ${MAX_BACKEND_TIMEOUT_MS} ms (below the write timeout)`);

const onOffSchema = z.enum(['true', 'false'], { error: 'must be true or false' }).transform((text) => text === 'true');

/** The gateway's environment (docs/configuration.md#environment-variables): pure, so tests can pass any environment; throws ConfigError naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv): GatewayConfig {
  const vars = readEnv(env, {
    GATEWAY_HOST: { schema: hostSchema, default: '0.0.0.0' },
    GATEWAY_PORT: { schema: portSchema, default: '8080' },
    GATEWAY_ADMIN_HOST: { schema: hostSchema, default: '127.0.0.1' },
    GATEWAY_ADMIN_PORT: { schema: portSchema, default: '9464' },
    BACKEND_URL: { schema: backendUrlSchema, default: 'http://127.0.0.1:8081' },
    BACKEND_TIMEOUT_MS: { schema: backendTimeoutSchema, default: '9000' },
    // Relative paths resolve against the working directory (the repository root under npm start).
    API_VERSIONS_FILE: { schema: filePathSchema, default: 'ops/versions.json' },
    API_VERSIONS_WATCH: { schema: onOffSchema, default: 'true' },
    SHUTDOWN_DELAY_MS: { schema: shutdownDelaySchema, default: '0' },
    LOG_LEVEL: { schema: logLevelSchema, default: 'info' },
    // Relative to the working directory, like API_VERSIONS_FILE: the repository root under npm start.
    GATEWAY_DATA_DIR: { schema: z.string().min(1, 'must name a directory'), default: '.data/gateway' },
  });
  return {
    host: vars.GATEWAY_HOST,
    port: vars.GATEWAY_PORT,
    adminHost: vars.GATEWAY_ADMIN_HOST,
    adminPort: vars.GATEWAY_ADMIN_PORT,
    backendUrl: vars.BACKEND_URL,
    backendTimeoutMs: vars.BACKEND_TIMEOUT_MS,
    policyPath: vars.API_VERSIONS_FILE,
    watchPolicy: vars.API_VERSIONS_WATCH,
    shutdownDelayMs: vars.SHUTDOWN_DELAY_MS,
    logLevel: vars.LOG_LEVEL,
    adminToken: readAdminToken(env),
    database: readDatabaseConfig(env),
    dataDir: vars.GATEWAY_DATA_DIR,
  };
}

/** The one place the process environment is read. */
export function loadProcessConfig(): GatewayConfig {
  return loadConfig(process.env);
}

/** What `npm run consumers` needs: where the gateway's admin listener is, and its token if it has one. */
export interface ConsumersCliConfig {
  adminUrl: string;
  adminToken: string | undefined;
}

/** GATEWAY_ADMIN_URL (default http://127.0.0.1:9464) and ADMIN_TOKEN, for the consumer CLI. */
export function loadConsumersCliConfig(env: NodeJS.ProcessEnv): ConsumersCliConfig {
  const vars = readEnv(env, {
    GATEWAY_ADMIN_URL: {
      schema: z
        .string()
        .refine((text) => URL.canParse(text) && ['http:', 'https:'].includes(new URL(text).protocol), 'must be an http:// URL such as http://127.0.0.1:9464'),
      default: 'http://127.0.0.1:9464',
    },
  });
  return { adminUrl: vars.GATEWAY_ADMIN_URL.replace(/\/+$/, ''), adminToken: readAdminToken(env) };
}
