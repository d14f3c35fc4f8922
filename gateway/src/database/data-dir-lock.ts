import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The file that says which process holds the embedded store's directory. */
const LOCK_FILE = 'gateway.pid';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Claims GATEWAY_DATA_DIR for this process: the embedded database has a single writer, and two processes on
 * one directory would corrupt it. Like PostgreSQL's postmaster.pid: a lock left by a process that is gone
 * (or by this very pid, as after a container restart) is taken over. Answers the release.
 */
export function lockDataDir(dataDir: string): () => void {
  const path = join(dataDir, LOCK_FILE);
  for (;;) {
    try {
      mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      writeFileSync(path, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      return () => rmSync(path, { force: true });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST')
        throw new Error(`GATEWAY_DATA_DIR: cannot write ${path} (${code ?? (err as Error).message})`);
    }
    const holder = Number.parseInt(readFileSync(path, 'utf8'), 10);
    if (Number.isInteger(holder) && holder !== process.pid && alive(holder)) {
      throw new Error(
        `GATEWAY_DATA_DIR: ${dataDir} is in use by process ${holder} (another gateway?); stop it, or remove ${path} ` +
          `if no gateway runs`,
      );
    }
    rmSync(path, { force: true });
  }
}
