import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { entries, nodeFlags, repoRoot } from '../../scripts/paths.mjs';
import { eventually } from '../support/eventually.mjs';
import { freeLoopbackPort } from '../support/free-port.js';
import { sharedGatewayStore } from '../support/gateway-store.js';

/**
 * `npm start` (built first) as a user runs it, spawned in a process group of its own on free loopback ports:
 * signals to npm (the top process a user sees) and to its whole group, then no process of the stack is left.
 * Read from /proc, so Linux only, as the rest of the suite.
 */

interface RunningStart {
  npm: ChildProcess;
  /** npm, the launcher and both services. */
  pids: { npm: number; launcher: number; gateway: number; backend: number };
  output: () => string;
  /** npm's exit code or signal. */
  npmExited: Promise<number | string>;
  /** Every process that writes to the output pipes has closed them. */
  outputEnded: Promise<void>;
  gatewayUrl: string;
  gatewayAdminUrl: string;
}

let policyDir: string;
let running: RunningStart | undefined;

afterEach(() => {
  // A failed case must not leave its processes listening on the machine.
  for (const pid of Object.values(running?.pids ?? {})) if (alive(pid)) process.kill(pid, 'SIGKILL');
  running = undefined;
  rmSync(policyDir, { recursive: true, force: true });
});

/** A running process, not a zombie waiting for its parent. */
function alive(pid: number): boolean {
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return false;
  try {
    return readFileSync(stat, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

function childrenOf(pid: number): { pid: number; args: string }[] {
  const path = `/proc/${pid}/task/${pid}/children`;
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .trim()
    .split(/\s+/)
    .filter((child) => child !== '')
    .map((child) => ({ pid: Number(child), args: readFileSync(`/proc/${child}/cmdline`, 'utf8').replaceAll('\0', ' ') }));
}

/** How long a test here waits for a process to start, log or end (`eventually`): the machine may be busy. */
const IN_TIME = { timeoutMs: 25_000 };

/** Thrown when a port found free was taken before a service listened on it. */
class PortTakenMeanwhile extends Error {}

/**
 * A port found free can be taken before npm start listens on it, seconds later: the parallel suites' own
 * connections draw their local ports from the same ephemeral range. Then a service ends with EADDRINUSE and
 * the start is tried again on other ports; any other failure fails the test.
 */
async function startNpm(): Promise<RunningStart> {
  policyDir = mkdtempSync(join(tmpdir(), 'npm-start-signals-'));
  const policyFile = join(policyDir, 'versions.json');
  writeFileSync(policyFile, readFileSync(join(repoRoot, 'ops/versions.json')));
  for (let attempt = 1; ; attempt++) {
    try {
      return await startNpmOnce(policyFile);
    } catch (error) {
      if (!(error instanceof PortTakenMeanwhile) || attempt === 3) throw error;
    }
  }
}

async function startNpmOnce(policyFile: string): Promise<RunningStart> {
  const [gatewayPort, gatewayAdminPort, backendPort, backendAdminPort] = [await freeLoopbackPort(), await freeLoopbackPort(), await freeLoopbackPort(), await freeLoopbackPort()];
  const env = {
    ...process.env,
    GATEWAY_HOST: '127.0.0.1',
    GATEWAY_PORT: String(gatewayPort),
    GATEWAY_ADMIN_PORT: String(gatewayAdminPort),
    BACKEND_PORT: String(backendPort),
    BACKEND_ADMIN_PORT: String(backendAdminPort),
    BACKEND_URL: `http://127.0.0.1:${backendPort}`,
    API_VERSIONS_FILE: policyFile,
    // The edit of the policy file must reach the gateway through the signal under test, not its file watch.
    API_VERSIONS_WATCH: 'false',
    LOG_LEVEL: 'info',
    ...sharedGatewayStore(),
  };
  // --ignore-scripts skips the prestart build: the suite runs on a built tree, and the build is not under test.
  const npm = spawn('npm', ['start', '--silent', '--ignore-scripts'], { cwd: repoRoot, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const npmExited = new Promise<number | string>((resolve) => npm.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  const outputEnded = Promise.all([npm.stdout, npm.stderr].map((stream) => new Promise((resolve) => stream.once('close', resolve)))).then(() => undefined);
  try {
    await eventually('the start banner', () => {
      if (npm.exitCode !== null || npm.signalCode !== null) throw new Error(`npm start ended (${npm.exitCode ?? npm.signalCode}) before its banner`);
      return output.includes('Press Ctrl-C to stop.');
    }, IN_TIME);
  } catch (error) {
    // The services stop by themselves once their launcher is gone. The group may be gone already (npm ended):
    // that must not hide why the start failed.
    try {
      if (npm.pid !== undefined) process.kill(-npm.pid, 'SIGKILL');
    } catch {
      // ESRCH: nothing of the group is left to stop.
    }
    const Failure = output.includes('EADDRINUSE') ? PortTakenMeanwhile : Error;
    throw new Failure(`${(error as Error).message}:\n${output}`);
  }
  const npmPid = npm.pid ?? 0;
  const [launcher] = childrenOf(npmPid).filter(({ args }) => args.includes('scripts/start.mjs'));
  if (launcher === undefined) throw new Error(`no launcher under npm (${npmPid}):\n${output}`);
  const services = childrenOf(launcher.pid);
  const pidOf = (entry: string) => services.find(({ args }) => args.includes(entry))?.pid ?? 0;
  const pids = { npm: npmPid, launcher: launcher.pid, gateway: pidOf(entries.gateway), backend: pidOf(entries.backend) };
  return { npm, pids, output: () => output, npmExited, outputEnded, gatewayUrl: `http://127.0.0.1:${gatewayPort}`, gatewayAdminUrl: `http://127.0.0.1:${gatewayAdminPort}` };
}

type Target = 'npm' | 'group';
function send(stack: RunningStart, target: Target, signal: NodeJS.Signals): void {
  process.kill(target === 'npm' ? stack.pids.npm : -stack.pids.npm, signal);
}

/** JSON log lines of one service with the given message. */
function logged(stack: RunningStart, service: 'gateway' | 'users-orders', msg: string): Record<string, unknown>[] {
  return stack
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry.service === service && entry.msg === msg);
}

async function nothingLeft(stack: RunningStart): Promise<void> {
  await eventually(
    'every process of the stack to end',
    () => Object.values(stack.pids).every((pid) => !alive(pid)),
    IN_TIME,
  );
  await stack.outputEnded;
}

// Each case starts npm and both services: generous bounds, the machine may be busy with the other suites.
describe('npm start', { timeout: 60_000 }, () => {
  it('names the API, the metrics, the status page and the gateway pid in its banner, and runs each service with its node flags', async () => {
    running = await startNpm();
    const { pids } = running;
    expect(Object.values(pids).every((pid) => pid > 0 && alive(pid))).toBe(true);
    for (const name of ['backend', 'gateway'] as const) {
      const argv = readFileSync(`/proc/${pids[name]}/cmdline`, 'utf8').split('\0').slice(1, -1);
      expect(argv, name).toEqual([...nodeFlags[name], entries[name]]);
    }
    const port = new URL(running.gatewayAdminUrl).port;
    expect(running.output()).toContain(`Metrics:     http://localhost:${port}/metrics\n`);
    expect(running.output()).toContain(`Status page: http://localhost:${port}/\n`);
    expect(running.output()).toContain(`Gateway pid: ${pids.gateway}  (kill -HUP ${pids.gateway}, or a SIGHUP to npm start, re-reads the version policy)\n`);
    expect(running.output()).toMatch(/^API: {9}http:\/\/localhost:\d+ {2}\(try: curl -i localhost:\d+\/v1\/orders\/ord-1001\)$/m);
    send(running, 'npm', 'SIGTERM');
    await nothingLeft(running);
  });

  it.each<[Target, NodeJS.Signals]>([
    ['npm', 'SIGTERM'],
    ['npm', 'SIGINT'],
    ['group', 'SIGTERM'],
    ['group', 'SIGINT'],
  ])('%s gets %s: both services drain and stop, npm exits 0, nothing is left', async (target, signal) => {
    running = await startNpm();
    send(running, target, signal);
    expect(await running.npmExited).toBe(0);
    await nothingLeft(running);
    for (const service of ['gateway', 'users-orders'] as const) {
      expect(logged(running, service, 'shutting down').map(({ signal: received }) => received)).toEqual([signal]);
      expect(logged(running, service, 'stopped')).toHaveLength(1);
    }
  });

  it.each<Target>(['npm', 'group'])('%s gets SIGHUP: the gateway re-reads the policy file, the backend keeps running; a SIGTERM then stops all', async (target) => {
    running = await startNpm();
    const policyFile = join(policyDir, 'versions.json');
    const policy = JSON.parse(readFileSync(policyFile, 'utf8')) as { default_version: number };
    writeFileSync(policyFile, JSON.stringify({ ...policy, default_version: 2 }));
    send(running, target, 'SIGHUP');
    const stack = running;
    await eventually('the reload', () => logged(stack, 'gateway', 'version policy reloaded').length > 0, IN_TIME);
    const versions = (await (await fetch(`${stack.gatewayUrl}/versions`)).json()) as { default_version: number };
    expect(versions.default_version).toBe(2);
    expect(logged(stack, 'gateway', 'version policy reloaded')).toHaveLength(1);
    // npm dies of a SIGHUP (it does not pass it on); the launcher outlives it and keeps both services.
    expect(await stack.npmExited).toBe('SIGHUP');
    expect([stack.pids.launcher, stack.pids.gateway, stack.pids.backend].every(alive)).toBe(true);
    expect(logged(stack, 'users-orders', 'shutting down')).toEqual([]);
    await eventually(
      'the launcher to name its pid',
      () => stack.output().includes(`stop the stack with: kill ${stack.pids.launcher}\n`),
      IN_TIME,
    );
    process.kill(stack.pids.launcher, 'SIGTERM');
    await nothingLeft(stack);
    for (const service of ['gateway', 'users-orders'] as const) expect(logged(stack, service, 'stopped')).toHaveLength(1);
  });

  it('the group gets SIGKILL: the services see their launcher gone, drain and stop', async () => {
    running = await startNpm();
    send(running, 'group', 'SIGKILL');
    await nothingLeft(running);
    for (const service of ['gateway', 'users-orders'] as const) {
      expect(logged(running, service, 'shutting down').map(({ launcher }) => launcher)).toEqual(['gone']);
      expect(logged(running, service, 'stopped')).toHaveLength(1);
    }
  });
});
