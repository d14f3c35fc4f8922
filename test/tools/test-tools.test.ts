import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/paths.mjs';
import { toolStatus } from './tools.mjs';

/**
 * test/tools/test-tools.mjs and test/tools/test-ops.mjs on a PATH that is one empty directory: no promtool, prometheus
 * or kubectl. Where apt-get is wanted, the directory holds a stand-in that records its arguments and, on
 * `install`, writes the package's executables beside itself.
 */

let bin: string;

beforeEach(() => {
  bin = mkdtempSync(join(tmpdir(), 'test-tools-'));
});
afterEach(() => rmSync(bin, { recursive: true, force: true }));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(script: string, env: Record<string, string>): Promise<Run> {
  const environment = { HOME: process.env.HOME ?? '/', PATH: bin, ...env };
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [join(repoRoot, script)], {
      cwd: repoRoot,
      env: environment,
      encoding: 'utf8',
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** A kubectl that prints the version JSON of kubectl 1.32 (kustomize v5), or of an older one. */
const fakeKubectl = (kustomizeVersion = 'v5.5.0'): string =>
  `#!/bin/sh\necho '{"clientVersion":{"gitVersion":"v1.x"},"kustomizeVersion":"${kustomizeVersion}"}'\n`;

function fakeAptGet({ failInstall = false, kustomizeVersion = 'v5.5.0' } = {}): void {
  const executables = { prometheus: ['promtool', 'prometheus'], jq: ['jq'], 'kubernetes-client': ['kubectl'] };
  const script =
    `#!${process.execPath}
const { appendFileSync, writeFileSync } = require('node:fs');
const args = process.argv.slice(2);
appendFileSync(${JSON.stringify(join(bin, 'apt.log'))}, args.join(' ') + '\\n');
if (args.includes('install')) {
  if (${String(failInstall)}) { console.error('E: Unable to locate package'); process.exit(100); }
  const executables = ${JSON.stringify(executables)};
  for (const name of executables[args.at(-1)]) writeFileSync(${JSON.stringify(bin)} + '/' + name, name === ` +
    `'kubectl' ? ${JSON.stringify(fakeKubectl(kustomizeVersion))} : '#!/bin/sh\\n', { mode: 0o755 });
}
`;
  writeFileSync(join(bin, 'apt-get'), script);
  chmodSync(join(bin, 'apt-get'), 0o755);
}

/**
 * The tool step as root twice with what is on PATH: as a developer runs it, where a tool it cannot make
 * usable is skipped (exit 0), and with CI=true, where that fails the run (exit 1).
 */
async function runAsRootWithoutAndWithCi(): Promise<{ skipped: Run; failed: Run }> {
  const skipped = await run('test/tools/test-tools.mjs', { TEST_TOOLS_ROOT: '1' });
  expect(skipped.code).toBe(0);
  const failed = await run('test/tools/test-tools.mjs', { TEST_TOOLS_ROOT: '1', CI: 'true' });
  expect(failed.code).toBe(1);
  return { skipped, failed };
}

describe('test/tools/test-tools.mjs', () => {
  it('as root with apt-get: installs each missing tool with one line per tool, after one apt-get update', async () => {
    fakeAptGet();
    const { code, stdout } = await run('test/tools/test-tools.mjs', { TEST_TOOLS_ROOT: '1', CI: 'true' });
    expect(code).toBe(0);
    expect(stdout).toBe(
      'test tools: prometheus (promtool, prometheus): installed (apt-get install -y --no-install-recommends ' +
        'prometheus)\n' +
        'test tools: jq (jq): installed (apt-get install -y --no-install-recommends jq)\n' +
        'test tools: kubectl (kubectl): installed (apt-get install -y --no-install-recommends kubernetes-client)\n',
    );
    expect(readFileSync(join(bin, 'apt.log'), 'utf8')).toBe(
      '-qq update\n-qq install -y --no-install-recommends prometheus\n-qq install -y --no-install-recommends jq\n' +
        '-qq install -y --no-install-recommends kubernetes-client\n',
    );
  });

  it('finds what is already there and installs nothing', async () => {
    fakeAptGet();
    for (const name of ['promtool', 'prometheus', 'jq']) writeFileSync(join(bin, name), '#!/bin/sh\n', { mode: 0o755 });
    writeFileSync(join(bin, 'kubectl'), fakeKubectl(), { mode: 0o755 });
    const { code, stdout } = await run('test/tools/test-tools.mjs', { TEST_TOOLS_ROOT: '1' });
    expect(code).toBe(0);
    expect(stdout).toBe(
      'test tools: prometheus (promtool, prometheus): found\ntest tools: jq (jq): found\n' +
        'test tools: kubectl (kubectl): found\n',
    );
    expect(existsSync(join(bin, 'apt.log'))).toBe(false);
  });

  it('not root: reports each tool as skipped with the reason and the install command, and passes', async () => {
    fakeAptGet();
    const { code, stdout } = await run('test/tools/test-tools.mjs', { TEST_TOOLS_ROOT: '0' });
    expect(code).toBe(0);
    expect(stdout.split('\n')).toEqual([
      'test tools: prometheus (promtool, prometheus): skipped (not root): promtool and prometheus not found on ' +
        'PATH; to run the promtool checks (npm run test:ops, test/ops/prometheus-fleet-config.test.ts) and the ' +
        "real-Prometheus test (test/ops/prometheus.test.ts), install Debian's prometheus (`sudo apt-get install " +
        '-y --no-install-recommends prometheus`) or run `npm test` as root, which installs it',
      "test tools: jq (jq): skipped (not root): jq not found on PATH; to run the runbook's deprecated-share " +
        "one-liner, run as written (gateway/test/status/runbook-share.process.test.ts), install Debian's jq (`sudo apt-get " +
        'install -y --no-install-recommends jq`) or run `npm test` as root, which installs it',
      'test tools: kubectl (kubectl): skipped (not root): kubectl not found on PATH; to run the Kubernetes manifest ' +
        "checks (kubectl kustomize), install Debian's kubernetes-client (`sudo apt-get install -y " +
        '--no-install-recommends kubernetes-client`) or run `npm test` as root, which installs it',
      '',
    ]);
    expect(existsSync(join(bin, 'apt.log'))).toBe(false);
  });

  it('root without apt-get: skipped, naming that', async () => {
    const { code, stdout } = await run('test/tools/test-tools.mjs', { TEST_TOOLS_ROOT: '1' });
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /^test tools: prometheus \(promtool, prometheus\): skipped \(no apt-get\): promtool and prometheus not found on PATH;/,
    );
  });

  it('with CI=true, a tool it cannot install fails the run (exit 1) and names the tool and the command', async () => {
    const { code, stdout, stderr } = await run('test/tools/test-tools.mjs', { TEST_TOOLS_ROOT: '0', CI: 'true' });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain(
      'test tools: prometheus (promtool, prometheus): MISSING with CI=true (not root): promtool and prometheus not ' +
        'found on PATH;',
    );
    expect(stderr).toContain('`sudo apt-get install -y --no-install-recommends kubernetes-client`');
  });

  it('a kubectl that installs but is too old (Debian 12) is skipped as not usable, or fails with CI=true', async () => {
    fakeAptGet({ kustomizeVersion: 'v2.0.3' });
    const { skipped, failed } = await runAsRootWithoutAndWithCi();
    expect(skipped.stdout).toContain('test tools: kubectl (kubectl): skipped (installed, not usable): ');
    expect(skipped.stdout).toContain('bundles kustomize v2.0.3, deploy/kubernetes needs v5');
    expect(failed.stderr).toContain('test tools: kubectl (kubectl): MISSING with CI=true (installed, not usable): ');
  });

  it("a failed apt-get install shows apt's output and skips, or fails with CI=true", async () => {
    fakeAptGet({ failInstall: true });
    const { skipped, failed } = await runAsRootWithoutAndWithCi();
    expect(skipped.stderr).toContain('E: Unable to locate package');
    expect(skipped.stdout).toContain(
      'test tools: prometheus (promtool, prometheus): skipped (apt-get install failed): ',
    );
    expect(failed.stderr).toContain('test tools: kubectl (kubectl): MISSING with CI=true (apt-get install failed): ');
  });
});

describe('test/tools/test-ops.mjs without promtool', () => {
  it('prints the three promtool checks as skipped, with how to enable them, and passes', async () => {
    const { code, stdout } = await run('test/tools/test-ops.mjs', {});
    expect(code).toBe(0);
    expect(stdout).toBe(
      'test:ops: SKIPPED 3 promtool checks (check config ops/prometheus/prometheus.yml; check rules ' +
        'ops/prometheus/rules.yml; test rules ops/prometheus/rules.test.yml): ' +
        'promtool and prometheus not found on PATH; to run the promtool checks (npm run test:ops, ' +
        'test/ops/prometheus-fleet-config.test.ts) and the real-Prometheus test (test/ops/prometheus.test.ts), ' +
        "install Debian's prometheus (`sudo apt-get install -y --no-install-recommends prometheus`) or run `npm " +
        'test` as root, which installs it\n',
    );
  });

  it('fails with CI=true', async () => {
    const { code, stderr } = await run('test/tools/test-ops.mjs', { CI: 'true' });
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /^test:ops: FAILED with CI=true: 3 promtool checks .* cannot run: promtool and prometheus not found on PATH;/,
    );
  });

  it('runs promtool when it is there and fails with it', async () => {
    writeFileSync(join(bin, 'promtool'), '#!/bin/sh\necho "promtool $*"\nexit 3\n', { mode: 0o755 });
    writeFileSync(join(bin, 'prometheus'), '#!/bin/sh\n', { mode: 0o755 });
    const { code, stdout } = await run('test/tools/test-ops.mjs', {});
    expect(code).toBe(3);
    expect(stdout).toBe('promtool check config ops/prometheus/prometheus.yml\n');
  });
});

describe('toolStatus, what platform/test/support/tools.ts asks before a suite that needs a tool', () => {
  it('finds a tool whose executables are all on PATH', () => {
    writeFileSync(join(bin, 'kubectl'), fakeKubectl(), { mode: 0o755 });
    expect(toolStatus('kubectl', { PATH: bin })).toEqual({ available: true });
  });

  it('refuses a kubectl whose kustomize is older than v5 (Debian 12 ships kubectl 1.20), naming both', () => {
    writeFileSync(join(bin, 'kubectl'), fakeKubectl('v2.0.3'), { mode: 0o755 });
    const status = toolStatus('kubectl', { PATH: bin, CI: 'true' });
    expect(status).toEqual({
      available: false,
      reason: expect.stringContaining('bundles kustomize v2.0.3, deploy/kubernetes needs v5') as string,
      mustFail: true,
    });
  });

  it(
    'names the missing executables, what needs them and the install command; a skip, or a failure with ' + 'CI=true',
    () => {
      writeFileSync(join(bin, 'promtool'), '#!/bin/sh\n', { mode: 0o755 });
      writeFileSync(join(bin, 'prometheus'), 'not executable\n', { mode: 0o644 });
      const reason =
        'prometheus not found on PATH; to run the promtool checks (npm run test:ops, ' +
        'test/ops/prometheus-fleet-config.test.ts) and the real-Prometheus test (test/ops/prometheus.test.ts), ' +
        "install Debian's prometheus (`sudo apt-get install -y --no-install-recommends prometheus`) or run `npm " +
        'test` ' +
        'as root, which installs it';
      expect(toolStatus('prometheus', { PATH: bin })).toEqual({ available: false, reason, mustFail: false });
      expect(toolStatus('prometheus', { PATH: bin, CI: 'true' })).toEqual({ available: false, reason, mustFail: true });
    },
  );
});
