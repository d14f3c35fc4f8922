/**
 * Gateway and backend given one PostgreSQL database (docs/consumers.md#consumers-and-api-keys): the backend's
 * tables and migration history in `public`, the gateway's in `gateway`, so both start, both work, and each
 * sees only its own migrations, across restarts too.
 */
import { readdirSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/paths.mjs';
import { startTestPostgres, type TestPostgres } from '../../platform/test/support/postgres.js';
import { startGateway } from '../e2e/process-stack.js';
import { startService, type ServiceProcess } from '../../platform/test/support/service-process.js';
import { consumerWithKey } from './support.js';

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startTestPostgres();
});
afterAll(async () => {
  await postgres?.close();
});

const migrationsIn = (dir: string): string[] =>
  readdirSync(join(repoRoot, dir))
    .filter((file) => file.endsWith('.ts'))
    .map((file) => basename(file, extname(file)))
    .sort();

async function startBoth(url: string): Promise<[ServiceProcess, ServiceProcess]> {
  const backend = await startService('backend', {
    BACKEND_HOST: '127.0.0.1',
    BACKEND_PORT: '0',
    BACKEND_ADMIN_PORT: '0',
    DATABASE_URL: url,
  });
  const gateway = await startGateway(backend.apiUrl, { DATABASE_URL: url });
  return [backend, gateway];
}

it(
  'runs gateway and backend migrated into one database without a clash: both work, each keeps its own history, both ' +
    'restart',
  { timeout: 120_000 },
  async () => {
    const url = await postgres.createDatabase();
    for (let run = 0; run < 2; run++) {
      const [backend, gateway] = await startBoth(url);
      try {
        const created = await fetch(`${gateway.apiUrl}/api/users`, {
          method: 'POST',
          body: JSON.stringify({ name: `run ${run}`, email: `run${run}@example.com` }),
        });
        expect(created.status).toBe(201);
        const { key } = await consumerWithKey(gateway, `Shared Run ${run}`);
        const listed = await fetch(`${gateway.apiUrl}/api/users`, { headers: { 'api-key': key } });
        expect(((await listed.json()) as unknown[]).length).toBe(run + 1);
      } finally {
        await Promise.all([gateway.stop(), backend.stop()]);
      }
    }
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const names = async (table: string) =>
        (await client.query<{ name: string }>(`SELECT name FROM ${table} ORDER BY name`)).rows.map(({ name }) => name);
      expect(await names('public.pgmigrations')).toEqual(
        migrationsIn('services/users-orders/src/users/postgres/migrations'),
      );
      expect(await names('gateway.pgmigrations')).toEqual(migrationsIn('gateway/src/database/migrations'));
      const tables = await client.query<{ schema: string; name: string }>(
        'SELECT table_schema AS schema, table_name AS name FROM information_schema.tables WHERE table_schema IN ' +
          "('public', 'gateway') ORDER BY 1, 2",
      );
      expect(tables.rows.filter(({ schema }) => schema === 'public').map(({ name }) => name)).toEqual([
        'idempotency_keys',
        'pgmigrations',
        'user_id_counter',
        'users',
      ]);
      expect(tables.rows.filter(({ schema }) => schema === 'gateway').map(({ name }) => name)).toEqual([
        'api_keys',
        'changes',
        'consumers',
        'first_uses',
        'notices',
        'pgmigrations',
        'refusals',
        'request_fields',
        'usage',
      ]);
    } finally {
      await client.end();
    }
  },
);
