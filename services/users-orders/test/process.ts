import { entries } from '../../../scripts/paths.mjs';
import { startService, type ServiceProcess } from '../../../platform/test/support/service-process.js';

export const builtMain = entries.backend;

/** The built backend on ephemeral loopback ports, started by the same harness as the end-to-end suite. */
export function startBackend(env: Record<string, string> = {}): Promise<ServiceProcess> {
  return startService('backend', { BACKEND_HOST: '127.0.0.1', BACKEND_PORT: '0', BACKEND_ADMIN_PORT: '0', ...env });
}
