import { readFileSync, statSync, watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';
import type { PolicyInForce } from './in-force.js';
import { policyDigest } from './policy-file.js';

/** How often the file's content is hashed when no event came (network file systems, lost events). */
const CHECK_INTERVAL_MS = 30_000;
/**
 * How long after the last event the file is read: an in-place write is a truncate then one or more
 * writes, each an event, and reading between them would see a half-written file.
 */
const SETTLE_MS = 150;

export interface PolicyWatchOptions {
  /** API_VERSIONS_FILE. */
  path: string;
  policies: PolicyInForce;
  /** Injected so a test need not wait half a minute. */
  checkIntervalMs?: number;
}

export interface PolicyWatch {
  close(): void;
}

/**
 * Applies a changed policy file without a signal (docs/behaviour.md#policy-file-watch). It watches the
 * file's directory, not the file: a rename over the file, and the swap of a Kubernetes ConfigMap's
 * `..data` symlink, replace the file's inode, which a watch on the file never reports. Any event in the
 * directory only asks for a check; the check hashes the content, and only content that is neither the
 * policy in force nor the content last refused goes through `reload()`, the path SIGHUP takes. A
 * periodic check covers the events that never come, and re-arms the watch when the directory was
 * removed or replaced.
 */
export function watchPolicyFile({
  path,
  policies,
  checkIntervalMs = CHECK_INTERVAL_MS,
}: PolicyWatchOptions): PolicyWatch {
  const directory = dirname(path);
  let watcher: FSWatcher | undefined;
  let watchedInode: number | undefined;
  let settleTimer: NodeJS.Timeout | undefined;
  let lastRefused: string | undefined;
  /** The content a reload is reading now: a check meanwhile does not ask again. */
  let reloading: string | undefined;

  const check = (): void => {
    let digest: string;
    try {
      digest = policyDigest(readFileSync(path));
    } catch {
      // Missing or unreadable for a moment while it is replaced: the next event or periodic check reads it again.
      return;
    }
    if (digest === policies.current.fileSha256 || digest === lastRefused || digest === reloading) return;
    reloading = digest;
    void policies.reload().then((result) => {
      reloading = undefined;
      lastRefused = result.ok ? undefined : digest;
    });
  };

  const scheduleCheck = (): void => {
    if (settleTimer !== undefined) clearTimeout(settleTimer);
    settleTimer = setTimeout(() => {
      settleTimer = undefined;
      check();
    }, SETTLE_MS);
    settleTimer.unref();
  };

  const disarm = (): void => {
    watcher?.close();
    watcher = undefined;
  };

  const arm = (): void => {
    let inode: number;
    try {
      inode = statSync(directory).ino;
    } catch {
      disarm();
      return;
    }
    if (watcher !== undefined && inode === watchedInode) return;
    disarm();
    try {
      // persistent: false, so the watch alone never keeps the process alive.
      watcher = watch(directory, { persistent: false }, scheduleCheck);
      watcher.on('error', disarm);
      watchedInode = inode;
    } catch {
      watcher = undefined;
    }
  };

  arm();
  const interval = setInterval(() => {
    arm();
    check();
  }, checkIntervalMs);
  interval.unref();

  return {
    close() {
      clearInterval(interval);
      if (settleTimer !== undefined) clearTimeout(settleTimer);
      disarm();
    },
  };
}
