import { defineConfig } from 'vitest/config';
import { gatewayStoreSetup, platformFromSource } from '../vitest-shared.js';

// `npm run test:hostile`: the abuse suite loads the machine (500 connections, 10,000 requests) and asserts
// timings, so its files run one after another and apart from the main suite.
export default defineConfig({
  ...platformFromSource,
  test: {
    globalSetup: [gatewayStoreSetup],
    include: ['test/hostile/**/*.test.ts'],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
