import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { platformFromSource } from '../vitest-shared.js';

// `npm run test:containers` (through run.mjs): builds the images and starts the compose stack
// once for the whole suite, so one file, no parallelism, and timeouts sized for a cold build.
export default defineConfig({
  ...platformFromSource,
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/containers/**/*.test.ts'],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 20 * 60_000,
  },
});
