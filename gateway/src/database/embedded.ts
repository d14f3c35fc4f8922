import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Logger } from 'pino';
import { lockDataDir } from './data-dir-lock.js';

/**
 * PostgreSQL's memory settings for a store of a few thousand rows: its defaults (128 MB of shared buffers)
 * are sized for a server, and in PGlite every byte of them is the serving process's memory.
 */
const POSTGRESQL_CONF = [
  'shared_buffers = 8MB',
  'wal_buffers = 256kB',
  'temp_buffers = 1MB',
  'work_mem = 1MB',
  'maintenance_work_mem = 2MB',
];

/**
 * V8 compiles PGlite's WebAssembly a second time with its optimising compiler once it runs hot, which costs
 * the serving process a few hundred MB; the baseline compiler alone is fast enough for a store the gateway
 * touches a few times a second (its key poll and usage flush). Measured in bench/README.md "Consumer keys".
 */
const NODE_OPTIONS = ['--no-wasm-tier-up', '--max-old-space-size=64'];

/**
 * The child programs in ./embedded/, started as files: compiled JavaScript beside this module in dist/, TypeScript
 * beside it in src/ under the tests (Node strips their types).
 */
const program = (name: 'initialize' | 'serve'): string =>
  fileURLToPath(new URL(`./embedded/${name}${extname(fileURLToPath(import.meta.url))}`, import.meta.url));

/** The embedded PostgreSQL as a running server the store's pool connects to, and how to stop it. */
export interface EmbeddedServer {
  /** A postgres:// URL naming the server's Unix socket. */
  url: string;
  close(): Promise<void>;
}

/**
 * Starts the serving process; resolves once its socket listens, rejects with its last stderr line if it exits first.
 */
function serve(directory: string, socketPath: string): Promise<{ stop(): Promise<void> }> {
  const args = [directory, socketPath, JSON.stringify(POSTGRESQL_CONF)];
  const child = spawn(process.execPath, [...NODE_OPTIONS, program('serve'), ...args], {
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4096);
    process.stderr.write(chunk);
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  return new Promise((done, fail) => {
    child.once('message', () =>
      done({
        async stop() {
          if (child.connected) child.disconnect();
          await exited;
        },
      }),
    );
    child.once('exit', (code, signal) => {
      const last = stderr.trim().split('\n').pop() ?? '';
      fail(
        new Error(
          `the embedded store's process exited (${signal ?? `code ${String(code)}`})${last === '' ? '' : `: ${last}`}`,
        ),
      );
    });
  });
}

/**
 * PGlite (PostgreSQL compiled to WebAssembly) with its data in `dataDir`, served by a child process on a Unix
 * socket in a new private directory (mode 0700: only this user can connect), so the store runs the same SQL
 * and migrations through the same pg Pool as on a PostgreSQL server. A process of its own keeps PGlite's
 * memory (bench/README.md "Consumer keys") out of the gateway's heap and V8 flags; a gateway with
 * DATABASE_URL never starts it. The child ends when the gateway closes the store or dies.
 */
export async function startEmbeddedServer(dataDir: string, logger: Logger): Promise<EmbeddedServer> {
  const release = lockDataDir(dataDir);
  const socketDir = await mkdtemp(join(tmpdir(), 'gateway-store-'));
  const cleanUp = async (): Promise<void> => {
    await rm(socketDir, { recursive: true, force: true });
    release();
  };
  try {
    const directory = resolve(dataDir);
    if (!existsSync(join(directory, 'PG_VERSION'))) {
      // The one slow step of a start (initdb in WebAssembly), silent otherwise: `npm start` shows this line.
      logger.info(
        { dataDir: directory },
        'creating the embedded consumer store: tens of seconds, on its first start only',
      );
      await promisify(execFile)(process.execPath, [program('initialize'), directory, JSON.stringify(POSTGRESQL_CONF)]);
    }
    const server = await serve(directory, join(socketDir, '.s.PGSQL.5432'));
    return {
      url: `postgres://postgres@localhost/postgres?host=${socketDir}`,
      async close() {
        await server.stop();
        await cleanUp();
      },
    };
  } catch (err) {
    await cleanUp();
    throw err;
  }
}
