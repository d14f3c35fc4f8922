/**
 * Two built gateway processes on one PostgreSQL, as replicas of a fleet share it
 * (docs/consumers.md#consumers-and-api-keys):
 * keys issued or revoked on one apply on the other within 5 s, and both add to one ledger.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPostgres, type TestPostgres } from '../../platform/test/support/postgres.js';
import { startGateway } from '../e2e/process-stack.js';
import { startService, type ServiceProcess } from '../../platform/test/support/service-process.js';
import { eventually } from '../../platform/test/support/eventually.mjs';
import { consumerWithKey, consumersCli, statusWith } from './support.js';

let postgres: TestPostgres;
let databaseUrl: string;
let backend: ServiceProcess;
let a: ServiceProcess;
let b: ServiceProcess;

beforeAll(async () => {
  postgres = await startTestPostgres();
  databaseUrl = await postgres.createDatabase();
  backend = await startService('backend', { BACKEND_HOST: '127.0.0.1', BACKEND_PORT: '0', BACKEND_ADMIN_PORT: '0' });
  // Started together: the migration runs once, under the advisory lock.
  [a, b] = await Promise.all([
    startGateway(backend.apiUrl, { DATABASE_URL: databaseUrl }),
    startGateway(backend.apiUrl, { DATABASE_URL: databaseUrl }),
  ]);
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop(), backend?.stop()]);
  await postgres?.close();
});

describe('two gateway replicas on one PostgreSQL', () => {
  it('accept a key issued on the other within 5 s, and refuse it within 5 s of its revocation there', async () => {
    const { id, keyId, key } = await consumerWithKey(a, 'Fleet Consumer');
    expect(await statusWith(a, key)).toBe(200);
    await eventually('the key on the other replica', async () => (await statusWith(b, key)) === 200, {
      timeoutMs: 5_000,
    });
    expect((await fetch(`${a.adminUrl}/consumers/${id}/keys/${keyId}`, { method: 'DELETE' })).status).toBe(204);
    expect(await statusWith(a, key)).toBe(401);
    await eventually('the revocation on the other replica', async () => (await statusWith(b, key)) === 401, {
      timeoutMs: 5_000,
    });
  });

  it("add up one consumer's requests through both replicas in one ledger", async () => {
    const { id, key } = await consumerWithKey(b, 'Ledger Consumer');
    await eventually('the key on replica a', async () => (await statusWith(a, key)) === 200, { timeoutMs: 5_000 });
    for (let i = 0; i < 7; i++) expect(await statusWith(a, key, '/v1/orders/ord-1001')).toBe(200);
    for (let i = 0; i < 5; i++) expect(await statusWith(b, key, '/v1/orders/ord-1001')).toBe(200);
    // Counts are written within 10 s.
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      await eventually(
        'the counts of both replicas in the ledger',
        async () => {
          const { rows } = await client.query<{ requests: string }>(
            "SELECT sum(requests) AS requests FROM gateway.usage WHERE consumer_id = $1 AND operation = 'GET " +
              "/v1/orders/{id}'",
            [id],
          );
          return rows[0]?.requests === '12';
        },
        { timeoutMs: 12_000 },
      );
      const { rows } = await client.query<{ version: number }>(
        'SELECT version FROM gateway.first_uses WHERE consumer_id = $1 ORDER BY version',
        [id],
      );
      expect(rows.map(({ version }) => version)).toEqual([1, 2]);
    } finally {
      await client.end();
    }
  });
});

describe('npm run consumers', () => {
  it('creates a consumer, issues a key the gateway accepts, shows it and revokes it', async () => {
    const created = await consumersCli(a.adminUrl, ['create', 'CLI Team', '--email', 'cli@team.example']);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(created.stdout)).toMatchObject({
      id: 'cli-team',
      name: 'CLI Team',
      contact_email: 'cli@team.example',
      keys: [],
    });
    const issued = await consumersCli(a.adminUrl, ['add-key', 'cli-team']);
    expect(issued.code).toBe(0);
    const { key, key_id: keyId } = JSON.parse(issued.stdout) as { key: string; key_id: string };
    expect(await statusWith(a, key)).toBe(200);
    const shown = await consumersCli(a.adminUrl, ['show', 'cli-team']);
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: 'cli-team', keys: [{ key_id: keyId, revoked_at: null }] });
    expect(await consumersCli(a.adminUrl, ['revoke-key', 'cli-team', keyId])).toEqual({
      code: 0,
      stdout: `revoked ${keyId}\n`,
      stderr: '',
    });
    expect(await statusWith(a, key)).toBe(401);
  });

  it('prints the gateway refusal on stderr with exit 1, and the usage with exit 2', async () => {
    expect(await consumersCli(a.adminUrl, ['create', 'CLI Team'])).toEqual({
      code: 1,
      stdout: '',
      stderr: '409 consumer already exists: id "cli-team" is taken\n',
    });
    expect(await consumersCli(a.adminUrl, ['show', 'nobody'])).toEqual({
      code: 1,
      stdout: '',
      stderr: '404 consumer not found\n',
    });
    expect(await consumersCli(a.adminUrl, ['create', 'X', '--email', 'not-an-address'])).toEqual({
      code: 1,
      stdout: '',
      stderr: '400 invalid consumer: contact_email: must be an e-mail address\n',
    });
    const unknown = await consumersCli(a.adminUrl, ['rename', 'cli-team']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^unknown command "rename"\nusage: npm run consumers -- <command>/);
    const short = await consumersCli(a.adminUrl, ['show', 'x'], { ADMIN_TOKEN: 'short' });
    expect(short).toEqual({
      code: 2,
      stdout: '',
      stderr: 'invalid configuration: ADMIN_TOKEN: must be at least 16 characters (got 5; value not shown)\n',
    });
  });
});
