import { defineConfig } from 'vitest/config';
import { platformFromSource } from './test/vitest-shared.js';

/**
 * It copies and builds the repository (tsc, a CPU-bound child process the worker pool does not count), so it
 * runs after every other file instead of beside the timed suites.
 */
const ADDING_VERSION_3 = 'test/e2e/adding-version-3.e2e.test.ts';

export default defineConfig({
  ...platformFromSource,
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'main',
          include: ['platform/**/*.test.ts', 'services/**/*.test.ts', 'gateway/**/*.test.ts', 'test/**/*.test.ts'],
          // test/hostile has its own run (npm run test:hostile): it must not share the machine with timed suites.
          exclude: ['node_modules/**', 'dist/**', 'test/containers/**', 'test/hostile/**', ADDING_VERSION_3],
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'adding-version-3', include: [ADDING_VERSION_3], sequence: { groupOrder: 1 } } },
    ],
  },
});
