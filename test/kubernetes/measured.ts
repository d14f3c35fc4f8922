/**
 * Figures the manifests must agree with that come from outside deploy/kubernetes: the memory
 * bench/container-memory.mjs measured (bench/README.md, "Memory in containers") and package.json's version.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../scripts/paths.mjs';
import type { MeasuredMemory } from './operator-rules.js';

const readJson = <T>(path: string): T => JSON.parse(readFileSync(join(repoRoot, path), 'utf8')) as T;

/** Per process (container name): its peak as shipped and what it holds outside V8's old space. */
export function measuredMemory(): Record<string, MeasuredMemory> {
  const record = readJson<{ peakAsShippedMiB: Record<string, number>; peakOutsideOldSpaceMiB: Record<string, number> }>('bench/results/container-memory.json');
  return Object.fromEntries(Object.entries(record.peakAsShippedMiB).map(([name, peakMiB]) => [name, { peakMiB, outsideOldSpaceMiB: record.peakOutsideOldSpaceMiB[name] ?? Number.NaN }]));
}

/** The images' tag. */
export const packageVersion = (): string => readJson<{ version: string }>('package.json').version;
