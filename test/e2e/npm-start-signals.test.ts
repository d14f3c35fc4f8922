import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { entries, nodeFlags, repoRoot } from '../../scripts/paths.mjs';
import { eventually } from '../../platform/test/support/eventually.mjs';
import { freeLoopbackPort } from '../../platform/test/support/free-port.js';
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
    .map((child) => ({
      pid: Number(child),
      args: readFileSync(`/proc/${child}/cmdline`, 'utf8').replaceAll('\0', ' '),
    }));
}

/** How long a test here waits for a process to start, log or end (`eventually`): the machine may be busy. */
const IN_TIME = { timeoutMs: 25_000 };

/** Every process under `pid`, children's children included, with its command line; [] for what ended meanwhile. */
function descendantsOf(pid: number): { pid: number; args: string }[] {
  const read = (path: string): string => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return '';
    }
  };
  const children = read(`/proc/${pid}/task/${pid}/children`)
    .split(/\s+/)
    .filter((child) => child !== '')
    .map(Number);
  return children.flatMap((child) => [
    { pid: child, args: read(`/proc/${child}/cmdline`).replaceAll('\0', ' ') },
    ...descendantsOf(child),
  ]);
}

/**
 * The pids of `pids` that still exist, zombies included: checked once, at the instant npm has exited, for what
 * it started must have exited before it, not a second later.
 */
function stillThere(pids: Iterable<number>): number[] {
  return [...pids].filter((pid) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code !== 'ESRCH';
    }
  });
}

/** Thrown when a port found free was taken before a service listened on it. */
class PortTakenMeanwhile extends Error {}

/**
 * A port found free can be taken before npm start listens on it, seconds later: the parallel suites' own
 * connections draw their local ports from the same ephemeral range. Then a service ends with EADDRINUSE and
 * the start is tried again on other ports; any other failure fails the test.
 */
async function startNpm(extraEnv: NodeJS.ProcessEnv = {}): Promise<RunningStart> {
  const policyFile = policyFileCopy();
  for (let attempt = 1; ; attempt++) {
    try {
      return await startNpmOnce(policyFile, extraEnv);
    } catch (error) {
      if (!(error instanceof PortTakenMeanwhile) || attempt === 3) throw error;
    }
  }
}

/** The shipped policy in a new directory of the test's own (policyDir, removed after each test). */
function policyFileCopy(): string {
  policyDir = mkdtempSync(join(tmpdir(), 'npm-start-signals-'));
  const policyFile = join(policyDir, 'versions.json');
  writeFileSync(policyFile, readFileSync(join(repoRoot, 'ops/versions.json')));
  return policyFile;
}

/** `npm start` in a process group of its own, its output collected. */
function spawnNpm(env: NodeJS.ProcessEnv): Pick<RunningStart, 'npm' | 'output' | 'npmExited' | 'outputEnded'> {
  // --ignore-scripts skips the prestart build: the suite runs on a built tree, and the build is not under test.
  const npm = spawn('npm', ['start', '--silent', '--ignore-scripts'], {
    cwd: repoRoot,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const npmExited = new Promise<number | string>((resolve) =>
    npm.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  const outputEnded = Promise.all(
    [npm.stdout, npm.stderr].map((stream) => new Promise((resolve) => stream.once('close', resolve))),
  ).then(() => undefined);
  return { npm, output: () => output, npmExited, outputEnded };
}

/** npm start's environment on free loopback ports, with the policy file given and the run's shared store. */
async function stackEnv(
  policyFile: string,
): Promise<{ env: NodeJS.ProcessEnv; gatewayPort: number; gatewayAdminPort: number }> {
  const [gatewayPort, gatewayAdminPort, backendPort, backendAdminPort] = [
    await freeLoopbackPort(),
    await freeLoopbackPort(),
    await freeLoopbackPort(),
    await freeLoopbackPort(),
  ];
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
  return { env, gatewayPort, gatewayAdminPort };
}

async function startNpmOnce(policyFile: string, extraEnv: NodeJS.ProcessEnv): Promise<RunningStart> {
  const { env, gatewayPort, gatewayAdminPort } = await stackEnv(policyFile);
  const { npm, output, npmExited, outputEnded } = spawnNpm({ ...env, ...extraEnv });
  try {
    await eventually(
      'the start banner',
      () => {
        if (npm.exitCode !== null || npm.signalCode !== null)
          throw new Error(`npm start ended (${npm.exitCode ?? npm.signalCode}) before its banner`);
        return output().includes('Press Ctrl-C to stop.');
      },
      IN_TIME,
    );
  } catch (error) {
    // The services stop by themselves once their launcher is gone. The group may be gone already (npm ended):
    // that must not hide why the start failed.
    try {
      if (npm.pid !== undefined) process.kill(-npm.pid, 'SIGKILL');
    } catch {
      // ESRCH: nothing of the group is left to stop.
    }
    const Failure = output().includes('EADDRINUSE') ? PortTakenMeanwhile : Error;
    throw new Failure(`${(error as Error).message}:\n${output()}`);
  }
  const npmPid = npm.pid ?? 0;
  const [launcher] = childrenOf(npmPid).filter(({ args }) => args.includes('scripts/start.mjs'));
  if (launcher === undefined) throw new Error(`no launcher under npm (${npmPid}):\n${output()}`);
  const services = childrenOf(launcher.pid);
  const pidOf = (entry: string) => services.find(({ args }) => args.includes(entry))?.pid ?? 0;
  const pids = {
    npm: npmPid,
    launcher: launcher.pid,
    gateway: pidOf(entries.gateway),
    backend: pidOf(entries.backend),
  };
  return {
    npm,
    pids,
    output,
    npmExited,
    outputEnded,
    gatewayUrl: `http://127.0.0.1:${gatewayPort}`,
    gatewayAdminUrl: `http://127.0.0.1:${gatewayAdminPort}`,
  };
}

type Target = 'npm' | 'group';
function send(stack: RunningStart, target: Target, signal: NodeJS.Signals): void {
  process.kill(target === 'npm' ? stack.pids.npm : -stack.pids.npm, signal);
}

/** JSON log lines of one service with the given message. */
function logged(
  stack: Pick<RunningStart, 'output'>,
  service: 'gateway' | 'users-orders',
  msg: string,
): Record<string, unknown>[] {
  return logLines(stack).filter((entry) => entry.service === service && entry.msg === msg);
}

function logLines(stack: Pick<RunningStart, 'output'>): Record<string, unknown>[] {
  return stack
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Where a service's first line with this message is among all JSON lines; -1 when it has none. */
function lineIndex(stack: RunningStart, service: 'gateway' | 'users-orders', msg: string): number {
  return logLines(stack).findIndex((entry) => entry.service === service && entry.msg === msg);
}

/** A POST of `body` with `Expect: 100-continue`: resolves once the server asked for the body, with a writer for it. */
async function beginUpload(
  url: string,
  body: string,
): Promise<{ send: (part: string) => void; end: (part: string) => Promise<{ status: number; body: string }> }> {
  const upload = request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' },
  });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    upload.once('error', reject);
    upload.once('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
  });
  const continued = new Promise<void>((resolve) => upload.once('continue', resolve));
  upload.flushHeaders();
  await Promise.race([continued, answer]);
  return {
    send: (part) => upload.write(part),
    end: (part) => {
      upload.end(part);
      return answer;
    },
  };
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
  it(
    'names the API, the metrics, the status page and the gateway pid in its banner, and runs each service with its ' +
      'node flags',
    async () => {
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
      expect(running.output()).toContain(
        `Gateway pid: ${pids.gateway}  (kill -HUP ${pids.gateway} re-reads the version policy; a SIGHUP to npm does ` +
          `too, but npm exits of it and the stack runs on without it)\n`,
      );
      expect(running.output()).toMatch(
        /^API: {9}http:\/\/localhost:\d+ {2}\(try: curl -i localhost:\d+\/v1\/orders\/ord-1001\)$/m,
      );
      // The launcher asks a service that answered ready no more: the backend, ready first, logs one ready answer
      // before the banner, not one every 100 ms until the gateway is ready too.
      const readyAnswers = running
        .output()
        .split('\n')
        .filter((line) => line.includes('"service":"users-orders"') && line.includes('"url":"/readyz"'))
        .filter((line) => line.includes('"statusCode":200'));
      expect(readyAnswers).toHaveLength(1);
      send(running, 'npm', 'SIGTERM');
      await nothingLeft(running);
    },
  );

  it.each<[Target, NodeJS.Signals]>([
    ['npm', 'SIGTERM'],
    ['npm', 'SIGINT'],
    ['group', 'SIGTERM'],
    ['group', 'SIGINT'],
  ])(
    '%s gets %s: the gateway drains and stops, then the backend; npm exits 0, nothing is left',
    async (target, signal) => {
      running = await startNpm();
      const started = [running.pids.npm, ...descendantsOf(running.pids.npm).map(({ pid }) => pid)];
      send(running, target, signal);
      expect(await running.npmExited).toBe(0);
      // At the instant npm has exited, not a moment later: everything it started has exited before it.
      expect(stillThere(started)).toEqual([]);
      await running.outputEnded;
      for (const service of ['gateway', 'users-orders'] as const) {
        expect(logged(running, service, 'shutting down').map(({ signal: received }) => received)).toEqual([signal]);
        expect(logged(running, service, 'stopped')).toHaveLength(1);
      }
      expect(lineIndex(running, 'gateway', 'stopped')).toBeLessThan(
        lineIndex(running, 'users-orders', 'shutting down'),
      );
    },
  );

  it(
    'an upload still arriving when npm gets SIGTERM reaches the backend: 201, and the backend stops only after the ' +
      'gateway',
    async () => {
      running = await startNpm();
      const stack = running;
      const body = JSON.stringify({ name: 'Ada Upload', email: 'ada.upload@example.com' });
      // 100 Continue: the gateway has read the request's head, so the upload is in flight when the signal comes.
      const upload = await beginUpload(`${stack.gatewayUrl}/api/users`, body);
      upload.send(body.slice(0, 10));
      send(stack, 'npm', 'SIGTERM');
      await eventually(
        'the gateway to begin its stop',
        () => logged(stack, 'gateway', 'shutting down').length > 0,
        IN_TIME,
      );
      const answer = await upload.end(body.slice(10));
      expect(answer.status, answer.body).toBe(201);
      expect(JSON.parse(answer.body)).toMatchObject({ name: 'Ada Upload', email: 'ada.upload@example.com' });
      expect(await stack.npmExited).toBe(0);
      await nothingLeft(stack);
      expect(lineIndex(stack, 'gateway', 'stopped')).toBeLessThan(lineIndex(stack, 'users-orders', 'shutting down'));
    },
  );

  it(
    'a failed start (a malformed ORDERS_FILE) stops the gateway and its embedded store before npm exits 1',
    { timeout: 240_000 },
    async () => {
      const policyFile = policyFileCopy();
      const ordersFile = join(policyDir, 'orders.json');
      writeFileSync(ordersFile, '[{');
      const { env } = await stackEnv(policyFile);
      // No DATABASE_URL: the gateway opens the embedded store in a new directory, which creates it first.
      const stack = spawnNpm({
        ...env,
        ORDERS_FILE: ordersFile,
        DATABASE_URL: '',
        GATEWAY_DATA_DIR: join(policyDir, 'gateway-data'),
      });
      const npmPid = stack.npm.pid ?? 0;
      const seen = new Map<number, string>([[npmPid, 'npm']]);
      let exitCode: number | string | undefined;
      void stack.npmExited.then((code) => (exitCode = code));
      try {
        // Every process npm started at any time, its grandchildren (the embedded store's) included.
        while (exitCode === undefined) {
          // A process just forked shows its parent's command line until it has exec'd, one that is ending an empty
          // one: the last non-empty one read is kept.
          for (const { pid, args } of descendantsOf(npmPid)) if (args !== '' || !seen.has(pid)) seen.set(pid, args);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        expect(stillThere(seen.keys()), [...seen.values()].join('\n')).toEqual([]);
      } finally {
        for (const pid of stillThere(seen.keys())) process.kill(pid, 'SIGKILL');
      }
      expect(exitCode).toBe(1);
      const started = [...seen.entries()].map(([pid, args]) => `${pid} ${args.slice(0, 120)}`).join('\n');
      expect([...seen.values()].filter((args) => args.includes('database/embedded/')).length, started).toBeGreaterThan(
        0,
      );
      await stack.outputEnded;
      expect(stack.output()).toMatch(/^invalid configuration: ORDERS_FILE: .* is not valid JSON/m);
      expect(stack.output()).toContain('backend stopped unexpectedly (exit code 1); stopping the stack\n');
      expect(logged(stack, 'gateway', 'shutting down').map(({ signal }) => signal)).toEqual(['SIGTERM']);
      expect(logged(stack, 'gateway', 'stopped')).toHaveLength(1);
    },
  );

  it.each<Target>(['npm', 'group'])(
    '%s gets SIGHUP: the gateway re-reads the policy file, the backend keeps running; a SIGTERM then stops all',
    async (target) => {
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
      for (const service of ['gateway', 'users-orders'] as const)
        expect(logged(stack, service, 'stopped')).toHaveLength(1);
    },
  );

  it('a fatal error in the gateway: it exits 1, the launcher stops the backend, npm exits 1', async () => {
    // test/support/fault-injection.mjs: a request with X-Test-Fault: uncaught makes the process that takes it throw.
    const faultInjection = pathToFileURL(join(repoRoot, 'test/support/fault-injection.mjs')).href;
    running = await startNpm({ NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${faultInjection}`.trim() });
    const stack = running;
    const { hostname, port } = new URL(stack.gatewayUrl);
    const socket = connect({ host: hostname, port: Number(port) });
    socket.on('error', () => undefined);
    socket.write('GET /api/users HTTP/1.1\r\nHost: test\r\nX-Test-Fault: uncaught\r\n\r\n');
    expect(await stack.npmExited).toBe(1);
    await nothingLeft(stack);
    expect(stack.output()).toContain('gateway stopped unexpectedly (exit code 1); stopping the stack\n');
    expect(logged(stack, 'gateway', 'fatal error, shutting down')).toHaveLength(1);
    expect(logged(stack, 'users-orders', 'shutting down').map(({ signal }) => signal)).toEqual(['SIGTERM']);
    expect(logged(stack, 'users-orders', 'stopped')).toHaveLength(1);
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
