import { EventEmitter } from 'node:events';
import { writeFileSync, type FSWatcher } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { designPolicyFile } from '../support/helpers.js';
import {
  buildWatchedGateway,
  digestOf,
  laterSunsetPolicy,
  policyDirectory,
  type WatchedGateway,
} from './watch-support.js';

/**
 * A file system that never reports an event (some network file systems, a lost inotify event): the watch on the
 * directory stays silent.
 */
const silentlyWatched: string[] = [];
const silentWatch = (directory: string): FSWatcher => {
  silentlyWatched.push(directory);
  return Object.assign(new EventEmitter(), { close: () => undefined }) as FSWatcher;
};

let gateway: WatchedGateway | undefined;
afterEach(async () => {
  await gateway?.app.close();
});

describe('policy file watch without file events', () => {
  it('applies a change at the periodic content check', async () => {
    const { dir, path } = policyDirectory();
    gateway = await buildWatchedGateway(path, { checkIntervalMs: 400, watchDirectory: silentWatch });
    expect(silentlyWatched).toEqual([dir]);
    expect(await gateway.servedSha256()).toBe(digestOf(designPolicyFile));
    writeFileSync(path, `${JSON.stringify(laterSunsetPolicy, null, 2)}\n`);
    await expect.poll(() => gateway!.servedSha256(), { timeout: 5_000 }).toBe(digestOf(laterSunsetPolicy));
    expect(await gateway.reloads()).toEqual({ success: 1, failure: 0 });
  });
});
