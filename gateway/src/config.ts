import { z } from 'zod';
import { filePathSchema, hostSchema, logLevelSchema, portSchema, readEnv, shutdownDelaySchema } from '@version-router/platform/config';
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
  };
}

/** The one place the process environment is read. */
export function loadProcessConfig(): GatewayConfig {
  return loadConfig(process.env);
}
