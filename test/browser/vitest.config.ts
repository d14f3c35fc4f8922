import { defineConfig } from 'vitest/config';
import { gatewayStoreSetup, platformFromSource } from '../vitest-shared.js';

// `npm run test:browser` only: it needs Debian's chromium (apt-get install -y chromium), which `.ci/run` installs.
export default defineConfig({
  ...platformFromSource,
  test: {
    globalSetup: [gatewayStoreSetup],
    include: ['test/browser/**/*.browser.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
