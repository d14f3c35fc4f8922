import { EventEmitter } from 'node:events';
import { mkdtempSync, writeFileSync, type FSWatcher } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { PolicyInForce } from '../../src/versions/in-force.js';
import { watchPolicyFile, type PolicyWatch } from '../../src/versions/watch.js';

const CONFIRM_MS = 200;

let watch: PolicyWatch | undefined;
afterEach(() => {
  watch?.close();
  vi.restoreAllMocks();
});

describe('policy file watch, a file a reload would refuse', () => {
  it('is refused once its confirm timer fires, even when Date.now() has not yet counted the whole wait', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'policy-confirm-'));
    const path = join(dir, 'versions.json');
    writeFileSync(path, '{"default_version": 2, "versions": []}\n');
    let reloads = 0;
    const policies = {
      current: { fileSha256: 'the policy in force' },
      validate: () => Promise.resolve({ ok: false }),
      reload: () => {
        reloads += 1;
        return Promise.resolve({ ok: false });
      },
    } as unknown as PolicyInForce;
    let onEvent: (() => void) | undefined;
    const watchDirectory = (_directory: string, event: () => void): FSWatcher => {
      onEvent = event;
      return Object.assign(new EventEmitter(), { close: () => undefined }) as FSWatcher;
    };
    // The suspect is first read at `since`; when the confirm timer fires, this clock is 1 ms short of the wait (a
    // timer counts from the event loop's cached time, which can be behind Date.now()); after that, the whole wait.
    const since = Date.now();
    const readings = [since, since + CONFIRM_MS - 1];
    vi.spyOn(Date, 'now').mockImplementation(() => readings.shift() ?? since + CONFIRM_MS);
    watch = watchPolicyFile({ path, policies, confirmMs: CONFIRM_MS, checkIntervalMs: 60_000, watchDirectory });

    onEvent?.();
    // Not before the wait: a file still being written would be refused half-written.
    await new Promise((resolve) => setTimeout(resolve, CONFIRM_MS / 2));
    expect(reloads).toBe(0);
    // Within a moment of the confirm timer, not at the next periodic check a minute later.
    await expect.poll(() => reloads, { timeout: CONFIRM_MS * 5, interval: 20 }).toBe(1);
  });
});
