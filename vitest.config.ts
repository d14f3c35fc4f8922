import { defineConfig } from 'vitest/config';
import { platformFromSource } from './test/vitest-shared.js';

export default defineConfig({
  ...platformFromSource,
  test: {
    include: ['platform/**/*.test.ts', 'services/**/*.test.ts', 'gateway/**/*.test.ts', 'test/**/*.test.ts'],
    // test/hostile has its own run (npm run test:hostile): it must not share the machine with timed suites.
    exclude: ['node_modules/**', 'dist/**', 'test/containers/**', 'test/hostile/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
