import { appendFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedGatewayStore } from '../support/gateway-store.js';
import { BANNER, npmUntilBanner, type NpmRun } from './npm-banner.js';
import { copyRepository } from './repository-copy.js';

/**
 * `npm start` says what it does before its banner: its build names each package it compiles and how long the build
 * took, or that there was nothing to compile, then the launcher says it starts the services. In a copy of the
 * repository whose files keep their times and whose gateway has a changed source file, so that the build has one
 * package to compile, then a second time with nothing changed.
 */

/** A gateway compile and the start, on a machine the other suites keep busy. */
const START_MS = 240_000;

let copy: string;
const runs: NpmRun[] = [];

beforeAll(() => {
  copy = copyRepository('npm-start-progress-', [], { keepTimes: true });
  appendFileSync(join(copy, 'gateway/src/main.ts'), '// A change for the build to compile.\n');
});
afterAll(async () => {
  await Promise.all(runs.map((run) => run.stop()));
  if (copy !== undefined) rmSync(copy, { recursive: true, force: true });
});

/** `npm start` in the copy until its banner, its lines before the banner, then its stop. */
async function linesBeforeBanner(): Promise<string[]> {
  const run = await npmUntilBanner(['start', '--silent'], {
    cwd: copy,
    env: { ...sharedGatewayStore(), LOG_LEVEL: 'info' },
    timeoutMs: START_MS,
  });
  runs.push(run);
  const lines = run
    .output()
    .split('\n')
    // The services' own JSON lines (stdout is no terminal here) are theirs, not the build's or the launcher's.
    .filter((line) => !line.startsWith('{'));
  expect(await run.stop()).toBe(0);
  return lines.slice(0, lines.indexOf(BANNER));
}

describe('npm start', { timeout: 2 * START_MS }, () => {
  it('names the package it compiles, then the time the build took, then what it starts', async () => {
    const lines = await linesBeforeBanner();
    const build = lines.filter((line) => line.startsWith('build: '));
    expect(build).toHaveLength(2);
    expect(build[0]).toBe('build: compiling gateway (2 of 4)…');
    expect(build[1]).toMatch(/^build: compiled gateway in \d+\.\d s$/);
    expect(lines.indexOf('starting the backend and the gateway…')).toBeGreaterThan(lines.indexOf(build[1]!));
  });

  it('says the build is up to date when nothing changed since', async () => {
    const lines = await linesBeforeBanner();
    expect(lines.filter((line) => line.startsWith('build: '))).toEqual([
      expect.stringMatching(/^build: up to date \(\d+\.\d s\)$/),
    ]);
    expect(lines).toContain('starting the backend and the gateway…');
  });
});
