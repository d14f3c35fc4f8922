/**
 * What the manifests must agree with about each process, taken from the process's own config.ts: the
 * ports by its defaults and the variables it reads.
 */
import { serverLimits } from '@version-router/platform/server-limits';
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
