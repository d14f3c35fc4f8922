import { EventEmitter } from 'node:events';
import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { designPolicyFile } from '../support/helpers.js';
import {
  buildWatchedGateway,
  digestOf,
  laterSunsetPolicy,
  policyDirectory,
  type WatchedGateway,
} from './watch-support.js';

// A file system that never reports an event (some network file systems, a lost inotify event): fs.watch
// hands back a watcher that stays silent.
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const silentWatch = () => Object.assign(new EventEmitter(), { close: () => undefined });
  return { ...fs, default: { ...fs, watch: silentWatch }, watch: silentWatch };
});

let gateway: WatchedGateway | undefined;
afterEach(async () => {
  await gateway?.app.close();
});

describe('policy file watch without file events', () => {
  it('applies a change at the periodic content check', async () => {
    const { path } = policyDirectory();
    gateway = await buildWatchedGateway(path, { checkIntervalMs: 400 });
    expect(await gateway.servedSha256()).toBe(digestOf(designPolicyFile));
    writeFileSync(path, `${JSON.stringify(laterSunsetPolicy, null, 2)}\n`);
    await expect.poll(() => gateway!.servedSha256(), { timeout: 5_000 }).toBe(digestOf(laterSunsetPolicy));
    expect(await gateway.reloads()).toEqual({ success: 1, failure: 0 });
  });
});
