// What the container benchmarks share (bench/container-memory.mjs, bench/kubernetes-sizing.mjs): the images built
// under the names the manifests give them, containers run with the pods' security settings, and what the kubelet
// would read of each: its memory working set and its CPU time, from the container's cgroup (v1 or v2).
import { execFileSync } from 'node:child_process';
import { get } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../scripts/paths.mjs';

export const MIB = 1024 * 1024;

export const docker = (...args) => execFileSync('docker', args, { encoding: 'utf8' }).trim();

/** "384Mi" → bytes, for `docker run --memory`. */
export function bytesOf(quantity) {
  const match = /^(\d+)(Mi|Gi)$/.exec(quantity);
  if (match === null) throw new Error(`memory quantity ${quantity}: only Mi and Gi are read here`);
  return Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1) * MIB;
}

/** "500m" or "1" → cores, for `docker run --cpus`. */
export function coresOf(quantity) {
  const text = String(quantity);
  return text.endsWith('m') ? Number(text.slice(0, -1)) / 1000 : Number(text);
}

/** Builds each target under its image name (NODE_IMAGE: the stand-in base on a machine without a registry). */
export function buildImages(images) {
  const args = process.env.NODE_IMAGE === undefined ? [] : ['--build-arg', `NODE_IMAGE=${process.env.NODE_IMAGE}`];
  for (const [target, image] of Object.entries(images)) {
    console.log(`building ${image}`);
    execFileSync('docker', ['build', '--quiet', '--target', target, '-t', image, ...args, '.'], {
      cwd: repoRoot,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
}

/**
 * The pods' settings, as docker run flags: their security, and no Docker HEALTHCHECK (the kubelet probes over HTTP
 * instead; the image's check starts a node process every 10 s, CPU a pod never spends).
 */
const podFlags = [
  '--read-only',
  '--tmpfs',
  '/tmp',
  '--cap-drop',
  'ALL',
  '--security-opt',
  'no-new-privileges',
  '--no-healthcheck',
];

/**
 * `docker run -d` on the network `network`, named `<network>-<name>`; answers the container's name. `pod`: the pods'
 * security settings; `memory`, `cpus`: a limit as the manifests set one; `cpuset`: the cores it may run on;
 * `volumes`: paths given an anonymous volume (an emptyDir); `binds`: [host directory, path] mounted read-only (a
 * ConfigMap's directory); `alias`: a name it answers to on the network (a Service's); `command`: instead of the
 * image's CMD; `detach` false: run to the end and answer its output.
 */
export function runContainer(
  network,
  name,
  image,
  env,
  { memory, cpus, cpuset, publish = [], pod = true, volumes = [], binds = [], alias, command = [], detach = true } = {},
) {
  const container = `${network}-${name}`;
  const args = ['run', detach ? '-d' : '--rm', '--name', container, '--network', network, ...(pod ? podFlags : [])];
  if (memory !== undefined) args.push('--memory', String(memory), '--memory-swap', String(memory));
  if (cpus !== undefined) args.push('--cpus', String(cpus));
  if (cpuset !== undefined) args.push('--cpuset-cpus', cpuset);
  for (const port of publish) args.push('-p', `127.0.0.1::${port}`);
  for (const path of volumes) args.push('--mount', `type=volume,dst=${path}`);
  for (const [source, path] of binds) args.push('--mount', `type=bind,src=${source},dst=${path},readonly`);
  if (alias !== undefined) args.push('--network-alias', alias);
  for (const [key, value] of Object.entries(env)) args.push('-e', `${key}=${value}`);
  const output = docker(...args, image, ...command);
  return detach ? container : output;
}

export const hostPort = (container, port) => docker('port', container, String(port)).split('\n')[0].replace(/^.*:/, '');

/**
 * The status of a GET, or undefined when there is no answer within 2 s. node:http, not fetch: while Docker's
 * port proxy holds a connection to a container that is not listening yet, fetch's socket keeps no reference
 * on the event loop, and the script would end there.
 */
export const statusOf = (url) =>
  new Promise((resolve) => {
    const request = get(url, { timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    request.once('timeout', () => request.destroy());
    request.once('error', () => resolve(undefined));
  });

/** How long, and how often, a bench waits for a container to serve (`eventually`). */
export const STARTING = { timeoutMs: 120_000, intervalMs: 250 };

/** The directory of one controller's cgroup of a process (v1: its own hierarchy; v2: the unified one). */
function cgroupDir(lines, controller) {
  const v1 = lines.find((line) => line.split(':')[1]?.split(',').includes(controller));
  if (v1 !== undefined) return { version: 1, dir: `/sys/fs/cgroup/${controller}${v1.split(':')[2]}` };
  const v2 = lines.find((line) => line.startsWith('0::'));
  return { version: 2, dir: `/sys/fs/cgroup${v2.slice(3)}` };
}

/** The container's cgroups (memory, CPU) and its first process's host pid. */
export function cgroupOf(container) {
  const pid = Number(docker('inspect', '-f', '{{.State.Pid}}', container));
  const lines = readFileSync(`/proc/${pid}/cgroup`, 'utf8').trim().split('\n');
  const memory = cgroupDir(lines, 'memory');
  const cpu = cgroupDir(lines, 'cpuacct');
  return {
    pid,
    dir: memory.dir,
    usage: memory.version === 1 ? 'memory.usage_in_bytes' : 'memory.current',
    inactive: memory.version === 1 ? 'total_inactive_file' : 'inactive_file',
    cpu,
  };
}

/** Working set as the kubelet computes it: usage minus inactive file pages. */
export function workingSet({ dir, usage, inactive }) {
  const used = Number(readFileSync(join(dir, usage), 'utf8'));
  const stat = readFileSync(join(dir, 'memory.stat'), 'utf8');
  const inactiveFile = Number(new RegExp(`^${inactive} (\\d+)$`, 'm').exec(stat)?.[1] ?? 0);
  return Math.max(0, used - inactiveFile);
}

/** The kernel's high-water mark of the resident memory of the container's first process. */
export const peakRss = ({ pid }) =>
  Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;

/** The resident memory of every process of the container now (the gateway's embedded store is a child process). */
export function residentMemory({ dir }) {
  return readFileSync(join(dir, 'cgroup.procs'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .reduce((sum, pid) => {
      try {
        return sum + Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
      } catch {
        return sum;
      }
    }, 0);
}

/** CPU time the container's processes used so far, in µs (what the kubelet's CPU figures read). */
export function cpuMicros({ cpu }) {
  if (cpu.version === 1) return Number(readFileSync(join(cpu.dir, 'cpuacct.usage'), 'utf8')) / 1000;
  return Number(/^usage_usec (\d+)$/m.exec(readFileSync(join(cpu.dir, 'cpu.stat'), 'utf8'))?.[1] ?? 0);
}
