import { defineConfig } from 'vitest/config';
import { gatewayStoreSetup, platformFromSource } from '../vitest-shared.js';

// `npm run test:soak` only: a minute of load is too slow for `npm test`.
export default defineConfig({
  ...platformFromSource,
  test: {
    globalSetup: [gatewayStoreSetup],
    include: ['test/soak/**/*.soak.ts'],
    testTimeout: 180_000,
    hookTimeout: 60_000,
  },
});
