/**
 * The docker CLI for the container suite: compose commands on the suite's project, inspect,
 * logs. Every call runs `docker` from PATH (run.mjs puts Debian's client first where it exists).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { eventually } from '../../platform/test/support/eventually.mjs';
import type { StackEndpoints } from '../e2e/stack.js';

const execFileAsync = promisify(execFile);

export interface CommandResult {
  stdout: string;
  stderr: string;
}

/** Runs `docker …`; rejects with the command and its stderr when it exits non-zero. */
export async function docker(
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<CommandResult> {
  try {
    const { stdout, stderr } = await execFileAsync('docker', args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      timeout: options.timeoutMs ?? 120_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { stdout, stderr };
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    throw new Error(
      `docker ${args.join(' ')} failed: ${stderr.trim() || (err instanceof Error ? err.message : String(err))}`,
    );
  }
}

/** Runs a bash script (the commands of docs/deployment.md) in `cwd`, stopping at the first failing command. */
export async function bash(script: string, cwd: string): Promise<CommandResult> {
  try {
    const { stdout, stderr } = await execFileAsync('bash', ['-euo', 'pipefail', '-c', script], {
      cwd,
      timeout: 600_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { stdout, stderr };
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    throw new Error(`script failed: ${stderr.trim().split('\n').slice(-5).join(' | ')}`);
  }
}

/** Whether the engine has an image with this tag (the stand-ins built by engine.sh). */
export async function hasImage(tag: string): Promise<boolean> {
  return docker(['image', 'inspect', tag]).then(
    () => true,
    () => false,
  );
}

interface ContainerState {
  Status: string;
  ExitCode: number;
  StartedAt: string;
  Health?: { Status: string };
}

export interface ContainerInspect {
  Id: string;
  /** "/<project>-<service>-<replica>" for compose containers. */
  Name: string;
  State: ContainerState;
  RestartCount: number;
  Mounts: { Type: string; Name?: string; Source: string; Destination: string }[];
  Config: { User: string; Image: string };
  HostConfig: {
    ReadonlyRootfs: boolean;
    CapDrop: string[] | null;
    CapAdd: string[] | null;
    Privileged: boolean;
    SecurityOpt: string[] | null;
    PortBindings: Record<string, unknown[] | null> | null;
  };
  NetworkSettings: {
    Ports: Record<string, { HostIp: string; HostPort: string }[] | null> | null;
    Networks: Record<string, { IPAddress: string; NetworkID: string }>;
  };
}

export async function inspect(containerId: string): Promise<ContainerInspect> {
  const { stdout } = await docker(['container', 'inspect', containerId]);
  const [found] = JSON.parse(stdout) as ContainerInspect[];
  if (found === undefined) throw new Error(`no container ${containerId}`);
  return found;
}

/** Polls a container until `done` holds for its inspect data; fails with the last state after `timeoutMs`. */
export async function waitForContainer(
  containerId: string,
  what: string,
  done: (state: ContainerInspect) => boolean,
  timeoutMs = 60_000,
): Promise<ContainerInspect> {
  let last: ContainerInspect | undefined;
  return eventually(
    `container ${containerId.slice(0, 12)} ${what}`,
    async () => {
      last = await inspect(containerId);
      return done(last) ? last : undefined;
    },
    {
      timeoutMs,
      intervalMs: 500,
      lastSeen: () => JSON.stringify({ ...last?.State, RestartCount: last?.RestartCount }),
    },
  );
}

export const healthy = (state: ContainerInspect): boolean => state.State.Health?.Status === 'healthy';

/** docker compose on one project, with the files and environment the suite started it with. */
export class ComposeProject {
  constructor(
    readonly root: string,
    readonly name: string,
    readonly files: string[],
    readonly env: Record<string, string>,
    /** Where published ports are reached: the engine's host (testcontainers' getHost()). */
    readonly host: string,
  ) {}

  run(args: string[], timeoutMs?: number): Promise<CommandResult> {
    const fileArgs = this.files.flatMap((file) => ['-f', file]);
    return docker(['compose', '-p', this.name, ...fileArgs, ...args], {
      cwd: this.root,
      env: { ...process.env, ...this.env },
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    });
  }

  /** The ids of the service's containers (one per replica), also stopped ones, in replica order. */
  async containerIds(service: string): Promise<string[]> {
    const { stdout } = await this.run(['ps', '--all', '--format', '{{.Name}} {{.ID}}', service]);
    const replica = (name: string): number => Number(/-(\d+)$/.exec(name)?.[1]);
    return stdout
      .trim()
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => line.split(' ') as [string, string])
      .sort(([a], [b]) => replica(a) - replica(b))
      .map(([, id]) => id);
  }

  /** The id of the service's (single) container, also when it is stopped. */
  async containerId(service: string): Promise<string> {
    const { stdout } = await this.run(['ps', '--all', '--quiet', service]);
    const id = stdout.trim();
    if (id === '' || id.includes('\n')) throw new Error(`expected one container for ${service}, got "${id}"`);
    return id;
  }

  /** host:port the engine published a container port on, as an http URL (`index`: which replica, from 1). */
  async url(service: string, port: number, index = 1): Promise<string> {
    const { stdout } = await this.run(['port', '--index', String(index), service, String(port)]);
    const published = stdout.trim().split('\n')[0] ?? '';
    const hostPort = /:(\d+)$/.exec(published)?.[1];
    if (hostPort === undefined) throw new Error(`${service}:${port} is not published ("${published}")`);
    return `http://${this.host}:${hostPort}`;
  }

  /**
   * What the shared scenarios reach on a single-replica stack under the test overlay, read from the ports
   * published now (they change when a container restarts). The backend is not published; the overlay's
   * relay forwards its admin port.
   */
  async stackEndpoints(versionsFile: string): Promise<StackEndpoints> {
    return {
      gatewayUrl: await this.url('gateway', 8080),
      gatewayAdminUrl: await this.url('gateway', 9464),
      backendAdminUrl: await this.url('backend-admin-relay', 9465),
      versionsFile,
    };
  }

  async logs(service: string): Promise<string> {
    const { stdout, stderr } = await this.run(['logs', '--no-log-prefix', service]);
    return stdout + stderr;
  }
}
