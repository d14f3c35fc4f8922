import { defineConfig } from 'vitest/config';
import { gatewayStoreSetup, platformFromSource } from './test/vitest-shared.js';

/**
 * They copy and build the repository (tsc, a CPU-bound child process the worker pool does not count), so they
 * run after every other file instead of beside the timed suites.
 */
const DOCS_SECTION_CHECKS = ['test/e2e/adding-version-3.e2e.test.ts', 'test/e2e/adding-a-resource.e2e.test.ts'];

export default defineConfig({
  ...platformFromSource,
  test: {
    globalSetup: [gatewayStoreSetup],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'main',
          include: ['platform/**/*.test.ts', 'services/**/*.test.ts', 'gateway/**/*.test.ts', 'test/**/*.test.ts'],
          // test/hostile has its own run (npm run test:hostile): it must not share the machine with timed suites.
          exclude: ['node_modules/**', 'dist/**', 'test/containers/**', 'test/hostile/**', ...DOCS_SECTION_CHECKS],
          sequence: { groupOrder: 0 },
        },
      },
      // One after the other: each builds a copy.
      ...DOCS_SECTION_CHECKS.map((file, index) => ({ extends: true as const, test: { name: file.replace(/^.*\/|\.e2e\.test\.ts$/g, ''), include: [file], sequence: { groupOrder: index + 1 } } })),
    ],
  },
});
