import { resolve } from 'node:path';
import { repoRoot } from '../../scripts/paths.mjs';
import { startService, type ServiceProcess } from '../../platform/test/support/service-process.js';
import { sharedGatewayStore } from '../support/gateway-store.js';
import type { RunningStack } from './stack.js';

/** Loopback and port 0 everywhere, so suites can run side by side. */
const backendEnv = { BACKEND_HOST: '127.0.0.1', BACKEND_PORT: '0', BACKEND_ADMIN_PORT: '0' };
const gatewayEnv = { GATEWAY_HOST: '127.0.0.1', GATEWAY_PORT: '0', GATEWAY_ADMIN_PORT: '0' };

/** A built gateway on the run's shared consumer store (test/support/gateway-store.ts) unless `env` names another. */
export function startGateway(
  backendUrl: string,
  env: Record<string, string> = {},
  root: string = repoRoot,
): Promise<ServiceProcess> {
  return startService('gateway', { ...gatewayEnv, ...sharedGatewayStore(), BACKEND_URL: backendUrl, ...env }, root);
}

export interface ProcessStackOptions {
  /** Extra environment for the gateway, e.g. API_VERSIONS_FILE. */
  gatewayEnv?: Record<string, string>;
  backendEnv?: Record<string, string>;
  /** A built copy of the repository to run instead of this one (test/e2e/adding-version-3.test.ts). */
  root?: string;
}

export interface ProcessStack extends RunningStack {
  backend: ServiceProcess;
  gateway: ServiceProcess;
}

/** The real built backend and gateway as two processes, like `npm start`, on ephemeral loopback ports. */
export async function startProcessStack(options: ProcessStackOptions = {}): Promise<ProcessStack> {
  // Where the gateway reads its policy: API_VERSIONS_FILE, else its default, against its working directory.
  const versionsFile = resolve(
    options.root ?? repoRoot,
    options.gatewayEnv?.API_VERSIONS_FILE ?? process.env.API_VERSIONS_FILE ?? 'ops/versions.json',
  );
  const backend = await startService('backend', { ...backendEnv, ...options.backendEnv }, options.root);
  let gateway: ServiceProcess;
  try {
    gateway = await startGateway(backend.apiUrl, options.gatewayEnv, options.root);
  } catch (err) {
    await backend.stop();
    throw err;
  }
  return {
    backend,
    gateway,
    gatewayUrl: gateway.apiUrl,
    gatewayAdminUrl: gateway.adminUrl,
    backendAdminUrl: backend.adminUrl,
    versionsFile,
    async stop() {
      await Promise.all([gateway.stop(), backend.stop()]);
    },
  };
}
