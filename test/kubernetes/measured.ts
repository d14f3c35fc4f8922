/**
 * Figures the manifests must agree with that come from outside deploy/kubernetes: the memory the processes
 * were measured to take under load (bench/README.md, "Memory in containers" and "Sizing the Kubernetes pods")
 * and package.json's version.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../scripts/paths.mjs';
import type { MeasuredMemory } from './operator-rules.js';

const readJson = <T>(path: string): T => JSON.parse(readFileSync(join(repoRoot, path), 'utf8')) as T;

/** How a deployment keeps its consumers and users: the base (embedded store, users in memory) or overlays/postgres. */
export type Configuration = 'embedded' | 'postgres';

interface SizingRun {
  peakLoadMiB: Record<string, number>;
}

/**
 * Per process (container name), for one configuration: the largest peak under load of every recorded run that
 * measured it (bench/results/kubernetes-sizing.json for that configuration, bench/results/container-memory.json
 * as shipped for both), and what it holds outside V8's old space (container-memory.json).
 */
export function measuredMemory(configuration: Configuration): Record<string, MeasuredMemory> {
  const containers = readJson<{
    peakAsShippedMiB: Record<string, number>;
    peakOutsideOldSpaceMiB: Record<string, number>;
  }>('bench/results/container-memory.json');
  const sizing = readJson<{ runs: Record<Configuration, SizingRun[]> }>('bench/results/kubernetes-sizing.json');
  return Object.fromEntries(
    Object.entries(containers.peakAsShippedMiB).map(([name, peakMiB]) => {
      const peaks = [peakMiB, ...sizing.runs[configuration].map((run) => run.peakLoadMiB[name] ?? 0)];
      return [
        name,
        { peakMiB: Math.max(...peaks), outsideOldSpaceMiB: containers.peakOutsideOldSpaceMiB[name] ?? Number.NaN },
      ];
    }),
  );
}

/** The CPU each process used per 1,000 requests per second answered, for one configuration: the most of any run. */
export function measuredMillicoresPer1000Rps(configuration: Configuration): Record<string, number> {
  const sizing = readJson<{ runs: Record<Configuration, { millicoresPer1000Rps: Record<string, number> }[]> }>(
    'bench/results/kubernetes-sizing.json',
  );
  const found: Record<string, number> = {};
  for (const run of sizing.runs[configuration]) {
    for (const [name, millicores] of Object.entries(run.millicoresPer1000Rps))
      found[name] = Math.max(found[name] ?? 0, millicores);
  }
  return found;
}

/** The images' tag. */
export const packageVersion = (): string => readJson<{ version: string }>('package.json').version;
