/**
 * An npm script that starts the stack (`npm start`, `npm run start:gateway`) run as a user runs it, in a process
 * group of its own, until the launcher's banner: what the tests of the README's commands share.
 */
import { spawn } from 'node:child_process';
import { eventually } from '../../platform/test/support/eventually.mjs';
import { freeLoopbackPort } from '../../platform/test/support/free-port.js';

/** The launcher's last banner line (scripts/start.mjs). */
export const BANNER = 'Press Ctrl-C to stop.';

export interface NpmRun {
  /** Everything npm and what it started wrote to stdout and stderr, in order of arrival. */
  output(): string;
  gatewayUrl: string;
  gatewayAdminUrl: string;
  /** SIGTERM to npm, which passes it on; resolves with npm's exit code (or signal) once every output pipe closed. */
  stop(): Promise<number | string>;
}

/** The listeners' variables on free loopback ports, and the gateway's BACKEND_URL on the backend's port. */
async function loopbackPorts(): Promise<Record<string, string>> {
  const [gateway, gatewayAdmin, backend, backendAdmin] = [
    await freeLoopbackPort(),
    await freeLoopbackPort(),
    await freeLoopbackPort(),
    await freeLoopbackPort(),
  ];
  return {
    GATEWAY_HOST: '127.0.0.1',
    GATEWAY_PORT: String(gateway),
    GATEWAY_ADMIN_PORT: String(gatewayAdmin),
    BACKEND_PORT: String(backend),
    BACKEND_ADMIN_PORT: String(backendAdmin),
    BACKEND_URL: `http://127.0.0.1:${backend}`,
  };
}

/**
 * `npm <args>` in `cwd` with `env` over this process's environment and free ports (loopbackPorts; `env` may name
 * its own BACKEND_URL), until the banner. A port found free can be taken before a service listens on it (the
 * parallel suites draw their local ports from the same range): a start that ends with EADDRINUSE is tried again
 * on other ports, up to three times; any other failure throws with the output.
 */
export async function npmUntilBanner(
  args: readonly string[],
  { cwd, env, timeoutMs }: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<NpmRun> {
  for (let attempt = 1; ; attempt++) {
    const ports = await loopbackPorts();
    try {
      return await npmOnce(args, cwd, { ...ports, ...env }, timeoutMs);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.includes('EADDRINUSE') || attempt === 3) throw error;
    }
  }
}

async function npmOnce(
  args: readonly string[],
  cwd: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<NpmRun> {
  const npm = spawn('npm', args, { cwd, env: { ...process.env, ...env }, detached: true, stdio: 'pipe' });
  let output = '';
  npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const ended = Promise.all(
    [npm.stdout, npm.stderr].map((stream) => new Promise((resolve) => stream.once('close', resolve))),
  );
  const exited = new Promise<number | string>((resolve) =>
    npm.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  const killGroup = (): void => {
    try {
      process.kill(-(npm.pid ?? 0), 'SIGKILL');
    } catch {
      // ESRCH: nothing of the group is left.
    }
  };
  try {
    await eventually(
      'the banner',
      () => {
        if (npm.exitCode !== null || npm.signalCode !== null)
          throw new Error(`npm ${args.join(' ')} ended (${npm.exitCode ?? npm.signalCode}) before its banner`);
        return output.includes(BANNER);
      },
      { timeoutMs },
    );
  } catch (error) {
    killGroup();
    throw new Error(`${(error as Error).message}:\n${output}`, { cause: error });
  }
  return {
    output: () => output,
    gatewayUrl: `http://127.0.0.1:${env.GATEWAY_PORT}`,
    gatewayAdminUrl: `http://127.0.0.1:${env.GATEWAY_ADMIN_PORT}`,
    async stop() {
      if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGTERM');
      const stopped = setTimeout(killGroup, 20_000);
      const code = await exited;
      await ended;
      clearTimeout(stopped);
      return code;
    },
  };
}
