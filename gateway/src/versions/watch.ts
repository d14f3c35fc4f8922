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
/**
 * Content that a reload would refuse is read again this long after, and refused (logged and counted, once) only if
 * it is still the same: a file still being written (a `cp` or an editor on a slow or network file system, a
 * periodic check that lands mid-write) is applied once complete, without a failed reload before it.
 */
const CONFIRM_MS = 1_000;

export interface PolicyWatchOptions {
  /** API_VERSIONS_FILE. */
  path: string;
  policies: PolicyInForce;
  /** Injected so a test need not wait half a minute. */
  checkIntervalMs?: number;
  /** Injected so a test can tell a refusal from a file still being written; CONFIRM_MS by default. */
  confirmMs?: number;
  /** Injected so a test can stand for a file system that reports no events; fs.watch by default. */
  watchDirectory?: (directory: string, onEvent: () => void) => FSWatcher;
}

// persistent: false, so the watch alone never keeps the process alive.
const watchDirectoryEvents = (directory: string, onEvent: () => void): FSWatcher =>
  watch(directory, { persistent: false }, onEvent);

export interface PolicyWatch {
  close(): void;
}

/**
 * Applies a changed policy file without a signal (docs/replicas.md#policy-file-watch). It watches the
 * file's directory, not the file: a rename over the file, and the swap of a Kubernetes ConfigMap's
 * `..data` symlink, replace the file's inode, which a watch on the file never reports. Any event in the
 * directory only asks for a check; the check hashes the content, and only content that is neither the
 * policy in force nor the content last refused goes through `reload()`, the path SIGHUP takes: at once
 * when a reload would apply it, else once it has stayed the same for CONFIRM_MS (validate, then retry), so
 * a refusal is logged and counted once, for a complete file. A periodic check covers the events that
 * never come, and re-arms the watch when the directory was removed or replaced.
 */
export function watchPolicyFile({
  path,
  policies,
  checkIntervalMs = CHECK_INTERVAL_MS,
  confirmMs = CONFIRM_MS,
  watchDirectory = watchDirectoryEvents,
}: PolicyWatchOptions): PolicyWatch {
  const directory = dirname(path);
  let watcher: FSWatcher | undefined;
  let watchedInode: number | undefined;
  let settleTimer: NodeJS.Timeout | undefined;
  let confirmTimer: NodeJS.Timeout | undefined;
  let lastRefused: string | undefined;
  /** Content a reload would refuse, first read at `since`: refused only if still the same CONFIRM_MS later. */
  let suspect: { digest: string; since: number } | undefined;
  /** The content being validated or reloaded now (both read modules, asynchronously): a check meanwhile waits. */
  let deciding: string | undefined;

  const check = (): void => {
    let digest: string;
    try {
      digest = policyDigest(readFileSync(path));
    } catch {
      // Missing or unreadable for a moment while it is replaced: the next event or periodic check reads it again.
      return;
    }
    if (digest === policies.current.fileSha256 || digest === lastRefused) {
      suspect = undefined;
      return;
    }
    if (digest === deciding) return;
    deciding = digest;
    void decide(digest).finally(() => {
      deciding = undefined;
    });
  };

  /** Applies `digest`'s content now when a reload would, else once it has stayed the same for `confirmMs`. */
  const decide = async (digest: string): Promise<void> => {
    if (suspect?.digest !== digest) {
      if (!(await policies.validate()).ok) {
        suspect = { digest, since: Date.now() };
        scheduleConfirm();
        return;
      }
    } else {
      // Not yet CONFIRM_MS by Date.now(): an event meanwhile, or the confirm timer itself, which may fire a
      // little early by this clock (a timer counts from the event loop's cached time). Wait for the rest, not
      // for the next periodic check.
      const left = suspect.since + confirmMs - Date.now();
      if (left > 0) {
        scheduleConfirm(left);
        return;
      }
    }
    suspect = undefined;
    lastRefused = (await policies.reload()).ok ? undefined : digest;
  };

  const scheduleConfirm = (delayMs = confirmMs): void => {
    if (confirmTimer !== undefined) clearTimeout(confirmTimer);
    confirmTimer = setTimeout(() => {
      confirmTimer = undefined;
      check();
    }, delayMs);
    confirmTimer.unref();
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
      watcher = watchDirectory(directory, scheduleCheck);
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
      if (confirmTimer !== undefined) clearTimeout(confirmTimer);
      disarm();
    },
  };
}
