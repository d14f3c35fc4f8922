import { spawn, type ChildProcess } from 'node:child_process';
import { entries, repoRoot } from '../../../scripts/paths.mjs';

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
