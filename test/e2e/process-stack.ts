import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { entries, repoRoot } from '../../scripts/paths.mjs';
import { sharedGatewayStore } from '../support/gateway-store.js';
import type { RunningStack } from './stack.js';

const START_TIMEOUT_MS = 15_000;

/** One spawned service: its addresses from the 'listening' log line, and every JSON line it logged. */
export interface ServiceProcess {
  child: ChildProcess;
  apiUrl: string;
  adminUrl: string;
  logs: Record<string, unknown>[];
  /** Everything it wrote to stdout and stderr so far, as text. */
  output(): string;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  exited: Promise<number | string>;
  /** SIGTERM, then the exit; resolves at once when it already exited. */
  stop(): Promise<number | string>;
}

/**
 * Starts a built entry point of `root` (this repository, or a copy of it that was built) with `root` as its
 * working directory, so relative defaults such as ops/versions.json are that copy's files.
 */
export async function startService(
  name: keyof typeof entries,
  env: Record<string, string>,
  root: string = repoRoot,
  { startTimeoutMs = START_TIMEOUT_MS }: { startTimeoutMs?: number } = {},
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [entries[name]], {
    cwd: root,
    // LOG_LEVEL info at least: the bound ports are read from the 'listening' line.
    env: {
      ...process.env,
      ...env,
      LOG_LEVEL: env.LOG_LEVEL === 'debug' || env.LOG_LEVEL === 'trace' ? env.LOG_LEVEL : 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  let stderr = '';
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    output += chunk.toString();
  });
  // 'close', not 'exit': 'exit' can fire before the last stdout lines (e.g. 'stopped') have been read.
  const exited = new Promise<number | string>((resolve) =>
    child.once('close', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );

  const addresses = new Promise<{ api: string; admin: string }>((resolve, reject) => {
    let pending = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (line.trim() === '') continue;
        const entry = JSON.parse(line) as Record<string, unknown>;
        logs.push(entry);
        if (entry.msg === 'listening') resolve({ api: String(entry.api), admin: String(entry.admin) });
      }
    });
    void exited.then((code) => reject(new Error(`${name} exited (${code}) before listening: ${stderr.trim()}`)));
    setTimeout(
      () => reject(new Error(`${name} did not log 'listening' within ${startTimeoutMs} ms: ${stderr.trim()}`)),
      startTimeoutMs,
    ).unref();
  });

  let addressesFound: { api: string; admin: string };
  try {
    addressesFound = await addresses;
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    child,
    apiUrl: addressesFound.api,
    adminUrl: addressesFound.admin,
    logs,
    output: () => output,
    exited,
    stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Loopback and port 0 everywhere, so suites can run side by side. */
const backendEnv = { BACKEND_HOST: '127.0.0.1', BACKEND_PORT: '0', BACKEND_ADMIN_PORT: '0' };
const gatewayEnv = { GATEWAY_HOST: '127.0.0.1', GATEWAY_PORT: '0', GATEWAY_ADMIN_PORT: '0' };

/** A built gateway on the run's shared consumer store (test/support/gateway-store.ts) unless `env` names another. */
export function startGateway(
  backendUrl: string,
  env: Record<string, string> = {},
  root: string = repoRoot,
): Promise<ServiceProcess> {
  return startService('gateway', { ...gatewayEnv, ...sharedGatewayStore(), BACKEND_URL: backendUrl, ...env }, root);
}

export interface ProcessStackOptions {
  /** Extra environment for the gateway, e.g. API_VERSIONS_FILE. */
  gatewayEnv?: Record<string, string>;
  backendEnv?: Record<string, string>;
  /** A built copy of the repository to run instead of this one (test/e2e/adding-version-3.test.ts). */
  root?: string;
}

export interface ProcessStack extends RunningStack {
  backend: ServiceProcess;
  gateway: ServiceProcess;
}

/** The real built backend and gateway as two processes, like `npm start`, on ephemeral loopback ports. */
export async function startProcessStack(options: ProcessStackOptions = {}): Promise<ProcessStack> {
  // Where the gateway reads its policy: API_VERSIONS_FILE, else its default, against its working directory.
  const versionsFile = resolve(
    options.root ?? repoRoot,
    options.gatewayEnv?.API_VERSIONS_FILE ?? process.env.API_VERSIONS_FILE ?? 'ops/versions.json',
  );
  const backend = await startService('backend', { ...backendEnv, ...options.backendEnv }, options.root);
  let gateway: ServiceProcess;
  try {
    gateway = await startGateway(backend.apiUrl, options.gatewayEnv, options.root);
  } catch (err) {
    await backend.stop();
    throw err;
  }
  return {
    backend,
    gateway,
    gatewayUrl: gateway.apiUrl,
    gatewayAdminUrl: gateway.adminUrl,
    backendAdminUrl: backend.adminUrl,
    versionsFile,
    async stop() {
      await Promise.all([gateway.stop(), backend.stop()]);
    },
  };
}
