import { closeSync, mkdirSync, openSync, renameSync, rmSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { designPolicyFile } from '../support/helpers.js';
import {
  buildWatchedGateway,
  digestOf,
  laterSunsetPolicy,
  policyDirectory,
  textOf,
  type WatchedGateway,
} from './watch-support.js';

/** The file watch promises 2 s; the wait allows for a loaded machine. */
const APPLIED_WITHIN_MS = 5_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let gateway: WatchedGateway | undefined;
afterEach(async () => {
  await gateway?.app.close();
  gateway = undefined;
});

async function start(path: string, options?: { watch?: boolean }): Promise<WatchedGateway> {
  gateway = await buildWatchedGateway(path, options);
  expect(await gateway.servedSha256()).toBe(digestOf(designPolicyFile));
  return gateway;
}

/**
 * Builds a ConfigMap volume the way the kubelet does: the data in a timestamped directory, a `..data`
 * symlink to it, and `versions.json -> ..data/versions.json`. An update writes a new timestamped
 * directory, points a temporary symlink at it, renames that over `..data` and removes the old directory.
 */
function configMapVolume(dir: string): { path: string; update(text: string): void } {
  let generation = 0;
  const writeGeneration = (text: string): string => {
    generation += 1;
    const name = `..2026_11_24_09_00_0${generation}.000000000${generation}`;
    mkdirSync(join(dir, name));
    writeFileSync(join(dir, name, 'versions.json'), text);
    return name;
  };
  let current = writeGeneration(textOf(designPolicyFile));
  symlinkSync(current, join(dir, '..data'));
  symlinkSync('..data/versions.json', join(dir, 'versions.json'));
  return {
    path: join(dir, 'versions.json'),
    update(text) {
      const previous = current;
      current = writeGeneration(text);
      symlinkSync(current, join(dir, '..data_tmp'));
      renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
      // The kubelet then removes the previous generation.
      rmSync(join(dir, previous), { recursive: true });
    },
  };
}

describe('policy file watch (API_VERSIONS_WATCH)', () => {
  it('applies an in-place write through the reload path: hash, log line and metrics', async () => {
    const { path } = policyDirectory();
    const watched = await start(path);
    writeFileSync(path, textOf(laterSunsetPolicy));
    await expect.poll(() => watched.servedSha256(), { timeout: APPLIED_WITHIN_MS }).toBe(digestOf(laterSunsetPolicy));
    expect(await watched.reloads()).toEqual({ success: 1, failure: 0 });
    expect(watched.logs.find((line) => line.msg === 'version policy reloaded')).toMatchObject({
      versions: [1, 2],
      sha256: digestOf(laterSunsetPolicy),
    });
    expect(await watched.registry.getSingleMetricAsString('api_version_policy_info')).toContain(
      `api_version_policy_info{sha256="${digestOf(laterSunsetPolicy)}"} 1`,
    );
    const v1 = (await watched.app.inject({ url: '/versions' })).json<{ versions: { sunset: string }[] }>().versions[0];
    expect(v1?.sunset).toBe('2027-06-01T00:00:00.000Z');
  });

  it('applies a file renamed over the policy file', async () => {
    const { dir, path } = policyDirectory();
    const watched = await start(path);
    writeFileSync(join(dir, 'versions.json.new'), textOf(laterSunsetPolicy));
    renameSync(join(dir, 'versions.json.new'), path);
    await expect.poll(() => watched.servedSha256(), { timeout: APPLIED_WITHIN_MS }).toBe(digestOf(laterSunsetPolicy));
    expect(await watched.reloads()).toEqual({ success: 1, failure: 0 });
  });

  it('applies a Kubernetes ConfigMap update (the ..data symlink swapped), again and again', async () => {
    const { dir } = policyDirectory();
    rmSync(join(dir, 'versions.json'));
    const volume = configMapVolume(dir);
    const watched = await start(volume.path);
    volume.update(textOf(laterSunsetPolicy));
    await expect.poll(() => watched.servedSha256(), { timeout: APPLIED_WITHIN_MS }).toBe(digestOf(laterSunsetPolicy));
    volume.update(textOf(designPolicyFile));
    await expect.poll(() => watched.servedSha256(), { timeout: APPLIED_WITHIN_MS }).toBe(digestOf(designPolicyFile));
    expect(await watched.reloads()).toEqual({ success: 2, failure: 0 });
  });

  it('keeps the policy in force when the new content is invalid, and refuses that content once', async () => {
    const { path } = policyDirectory();
    const watched = await start(path);
    writeFileSync(path, textOf({ ...designPolicyFile, default_version: 7 }));
    await expect.poll(() => watched.reloads(), { timeout: APPLIED_WITHIN_MS }).toEqual({ success: 0, failure: 1 });
    // Once: one log line and one count, also after the confirmation and the periodic checks.
    await sleep(1_500);
    expect(await watched.reloads()).toEqual({ success: 0, failure: 1 });
    expect(
      watched.logs.filter((line) => line.msg === 'version policy reload failed; the previous policy stays in force'),
    ).toHaveLength(1);
    expect(
      watched.logs.find((line) => line.msg === 'version policy reload failed; the previous policy stays in force'),
    ).toMatchObject({
      reason: `API_VERSIONS_FILE: ${path} is invalid at default_version: default_version 7 is not a listed version`,
    });
    expect(await watched.servedSha256()).toBe(digestOf(designPolicyFile));
    // The same refused bytes written again are not read as a new policy.
    writeFileSync(path, textOf({ ...designPolicyFile, default_version: 7 }));
    await sleep(1_000);
    expect(await watched.reloads()).toEqual({ success: 0, failure: 1 });
    // A fixed file is applied.
    writeFileSync(path, textOf(laterSunsetPolicy));
    await expect.poll(() => watched.servedSha256(), { timeout: APPLIED_WITHIN_MS }).toBe(digestOf(laterSunsetPolicy));
  });

  it(
    'applies a file still being written (a cp on a slow disk) once it is complete, without a failed reload before ' +
      'it',
    async () => {
      const { path } = policyDirectory();
      const watched = await start(path);
      const text = textOf(laterSunsetPolicy);
      // Truncated, half written, and read half written: the settle after the last event has passed.
      const file = openSync(path, 'w');
      writeSync(file, text.slice(0, 40));
      await sleep(600);
      writeSync(file, text.slice(40));
      closeSync(file);
      await expect.poll(() => watched.servedSha256(), { timeout: APPLIED_WITHIN_MS }).toBe(digestOf(laterSunsetPolicy));
      await sleep(1_500);
      expect(await watched.reloads()).toEqual({ success: 1, failure: 0 });
      expect(
        watched.logs.filter((line) => line.msg === 'version policy reload failed; the previous policy stays in force'),
      ).toEqual([]);
    },
  );

  it(
    'does not reload content that did not change (the same bytes written again, other files in the ' + 'directory)',
    async () => {
      const { dir, path } = policyDirectory();
      const watched = await start(path);
      writeFileSync(path, textOf(designPolicyFile));
      writeFileSync(join(dir, 'notes.txt'), 'unrelated');
      await sleep(1_000);
      expect(await watched.reloads()).toEqual({ success: 0, failure: 0 });
      expect(
        watched.logs.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('version policy reload')),
      ).toEqual([]);
    },
  );

  it('applies a file removed and written anew, without counting the moment it was missing', async () => {
    const { path } = policyDirectory();
    const watched = await start(path);
    rmSync(path);
    await sleep(500);
    expect(await watched.reloads()).toEqual({ success: 0, failure: 0 });
    writeFileSync(path, textOf(laterSunsetPolicy));
    await expect.poll(() => watched.servedSha256(), { timeout: APPLIED_WITHIN_MS }).toBe(digestOf(laterSunsetPolicy));
    expect(await watched.reloads()).toEqual({ success: 1, failure: 0 });
  });

  it('picks up the file again after its directory was removed and created anew', async () => {
    const { dir, path } = policyDirectory();
    gateway = await buildWatchedGateway(path, { checkIntervalMs: 300 });
    rmSync(dir, { recursive: true });
    await sleep(500);
    mkdirSync(dir);
    writeFileSync(path, textOf(laterSunsetPolicy));
    await expect.poll(() => gateway!.servedSha256(), { timeout: APPLIED_WITHIN_MS }).toBe(digestOf(laterSunsetPolicy));
    writeFileSync(path, textOf(designPolicyFile));
    await expect.poll(() => gateway!.servedSha256(), { timeout: APPLIED_WITHIN_MS }).toBe(digestOf(designPolicyFile));
  });

  it('watches nothing with API_VERSIONS_WATCH=false: a change waits for SIGHUP or POST /-/reload', async () => {
    const { path } = policyDirectory();
    const watched = await start(path, { watch: false });
    writeFileSync(path, textOf(laterSunsetPolicy));
    await sleep(1_000);
    expect(await watched.servedSha256()).toBe(digestOf(designPolicyFile));
    expect(await watched.app.versionPolicies.reload()).toEqual({ ok: true });
    expect(await watched.servedSha256()).toBe(digestOf(laterSunsetPolicy));
  });
});
