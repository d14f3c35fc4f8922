/**
 * What the manifests must agree with about each process, taken from the process's own config.ts: the
 * ports by its defaults and the variables it reads.
 */
import { loadMigrationCommandConfig } from '@version-router/platform/postgres';
import { serverLimits } from '@version-router/platform/server-limits';
import { migrationEntries } from '../../scripts/paths.mjs';
import { loadConfig as loadGatewayConfig } from '../../gateway/src/config.js';
import { loadConfig as loadBackendConfig } from '../../services/users-orders/src/config.js';
import type { AdminListener } from './pod-rules.js';

/** How long a process drains in-flight requests after its listener closes. */
export const drainMs = serverLimits.shutdownGraceMs;

export interface ProcessFacts<Config = unknown> {
  /** The Deployment, container and Service name. */
  name: 'gateway' | 'backend';
  /** What config.ts makes of this environment. */
  config(env: NodeJS.ProcessEnv): Config;
  apiPort: number;
  admin: AdminListener;
  /** The variables loadConfig reads given this environment (it throws on a value it refuses). */
  namesRead(env: NodeJS.ProcessEnv): Set<string>;
}

/** Every property loadConfig looks up in the environment. */
function recordReads(load: (env: NodeJS.ProcessEnv) => unknown, env: NodeJS.ProcessEnv): Set<string> {
  const read = new Set<string>();
  const recording = new Proxy(env, {
    get(target, name) {
      if (typeof name === 'string') read.add(name);
      return Reflect.get(target, name) as unknown;
    },
  });
  load(recording);
  return read;
}

const gatewayDefaults = loadGatewayConfig({});
const backendDefaults = loadBackendConfig({});

export const processes = {
  gateway: {
    name: 'gateway',
    config: loadGatewayConfig,
    apiPort: gatewayDefaults.port,
    admin: { port: gatewayDefaults.adminPort, portVariable: 'GATEWAY_ADMIN_PORT', hostVariable: 'GATEWAY_ADMIN_HOST' },
    namesRead: (env) => recordReads(loadGatewayConfig, env),
  } satisfies ProcessFacts<ReturnType<typeof loadGatewayConfig>>,
  backend: {
    name: 'backend',
    config: loadBackendConfig,
    apiPort: backendDefaults.port,
    admin: { port: backendDefaults.adminPort, portVariable: 'BACKEND_ADMIN_PORT', hostVariable: 'BACKEND_ADMIN_HOST' },
    namesRead: (env) => recordReads(loadBackendConfig, env),
  } satisfies ProcessFacts<ReturnType<typeof loadBackendConfig>>,
};

/**
 * The connections a migration command holds: node-pg-migrate runs on the one client platform/src/postgres/migrate.ts
 * opens, which also holds the advisory lock.
 */
export const MIGRATION_CONNECTIONS = 1;

/** A process's migration command, as the migration Job runs it (its image, the built file, what it reads). */
export interface MigrationCommandFacts {
  /** The process whose image holds the command (the container and build target name). */
  process: 'gateway' | 'backend';
  /** The built file, relative to the image's working directory. */
  entry: string;
  namesRead(env: NodeJS.ProcessEnv): Set<string>;
}

export const migrationCommands: Record<'gateway' | 'backend', MigrationCommandFacts> = {
  backend: {
    process: 'backend',
    entry: migrationEntries.backend,
    namesRead: (env) => recordReads(loadMigrationCommandConfig, env),
  },
  gateway: {
    process: 'gateway',
    entry: migrationEntries.gateway,
    namesRead: (env) => recordReads(loadMigrationCommandConfig, env),
  },
};
