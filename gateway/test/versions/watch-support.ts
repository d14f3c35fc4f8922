import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import type { Registry } from 'prom-client';
import { createRegistry } from '@version-router/platform/metrics';
import { capturedLog } from '../../../platform/test/support/captured-log.js';
import { buildApp } from '../../src/app.js';
import { loadPolicyFile, policyDigest } from '../../src/versions/policy-file.js';
import type { PolicyWatchOptions } from '../../src/versions/watch.js';
import { TODAY, designPolicyFile } from '../support/helpers.js';
import { createMemoryConsumerStore } from '../support/memory-store.js';

/** The shipped policy with v1's sunset moved: a different, valid content. */
export const laterSunsetPolicy = {
  ...designPolicyFile,
  versions: [{ ...designPolicyFile.versions[0], sunset: '2027-06-01T00:00:00Z' }, designPolicyFile.versions[1]],
};

export const textOf = (policy: unknown): string => `${JSON.stringify(policy, null, 2)}\n`;
export const digestOf = (policy: unknown): string => policyDigest(Buffer.from(textOf(policy)));

export interface WatchedGateway {
  app: FastifyInstance;
  registry: Registry;
  logs: Record<string, unknown>[];
  /** `policy_sha256` of GET /versions. */
  servedSha256(): Promise<string>;
  /** api_version_policy_reloads_total by result. */
  reloads(): Promise<{ success: number; failure: number }>;
}

/** A directory holding versions.json with the shipped policy, as the file watch finds it. */
export function policyDirectory(): { dir: string; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'policy-watch-'));
  const path = join(dir, 'versions.json');
  writeFileSync(path, textOf(designPolicyFile));
  return { dir, path };
}

/** The gateway app as main.ts builds it: the policy read from `path`, watched unless `watch` is false. */
export async function buildWatchedGateway(
  path: string,
  {
    watch = true,
    checkIntervalMs,
    watchDirectory,
  }: { watch?: boolean; checkIntervalMs?: number; watchDirectory?: PolicyWatchOptions['watchDirectory'] } = {},
): Promise<WatchedGateway> {
  const { destination, lines: logs } = capturedLog();
  const registry = createRegistry();
  const app = await buildApp({
    config: { backendTimeoutMs: 1_000 },
    policy: await loadPolicyFile(path),
    readPolicy: () => loadPolicyFile(path),
    watchPolicy: watch
      ? {
          path,
          ...(checkIntervalMs === undefined ? {} : { checkIntervalMs }),
          ...(watchDirectory === undefined ? {} : { watchDirectory }),
        }
      : undefined,
    clock: () => TODAY,
    // /versions never reaches the backend.
    backendUrl: 'http://127.0.0.1:9',
    logger: pino({ level: 'info' }, destination),
    registry,
    consumerStore: createMemoryConsumerStore(),
  });
  const metricValue = async (line: string): Promise<number> => {
    const found = (await registry.metrics()).split('\n').find((text) => text.startsWith(`${line} `));
    return found === undefined ? Number.NaN : Number(found.slice(line.length + 1));
  };
  return {
    app,
    registry,
    logs,
    servedSha256: async () => (await app.inject({ url: '/versions' })).json<{ policy_sha256: string }>().policy_sha256,
    reloads: async () => ({
      success: await metricValue('api_version_policy_reloads_total{result="success"}'),
      failure: await metricValue('api_version_policy_reloads_total{result="failure"}'),
    }),
  };
}
