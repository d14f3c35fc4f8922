import { fileURLToPath } from 'node:url';
import { defaultServerConditions } from 'vite';
import type { ViteUserConfig } from 'vitest/config';

/**
 * Every test run reads @version-router/platform from its TypeScript sources (the package's "source" export
 * condition) instead of its compiled dist/, so a change to the platform is tested without a build.
 */
export const platformFromSource: Pick<ViteUserConfig, 'ssr'> = {
  ssr: { resolve: { conditions: ['source', ...defaultServerConditions] } },
};

/** The embedded PostgreSQL the gateway processes of a run share as their consumer store (support/gateway-store.ts). */
export const gatewayStoreSetup: string = fileURLToPath(new URL('./support/gateway-store.ts', import.meta.url));
