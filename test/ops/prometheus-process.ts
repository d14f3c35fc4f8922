/**
 * Runs Debian's real `prometheus` binary for a test: a throw-away config and TSDB directory,
 * a loopback port the OS picked, 1 s scrape and rule-evaluation intervals.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../../platform/test/support/eventually.mjs';
import { freeLoopbackPort } from '../../platform/test/support/free-port.js';

const INSTALL_HINT =
  'the `prometheus` binary is required for this test but was not found on PATH. Install it with ' +
  '`sudo apt-get update && sudo apt-get install -y --no-install-recommends prometheus` (Debian/Ubuntu; it also ' +
  'provides promtool), ' +
  'or point PROMETHEUS_BIN at a Prometheus 2.x/3.x binary.';

/** The binary to run; throws with the install instructions when there is none. */
function prometheusBinary(): string {
  const bin = process.env.PROMETHEUS_BIN ?? 'prometheus';
  const probe = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      `${INSTALL_HINT} (tried ${JSON.stringify(bin)}: ${probe.error?.message ?? `exit code ${probe.status}`})`,
    );
  }
  return bin;
}

export interface PrometheusOptions {
  /** host:port of each scrape target, by job name. */
  targets: Record<string, string>;
  /** Absolute paths of the rule files to load. */
  ruleFiles: string[];
}

export interface RunningPrometheus {
  url: string;
  /** stdout+stderr so far, for failure messages. */
  log(): string;
  stop(): Promise<void>;
}

export interface PromSample {
  metric: Record<string, string>;
  value?: [number, string];
  values?: [number, string][];
}

interface ApiResponse<T> {
  status: 'success' | 'error';
  data: T;
  error?: string;
}

async function getJson<T>(url: string): Promise<T> {
  const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  const body = (await response.json()) as ApiResponse<T>;
  if (body.status !== 'success') throw new Error(`${url}: ${body.error ?? response.status}`);
  return body.data;
}

/** Instant query (vector or matrix result) through the HTTP API. */
export async function query(prometheusUrl: string, promql: string): Promise<PromSample[]> {
  const data = await getJson<{ resultType: string; result: PromSample[] }>(
    `${prometheusUrl}/api/v1/query?query=${encodeURIComponent(promql)}`,
  );
  return data.result;
}

export interface RuleState {
  name: string;
  type: 'recording' | 'alerting';
  health: string;
  lastError?: string;
}

export async function ruleStates(prometheusUrl: string): Promise<RuleState[]> {
  const data = await getJson<{ groups: { rules: RuleState[] }[] }>(`${prometheusUrl}/api/v1/rules`);
  return data.groups.flatMap((group) => group.rules);
}

function configYaml({ targets, ruleFiles }: PrometheusOptions): string {
  // JSON is YAML: no quoting pitfalls with paths.
  return JSON.stringify(
    {
      global: { scrape_interval: '1s', scrape_timeout: '900ms', evaluation_interval: '1s' },
      rule_files: ruleFiles,
      scrape_configs: Object.entries(targets).map(([job, target]) => ({
        job_name: job,
        static_configs: [{ targets: [target] }],
      })),
    },
    null,
    2,
  );
}

async function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return true;
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

async function startOnce(bin: string, dir: string, port: number): Promise<RunningPrometheus> {
  const url = `http://127.0.0.1:${port}`;
  let output = '';
  const child = spawn(
    bin,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
      // As the compose file's Prometheus: keeps the trace ids a traced process puts on its buckets (docs/tracing.md).
      '--enable-feature=exemplar-storage',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-20_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const stop = async () => {
    if (!(await waitForExit(child, 0))) {
      child.kill('SIGTERM');
      if (!(await waitForExit(child, 10_000))) {
        child.kill('SIGKILL');
        await waitForExit(child, 5_000);
      }
    }
  };
  const ready = async () => {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`prometheus exited during start-up (${child.exitCode ?? child.signalCode}):\n${output}`);
    }
    // Not listening yet is what the wait is for.
    return fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(1_000) }).then(
      (response) => response.ok,
      () => false,
    );
  };
  try {
    await eventually('prometheus to be ready', ready, { timeoutMs: 20_000, lastSeen: () => `its output:\n${output}` });
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, log: () => output, stop };
}

export async function startPrometheus(options: PrometheusOptions): Promise<RunningPrometheus> {
  const bin = prometheusBinary();
  const dir = await mkdtemp(join(tmpdir(), 'prometheus-e2e-'));
  await writeFile(join(dir, 'prometheus.yml'), configYaml(options));
  const cleanUp = () => rm(dir, { recursive: true, force: true });
  // The port is probed free and then handed over; another process may grab it in between,
  // so a start that fails on "address already in use" is retried with a new port.
  for (let attempt = 1; ; attempt++) {
    try {
      const running = await startOnce(bin, dir, await freeLoopbackPort());
      return {
        ...running,
        stop: async () => {
          await running.stop();
          await cleanUp();
        },
      };
    } catch (error) {
      if (attempt < 3 && error instanceof Error && /address already in use/.test(error.message)) continue;
      await cleanUp();
      throw error;
    }
  }
}
