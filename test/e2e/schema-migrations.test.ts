/**
 * Migrations as a step of their own (docs/deployment.md#kubernetes-with-postgresql): each process's migration command
 * applies its schema as the role that owns it, and the processes, started with DATABASE_MIGRATIONS=check as a role
 * that may not change the schema (the roles as docs/deployment.md creates them), wait for it, serve on it, and run on
 * it one release newer after a rollback. The built processes and commands, on a real PostgreSQL.
 */
import { spawn } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationEntries, repoRoot } from '../../scripts/paths.mjs';
import { gatewaySchema } from '../../gateway/src/database/migrate.js';
import { usersSchema } from '../../services/users-orders/src/users/postgres/migrate.js';

const GATEWAY_MIGRATE_COMMAND = gatewaySchema.migrateCommand;
const BACKEND_MIGRATE_COMMAND = usersSchema.migrateCommand;
import { consumerWithKey, statusWith } from '../consumers/support.js';
import { eventually } from '../../platform/test/support/eventually.mjs';
import { readRepoFile } from '../support/repo-file.js';
import { startTestPostgres, type TestPostgres } from '../../platform/test/support/postgres.js';
import { startGateway } from './process-stack.js';
import { startService, type ServiceProcess } from '../../platform/test/support/service-process.js';

const ROLES_HEADING = '#### The database and its two roles';
const DATABASE = 'router';
const MIGRATOR = 'router_migrator';
const APP = 'router_app';
const PASSWORD = 'role-password';

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startTestPostgres();
  await createRoles();
});
afterAll(async () => {
  await postgres?.close();
});

/** A URL of the test server for `database` as `role`. */
function urlAs(role: string, database = DATABASE): string {
  return `postgres://${role}:${PASSWORD}@127.0.0.1:${postgres.port}/${database}`;
}

/**
 * The SQL of the roles' section of docs/deployment.md: what runs on the server (the roles, the database), what runs in
 * the database (\connect, then the grants). `\password` is set here instead.
 */
function rolesSql(): { server: string[]; database: string[] } {
  const document = readRepoFile('docs/deployment.md');
  const block = /```sql\n([\s\S]*?)```/.exec(document.slice(document.indexOf(ROLES_HEADING)))?.[1];
  if (block === undefined) throw new Error(`no sql block under ${ROLES_HEADING}`);
  const lines = block
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('--'));
  const connect = lines.findIndex((line) => line === `\\connect ${DATABASE}`);
  if (connect === -1) throw new Error(`the sql block does not \\connect ${DATABASE}`);
  const server = lines
    .slice(0, connect)
    .map((line) => line.replace(/^\\password (\S+)$/, `ALTER ROLE $1 PASSWORD '${PASSWORD}'`));
  return { server, database: lines.slice(connect + 1) };
}

async function runAs(url: string, statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}

/** The superuser's URL for `database`. */
let superuser: (database: string) => string;

async function createRoles(): Promise<void> {
  const admin = new URL(await postgres.createDatabase());
  superuser = (database) => {
    const url = new URL(admin.href);
    url.pathname = `/${database}`;
    return url.href;
  };
  const { server, database } = rolesSql();
  await runAs(admin.href, server);
  await runAs(superuser(DATABASE), database);
}

/** One more database made as the section makes `router`: owned by the migrator, with the same grants. */
async function createDatabase(name: string): Promise<string> {
  const { server, database } = rolesSql();
  const creating = server.find((statement) => statement.startsWith(`CREATE DATABASE ${DATABASE} `));
  if (creating === undefined) throw new Error(`the sql block creates no database ${DATABASE}`);
  await runAs(superuser('postgres'), [creating.replace(`CREATE DATABASE ${DATABASE} `, `CREATE DATABASE ${name} `)]);
  await runAs(superuser(name), database);
  return name;
}

/** One migration command, run to its end. */
function runMigration(
  name: keyof typeof migrationEntries,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [migrationEntries[name]], {
      cwd: repoRoot,
      env: { ...process.env, LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Both migration commands as the Job runs them: as the owner of the schema. */
async function migrateAsJob(database = DATABASE): Promise<void> {
  for (const name of ['backend', 'gateway'] as const) {
    const result = await runMigration(name, { DATABASE_URL: urlAs(MIGRATOR, database) });
    expect(result.stderr, name).toBe('');
    expect(result.code, name).toBe(0);
    expect(result.stdout, name).toContain('"msg":"schema migrated"');
  }
}

const checking = (database = DATABASE) => ({ DATABASE_URL: urlAs(APP, database), DATABASE_MIGRATIONS: 'check' });

async function startBackend(env: Record<string, string>): Promise<ServiceProcess> {
  return startService('backend', { BACKEND_HOST: '127.0.0.1', BACKEND_PORT: '0', BACKEND_ADMIN_PORT: '0', ...env });
}

/** What a newer release's migration command does: its statements and history rows, in one transaction (one run_on). */
async function applyNewerRelease(
  database: string,
  table: string,
  statements: string[],
  migrations: string[],
): Promise<void> {
  const client = new pg.Client({ connectionString: urlAs(MIGRATOR, database) });
  await client.connect();
  try {
    await client.query('BEGIN');
    for (const statement of statements) await client.query(statement);
    for (const name of migrations) await client.query(`INSERT INTO ${table} (name, run_on) VALUES ($1, now())`, [name]);
    await client.query('COMMIT');
  } finally {
    await client.end();
  }
}

/** The warnings of the schema migrations and checks (the policy's own warnings are not about the schema). */
const warnings = (service: ServiceProcess) =>
  service.logs
    .filter((line) => line.level === 40 && line.component === 'migrations')
    .map(({ msg, migrations }) => ({ msg, migrations }));

describe('the migration commands', () => {
  it('are the built files the processes name in their refusals', () => {
    expect(BACKEND_MIGRATE_COMMAND).toBe(`node ${migrationEntries.backend}`);
    expect(GATEWAY_MIGRATE_COMMAND).toBe(`node ${migrationEntries.gateway}`);
  });

  it.each(['backend', 'gateway'] as const)(
    'of the %s refuse to run without DATABASE_URL, with one line',
    async (name) => {
      const result = await runMigration(name, { DATABASE_URL: '' });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        'invalid configuration: DATABASE_URL: must be set (the migration command applies the schema of that database)\n',
      );
    },
  );

  it.each(['backend', 'gateway'] as const)(
    'of the %s stop with one line, without the password, when the database cannot be reached',
    async (name) => {
      const result = await runMigration(name, { DATABASE_URL: 'postgres://router:secret-pw@127.0.0.1:1/router' });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        'cannot migrate: PostgreSQL schema migration failed: connect ECONNREFUSED 127.0.0.1:1\n',
      );
    },
  );
});

describe('processes that never change the schema (DATABASE_MIGRATIONS=check)', () => {
  it(
    "serve on the schema the Job's role applied, as a role that can read and write it but not change it",
    { timeout: 120_000 },
    async () => {
      await migrateAsJob();
      const backend = await startBackend(checking());
      const gateway = await startGateway(backend.apiUrl, checking());
      try {
        const created = await fetch(`${gateway.apiUrl}/api/users`, {
          method: 'POST',
          body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
        });
        expect(created.status).toBe(201);
        const { key } = await consumerWithKey(gateway, 'Roles Test');
        expect(await statusWith(gateway, key)).toBe(200);
        expect([...warnings(backend), ...warnings(gateway)]).toEqual([]);
      } finally {
        await Promise.all([gateway.stop(), backend.stop()]);
      }
      const client = new pg.Client({ connectionString: urlAs(APP) });
      await client.connect();
      try {
        for (const statement of [
          'CREATE TABLE public.intruder (a int)',
          'CREATE TABLE gateway.intruder (a int)',
          'ALTER TABLE users ADD COLUMN intruder int',
          'DROP TABLE gateway.consumers',
          'CREATE SCHEMA intruder',
        ]) {
          await expect(client.query(statement), statement).rejects.toMatchObject({ code: '42501' });
        }
      } finally {
        await client.end();
      }
    },
  );

  it('wait for the migration Job, then start', { timeout: 120_000 }, async () => {
    const database = await createDatabase(`${DATABASE}_waiting`);
    const starting = startBackend({ ...checking(database), DATABASE_MIGRATION_TIMEOUT_MS: '60000' });
    starting.catch(() => undefined);
    // Started before the Job: once it has read the (missing) history, the Job runs; the backend then starts.
    const observer = new pg.Client({ connectionString: superuser(database) });
    await observer.connect();
    try {
      await eventually(
        "the backend's first read of the migration history",
        async () => {
          const { rows } = await observer.query<{ reads: number }>(
            "SELECT count(*)::int AS reads FROM pg_stat_activity WHERE usename = $1 AND query LIKE '%pgmigrations%'",
            [APP],
          );
          return (rows[0]?.reads ?? 0) > 0;
        },
        { timeoutMs: 30_000 },
      );
    } finally {
      await observer.end();
    }
    await migrateAsJob(database);
    const backend = await starting;
    try {
      expect(backend.logs.find((line) => String(line.msg).startsWith('waiting for this backend'))).toMatchObject({
        msg: `waiting for this backend's schema migrations to be applied (\`${BACKEND_MIGRATE_COMMAND}\`)`,
        migrations: ['1764000000000_create-users', '1766000000000_create-idempotency-keys'],
      });
      expect((await fetch(`${backend.adminUrl}/readyz`)).status).toBe(200);
    } finally {
      await backend.stop();
    }
  });

  it.each([
    ['backend', BACKEND_MIGRATE_COMMAND, '1764000000000_create-users, 1766000000000_create-idempotency-keys'],
    [
      'gateway',
      GATEWAY_MIGRATE_COMMAND,
      '1764500000000_create-consumers, 1764600000000_create-notices, 1764700000000_add-consumer-pins, ' +
        '1764800000000_create-refusals, 1764900000000_create-request-fields',
    ],
  ] as const)(
    'the %s refuses, with one line, a schema still without its migrations once DATABASE_MIGRATION_TIMEOUT_MS passed',
    { timeout: 60_000 },
    async (name, command, migrations) => {
      const database = await createDatabase(`${DATABASE}_never_${name}`);
      const env = { ...checking(database), DATABASE_MIGRATION_TIMEOUT_MS: '1000', BACKEND_URL: 'http://127.0.0.1:1' };
      await expect(name === 'backend' ? startBackend(env) : startGateway('http://127.0.0.1:1', env)).rejects.toThrow(
        `${name} exited (1) before listening: cannot start: the PostgreSQL schema lacks this ${name}'s migrations ` +
          `${migrations} after waiting DATABASE_MIGRATION_TIMEOUT_MS (1000 ms); with DATABASE_MIGRATIONS=check it ` +
          `never applies them: run \`${command}\` first`,
      );
    },
  );

  it(
    'run on the schema one release newer after a rollback (kubectl rollout undo), and refuse two releases newer',
    { timeout: 120_000 },
    async () => {
      const database = await createDatabase(`${DATABASE}_rollback`);
      await migrateAsJob(database);
      const backend = await startBackend(checking(database));
      const ada = (await (
        await fetch(`${backend.apiUrl}/api/users`, {
          method: 'POST',
          body: JSON.stringify({ name: 'Grace', email: 'grace@example.com' }),
        })
      ).json()) as { id: string };
      await backend.stop();
      // The next release's Job (expand: it adds, it drops nothing this build reads).
      await applyNewerRelease(
        database,
        'public.pgmigrations',
        ['ALTER TABLE users ADD COLUMN nickname text'],
        ['1900000000000_add-nickname'],
      );
      await applyNewerRelease(
        database,
        'gateway.pgmigrations',
        ['ALTER TABLE gateway.consumers ADD COLUMN team text'],
        ['1900000000000_add-consumer-team'],
      );
      // The build before it, started again as `kubectl rollout undo` starts it.
      const previous = await startBackend(checking(database));
      const gateway = await startGateway(previous.apiUrl, checking(database));
      try {
        expect(warnings(previous)).toEqual([
          {
            msg: 'the PostgreSQL schema is one release newer than this backend knows (a rollback?); running on it',
            migrations: ['1900000000000_add-nickname'],
          },
        ]);
        expect(warnings(gateway)).toEqual([
          {
            msg: 'the PostgreSQL schema is one release newer than this gateway knows (a rollback?); running on it',
            migrations: ['1900000000000_add-consumer-team'],
          },
        ]);
        expect((await fetch(`${gateway.apiUrl}/api/users/${ada.id}`)).status).toBe(200);
        const created = await fetch(`${gateway.apiUrl}/api/users`, {
          method: 'POST',
          body: JSON.stringify({ name: 'Hedy', email: 'hedy@example.com' }),
        });
        expect(created.status).toBe(201);
        const { key } = await consumerWithKey(gateway, 'After Rollback');
        expect(await statusWith(gateway, key)).toBe(200);
      } finally {
        await Promise.all([gateway.stop(), previous.stop()]);
      }
      await applyNewerRelease(database, 'public.pgmigrations', [], ['1900000000001_from-the-one-after']);
      await expect(startBackend(checking(database))).rejects.toThrow(
        'backend exited (1) before listening: cannot start: the PostgreSQL schema is 2 releases newer than this ' +
          'backend knows (migrations 1900000000000_add-nickname, 1900000000001_from-the-one-after were applied by ' +
          'newer versions); a version runs on a schema at most one release newer: run a newer one',
      );
    },
  );
});
