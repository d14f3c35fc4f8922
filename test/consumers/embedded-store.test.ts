/**
 * The built gateway without DATABASE_URL: its consumers, keys and ledger in the embedded store in
 * GATEWAY_DATA_DIR, kept across a restart; one process per directory; and no key in any line it logs, at
 * debug level, whatever it did with the key.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORDERS_V1_CHANGES } from '../../gateway/test/support/orders-v1.js';
import { entries, repoRoot } from '../../scripts/paths.mjs';
import { startService, type ServiceProcess } from '../../platform/test/support/service-process.js';
import { deprecatedAroundNow } from '../support/dates.js';
import { consumerWithKey, statusWith } from './support.js';

/** PGlite's first start creates its database: tens of seconds of CPU on a loaded machine. */
const EMBEDDED_START_MS = 120_000;
/** What the gateway logs while it creates a new store's database. */
const CREATING = 'creating the embedded consumer store: tens of seconds, on its first start only';

let backend: ServiceProcess;
const dataDir = join(mkdtempSync(join(tmpdir(), 'gateway-data-')), 'gateway');
const policyFile = join(mkdtempSync(join(tmpdir(), 'gateway-policy-')), 'versions.json');
/** The shipped policy with v1, deprecated around now, requiring keys and closing to new consumers at `closedAt`. */
const closingPolicy = (closedAt: Date) => ({
  default_version: 2,
  versions: [
    {
      version: 1,
      status: 'deprecated',
      ...deprecatedAroundNow(),
      successor: 2,
      consumer_key: 'required',
      closed_to_new: closedAt.toISOString(),
      changes: ORDERS_V1_CHANGES,
    },
    { version: 2, status: 'current' },
  ],
});
writeFileSync(policyFile, readFileSync(join(repoRoot, 'ops/versions.json')));
const gatewayEnv = {
  GATEWAY_HOST: '127.0.0.1',
  GATEWAY_PORT: '0',
  GATEWAY_ADMIN_PORT: '0',
  DATABASE_URL: '',
  GATEWAY_DATA_DIR: dataDir,
  API_VERSIONS_FILE: policyFile,
  API_VERSIONS_WATCH: 'false',
};
/** Every line every gateway of this file wrote. */
const outputs: string[] = [];

async function startEmbedded(): Promise<ServiceProcess> {
  const gateway = await startService(
    'gateway',
    { ...gatewayEnv, BACKEND_URL: backend.apiUrl, LOG_LEVEL: 'debug' },
    repoRoot,
    { startTimeoutMs: EMBEDDED_START_MS },
  );
  void gateway.exited.then(() => outputs.push(gateway.output()));
  return gateway;
}

beforeAll(async () => {
  backend = await startService('backend', { BACKEND_HOST: '127.0.0.1', BACKEND_PORT: '0', BACKEND_ADMIN_PORT: '0' });
}, EMBEDDED_START_MS);
afterAll(async () => {
  await backend?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the embedded consumer store', () => {
  const issued: { id: string; keyId: string; key: string }[] = [];

  it(
    'keeps consumers, keys and first uses across a restart of the gateway, and refuses a second gateway on its ' +
      'directory',
    async () => {
      const first = await startEmbedded();
      expect(first.logs.find((line) => line.msg === 'consumer store open')).toMatchObject({
        consumerStore: 'embedded',
        dataDir,
      });
      // The slow step of a first start says what it is doing; a restart on the same directory skips it.
      expect(first.logs.filter((line) => line.msg === CREATING).map((line) => line.dataDir)).toEqual([dataDir]);
      const kept = await consumerWithKey(first, 'Kept Consumer');
      const revoked = await consumerWithKey(first, 'Revoked Consumer');
      const newcomer = await consumerWithKey(first, 'Newcomer');
      issued.push(kept, revoked, newcomer);
      // v1 closes to new consumers a few seconds from now: a first use before then must outlive the restart.
      const closedAt = new Date(Math.ceil((Date.now() + 8_000) / 1000) * 1000);
      writeFileSync(policyFile, JSON.stringify(closingPolicy(closedAt)));
      expect((await fetch(`${first.adminUrl}/-/reload`, { method: 'POST' })).status).toBe(200);
      for (let i = 0; i < 3; i++) expect(await statusWith(first, kept.key, '/v1/orders/ord-1001')).toBe(200);
      expect(Date.now()).toBeLessThan(closedAt.getTime());
      expect(
        (await fetch(`${first.adminUrl}/consumers/${revoked.id}/keys/${revoked.keyId}`, { method: 'DELETE' })).status,
      ).toBe(204);

      const second = spawnSync(process.execPath, [entries.gateway], {
        cwd: repoRoot,
        env: { ...process.env, ...gatewayEnv, LOG_LEVEL: 'silent' },
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(second.status).toBe(1);
      expect(second.stderr).toBe(
        `cannot start: GATEWAY_DATA_DIR: ${dataDir} is in use by process ${first.child.pid} (another gateway?); ` +
          `stop it, or remove ${join(dataDir, 'gateway.pid')} if no gateway runs\n`,
      );
      expect(await first.stop()).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, closedAt.getTime() - Date.now())));

      const restarted = await startEmbedded();
      try {
        expect(restarted.logs.filter((line) => line.msg === CREATING)).toEqual([]);
        expect(await statusWith(restarted, kept.key, '/v1/orders/ord-1001')).toBe(200);
        expect(await statusWith(restarted, newcomer.key, '/v1/orders/ord-1001')).toBe(403);
        expect(await statusWith(restarted, newcomer.key)).toBe(200);
        expect(await statusWith(restarted, revoked.key)).toBe(401);
        const shown = (await (await fetch(`${restarted.adminUrl}/consumers/${kept.id}`)).json()) as {
          keys: { key_id: string }[];
        };
        expect(shown.keys.map(({ key_id }) => key_id)).toEqual([kept.keyId]);
      } finally {
        expect(await restarted.stop()).toBe(0);
      }
    },
    3 * EMBEDDED_START_MS,
  );

  it('never writes a key to its log, at debug level', async () => {
    expect(issued).toHaveLength(3);
    await expect.poll(() => outputs.length).toBe(2);
    const lines = outputs.join('').split('\n');
    expect(lines.length).toBeGreaterThan(20);
    for (const { key } of issued) {
      // The whole key, and its secret part alone.
      const leaks = lines.filter((line) => line.includes(key) || line.includes(key.slice(16)));
      expect(leaks).toEqual([]);
    }
  });
});

describe('a gateway whose store cannot be opened', () => {
  it('stops with one line, without the password, when its PostgreSQL cannot be reached', () => {
    const result = spawnSync(process.execPath, [entries.gateway], {
      cwd: repoRoot,
      env: {
        ...process.env,
        GATEWAY_HOST: '127.0.0.1',
        GATEWAY_PORT: '0',
        GATEWAY_ADMIN_PORT: '0',
        LOG_LEVEL: 'silent',
        DATABASE_URL: 'postgres://gw:secret-pw@127.0.0.1:1/none',
      },
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe('cannot start: PostgreSQL schema migration failed: connect ECONNREFUSED 127.0.0.1:1\n');
  });

  it('stops with one line naming GATEWAY_DATA_DIR when the directory cannot be made', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'gateway-data-')), 'a-file');
    writeFileSync(file, '');
    const result = spawnSync(process.execPath, [entries.gateway], {
      cwd: repoRoot,
      env: {
        ...process.env,
        GATEWAY_HOST: '127.0.0.1',
        GATEWAY_PORT: '0',
        GATEWAY_ADMIN_PORT: '0',
        LOG_LEVEL: 'silent',
        DATABASE_URL: '',
        GATEWAY_DATA_DIR: join(file, 'gateway'),
      },
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      `cannot start: GATEWAY_DATA_DIR: cannot write ${join(file, 'gateway', 'gateway.pid')} (ENOTDIR)\n`,
    );
  });
});
