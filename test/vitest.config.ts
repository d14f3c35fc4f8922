import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { gatewayStoreSetup, platformFromSource } from './vitest-shared.js';

/**
 * The suites that run apart from `npm test` (whose run is the root vitest.config.ts), one project each, run one at a
 * time with `--project <name>` by their npm scripts. A file's suffix names its project: `.hostile.ts`,
 * `.browser.ts`, `.soak.ts`, `.container.ts`.
 */
export default defineConfig({
  ...platformFromSource,
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    // Each of these loads the machine (or the Docker engine) by itself: its files run one after another. Those that
    // start gateway processes give them one shared consumer store (test/support/gateway-store.ts).
    fileParallelism: false,
    projects: [
      {
        extends: true,
        // `npm run test:hostile`: the abuse suite opens 500 connections and sends 10,000 requests and asserts
        // timings, so it runs apart from the timed suites of `npm test`.
        test: {
          name: 'hostile',
          globalSetup: [gatewayStoreSetup],
          include: ['test/hostile/**/*.hostile.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        // `npm run test:browser`: needs Debian's chromium (apt-get install -y chromium), which `.ci/run` installs.
        test: {
          name: 'browser',
          globalSetup: [gatewayStoreSetup],
          include: ['test/browser/**/*.browser.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
        // `npm run test:soak`: a minute of load is too slow for `npm test`.
        test: {
          name: 'soak',
          globalSetup: [gatewayStoreSetup],
          include: ['test/soak/**/*.soak.ts'],
          testTimeout: 180_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        // `npm run test:containers` (test/containers/run.mjs), first: the single-replica stacks, one compose project
        // per
        // file; timeouts sized for a cold image build.
        test: {
          name: 'containers',
          include: ['test/containers/*.container.ts'],
          testTimeout: 120_000,
          hookTimeout: 20 * 60_000,
        },
      },
      {
        extends: true,
        // Then, in a run of its own after the stacks: the fleet's tests share one docker-compose.fleet.yml stack (7
        // services, 9 containers), so they run alone on the engine, in their file's order.
        test: {
          name: 'fleet',
          include: ['test/containers/fleet/**/*.container.ts'],
          testTimeout: 180_000,
          hookTimeout: 20 * 60_000,
        },
      },
    ],
  },
});
