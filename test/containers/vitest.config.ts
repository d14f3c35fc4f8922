import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { platformFromSource } from '../vitest-shared.js';

// `npm run test:containers` (through run.mjs), first part: the single-replica stacks (stack.test.ts
// and the PostgreSQL variant), one compose project per file, one file at a time (2 cores), and
// timeouts sized for a cold build. The fleet has its own run after this one: fleet/vitest.config.ts.
export default defineConfig({
  ...platformFromSource,
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/containers/*.test.ts'],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 20 * 60_000,
  },
});
