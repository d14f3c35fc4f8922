import { availableParallelism } from 'node:os';
import { basename } from 'node:path';
import { defineConfig } from 'vitest/config';
import rootPackage from './package.json' with { type: 'json' };
import { gatewayStoreSetup, platformFromSource } from './test/vitest-shared.js';

/**
 * `npm test`'s run, and `npx vitest run <path>` while working: each package's tests and the root test/ suites that
 * span processes, every file named `*.test.ts`. The suites that run apart from it have test/vitest.config.ts.
 */

/**
 * They copy and build the repository (tsc, a CPU-bound child process the worker pool does not count), so they
 * run after every other file instead of beside the timed suites.
 */
const COPY_AND_BUILD = [
  'test/e2e/adding-version-3.test.ts',
  'test/e2e/adding-a-resource.test.ts',
  'test/e2e/both-recipes.test.ts',
  'test/e2e/npm-start-progress.test.ts',
];

/** The workspace packages, whose tests live beside their sources (<dir>/test); a project each, named as the folder. */
const WORKSPACE_PACKAGES = rootPackage.workspaces.map((dir) => ({ name: basename(dir), dir }));

/**
 * A package's test file that starts a process (a child process, an embedded PostgreSQL, the embedded store's
 * programs, npm or tsc) or waits on real time for seconds is named `*.process.test.ts`: it runs in the package's
 * `<name>-processes` project, so that the package's own suite (`npm test -w <package>`) stays fast
 * (docs/testing.md#fast-suites-and-process-suites).
 */
const PROCESS_TESTS = 'test/**/*.process.test.ts';

export default defineConfig({
  ...platformFromSource,
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // One worker more than the cores (vitest's default is one a core): the process suites spend much of their time
    // waiting on the processes and PostgreSQL servers they started, which left a 2-core machine's CPU partly idle
    // (docs/testing.md#npm-test-timed).
    maxWorkers: availableParallelism() + 1,
    projects: [
      // Two projects per workspace package: its fast tests, which `npm test -w <package>` (vitest run --project
      // <name>) runs alone, and its tests that start processes (`--project <name>-processes`).
      ...WORKSPACE_PACKAGES.flatMap(({ name, dir }) => [
        {
          extends: true as const,
          test: {
            name,
            include: [`${dir}/test/**/*.test.ts`],
            exclude: [`${dir}/${PROCESS_TESTS}`],
            // The files of a worker share one module graph: loading Fastify and the sources once per worker, not
            // once per file, is most of the suite's time saved. So a fast test leaves no state behind: no
            // vi.mock, stubbed global or timers left faked (docs/testing.md#fast-suites-and-process-suites).
            isolate: false,
            sequence: { groupOrder: 0 },
          },
        },
        {
          extends: true as const,
          test: { name: `${name}-processes`, include: [`${dir}/${PROCESS_TESTS}`], sequence: { groupOrder: 0 } },
        },
      ]),
      {
        extends: true,
        test: {
          name: 'main',
          // The gateway processes these suites start share one consumer store (test/support/gateway-store.ts); the
          // packages' tests start no gateway that opens one.
          globalSetup: [gatewayStoreSetup],
          // The root test/ suites that span processes. Those that run apart from `npm test` (hostile clients, browser,
          // soak, containers) have suffixes of their own and their own config, test/vitest.config.ts.
          include: ['test/**/*.test.ts'],
          exclude: COPY_AND_BUILD,
          sequence: { groupOrder: 0 },
        },
      },
      // One after the other: each builds a copy.
      ...COPY_AND_BUILD.map((file, index) => ({
        extends: true as const,
        test: {
          name: file.replace(/^.*\/|\.test\.ts$/g, ''),
          include: [file],
          globalSetup: [gatewayStoreSetup],
          sequence: { groupOrder: index + 1 },
        },
      })),
    ],
  },
});
