import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { platformFromSource } from '../../vitest-shared.js';

// `npm run test:containers` (through run.mjs), second part, after the single-replica stacks: the
// fleet tests share one docker-compose.fleet.yml stack (7 services, 9 containers), so they run
// alone on the engine and in their file's order; timeouts sized for a cold build.
export default defineConfig({
  ...platformFromSource,
  test: {
    root: fileURLToPath(new URL('../../..', import.meta.url)),
    include: ['test/containers/fleet/**/*.test.ts'],
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 20 * 60_000,
  },
});
