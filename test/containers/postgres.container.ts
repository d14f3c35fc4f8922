/**
 * The PostgreSQL variant as docs/deployment.md#users-in-postgresql-with-compose runs it:
 * docker-compose.yml + docker-compose.postgres.yml
 * (plus the test overlay compose.test.yml, and on machines without a registry the stand-in
 * overlays, PostgreSQL from Debian's package included), built from this working tree. The shared
 * end-to-end scenarios run through the gateway against users stored in PostgreSQL; then what only
 * this variant has: users outlive the backend and the database containers (the named volume), the
 * backend stays ready while its database is down (db_up 0, users 503, orders 200), and the database
 * container is hardened.
 *
 * Its own compose project (gateway, backend, postgres and the test's admin relay; no monitoring),
 * random host ports, always removed with its volumes at the end.
 */
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerScenarios } from '../e2e/scenarios.js';
import type { StackEndpoints } from '../e2e/stack.js';
import { repoRoot } from '../../scripts/paths.mjs';
import { eventually } from '../../platform/test/support/eventually.mjs';
import { ComposeProject, healthy, inspect, waitForContainer } from './docker.js';
import { findEngine } from './engine.js';

const PROJECT = 'version-router-test-postgres';
const engine = await findEngine();
const composeFiles = [
  'docker-compose.yml',
  'docker-compose.postgres.yml',
  'test/containers/compose.test.yml',
  ...(engine.standin ? ['test/containers/compose.standin.yml', 'test/containers/compose.standin.postgres.yml'] : []),
];
/** What the test starts: the relay publishes the backend's admin port for the scenarios' health checks. */
const SERVICES = ['gateway', 'backend-admin-relay'];

interface User {
  id: string;
  name: string;
  email: string;
  created_at: string;
  updated_at: string;
}

describe.skipIf(!engine.reachable)(
  `docker compose PostgreSQL variant${engine.reachable ? '' : ` (skipped: no Docker engine: ${engine.reason})`}`,
  () => {
    const testDir = mkdtempSync(join(tmpdir(), 'version-router-postgres-'));
    const policyCopy = join(testDir, 'versions.json');
    const project = new ComposeProject(
      repoRoot,
      PROJECT,
      composeFiles,
      { VERSION_ROUTER_TEST_DIR: testDir },
      '127.0.0.1',
    );
    let endpoints: StackEndpoints | undefined;

    const stack = (): StackEndpoints => {
      if (endpoints === undefined) throw new Error('the compose stack is not running');
      return endpoints;
    };
    /** Published host ports may change when a container restarts: read them again. */
    const refreshEndpoints = async (): Promise<void> => {
      endpoints = await project.stackEndpoints(policyCopy);
    };
    const createUser = async (name: string): Promise<User> => {
      const response = await fetch(`${stack().gatewayUrl}/api/users`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name, email: `${name.toLowerCase()}@example.com` }),
      });
      expect(response.status).toBe(201);
      return (await response.json()) as User;
    };
    const readUser = async (id: string): Promise<{ status: number; body: unknown }> => {
      const response = await fetch(`${stack().gatewayUrl}/api/users/${id}`);
      return { status: response.status, body: await response.json() };
    };
    const backendReady = async (): Promise<number> => (await fetch(`${stack().backendAdminUrl}/readyz`)).status;
    /** The backend's db_up at a scrape of its /metrics now. */
    const databaseUp = async (): Promise<string | undefined> =>
      /^db_up (\S+)$/m.exec(await (await fetch(`${stack().backendAdminUrl}/metrics`)).text())?.[1];
    /**
     * `docker compose restart` of one service, then PostgreSQL healthy, both processes ready and the backend reaching
     * it again.
     */
    const restart = async (service: string): Promise<void> => {
      await project.run(['restart', service], 90_000);
      await waitForContainer(await project.containerId('postgres'), 'healthy', healthy, 120_000);
      await eventually(
        'the backend /readyz to answer 200',
        async () => ((await backendReady().catch(() => 0)) === 200 ? true : undefined),
        { timeoutMs: 60_000, intervalMs: 500 },
      );
      await eventually(
        'the backend db_up to be 1',
        async () => ((await databaseUp().catch(() => undefined)) === '1' ? true : undefined),
        { timeoutMs: 60_000, intervalMs: 500 },
      );
      await eventually(
        'the gateway /readyz to answer 200',
        async () =>
          (await fetch(`${stack().gatewayAdminUrl}/readyz`).then(
            (r) => r.status,
            () => 0,
          )) === 200,
        { timeoutMs: 60_000, intervalMs: 500 },
      );
    };

    beforeAll(async () => {
      chmodSync(testDir, 0o755);
      copyFileSync(join(repoRoot, 'ops/versions.json'), policyCopy);
      process.stdout.write(
        `container suite: PostgreSQL variant on ${engine.standin ? 'stand-in' : 'official'} images, overlays ` +
          `${composeFiles.slice(1).join(', ')}\n`,
      );
      // A run that was killed leaves its containers and volume behind (no Ryuk: it needs a registry).
      await project.run(['down', '--volumes', '--remove-orphans', '--timeout', '25'], 120_000);
      // --wait: every started container healthy (postgres by pg_isready, the others by /readyz).
      await project.run(['up', '--detach', '--build', '--wait', '--wait-timeout', '300', ...SERVICES], 20 * 60_000);
      await refreshEndpoints();
    });

    afterAll(async () => {
      await project.run(['down', '--volumes', '--remove-orphans', '--timeout', '25'], 120_000).catch((err: unknown) => {
        process.stdout.write(`container suite: removing ${PROJECT} failed: ${String(err)}\n`);
      });
      rmSync(testDir, { recursive: true, force: true });
    });

    describe('end-to-end scenarios shared with the process-based suite, users in PostgreSQL', () => {
      registerScenarios(stack);
    });

    describe('users live in the database, not in a process', () => {
      it('a user created before restarting the backend, then PostgreSQL, reads back unchanged after each', async () => {
        const user = await createUser('Durable');
        await restart('backend');
        expect(await readUser(user.id)).toEqual({ status: 200, body: user });
        await restart('postgres');
        expect(await readUser(user.id)).toEqual({ status: 200, body: user });
        // The next id follows on: the numbering is the database's, not a fresh process's.
        const next = await createUser('Next');
        expect(Number(next.id.slice('user-'.length))).toBeGreaterThan(Number(user.id.slice('user-'.length)));
      });

      it(
        'the backend stays ready while PostgreSQL is stopped (db_up 0, users 503, orders 200), and serves users ' +
          'again once it is back',
        async () => {
          const user = await createUser('Outage');
          expect(await backendReady()).toBe(200);
          try {
            await project.run(['stop', 'postgres'], 90_000);
            await eventually(
              'the backend db_up to be 0',
              async () => ((await databaseUp()) === '0' ? true : undefined),
              {
                timeoutMs: 30_000,
                intervalMs: 500,
              },
            );
            // Readiness is this replica's own: a database every replica shares does not take it out of rotation.
            expect(await backendReady()).toBe(200);
            expect(await readUser(user.id)).toEqual({ status: 503, body: { error: 'storage unavailable', code: 503 } });
            expect((await fetch(`${stack().gatewayUrl}/v2/orders/ord-1001`)).status).toBe(200);
            expect((await fetch(`${stack().backendAdminUrl}/healthz`)).status).toBe(200);
          } finally {
            await project.run(['start', 'postgres'], 90_000);
          }
          await eventually('the backend db_up to be 1', async () => ((await databaseUp()) === '1' ? true : undefined), {
            timeoutMs: 60_000,
            intervalMs: 500,
          });
          expect(await readUser(user.id)).toEqual({ status: 200, body: user });
        },
      );
    });

    it(
      'runs PostgreSQL as its own non-root user, read-only root filesystem, no capabilities, data on the named ' +
        'volume',
      async () => {
        const container = await inspect(await project.containerId('postgres'));
        expect(container.Config.User).toBe('postgres');
        expect(container.HostConfig.ReadonlyRootfs).toBe(true);
        expect(container.HostConfig.CapDrop).toEqual(['ALL']);
        expect(container.HostConfig.SecurityOpt).toContain('no-new-privileges:true');
        expect(
          Object.values(container.HostConfig.PortBindings ?? {}).flatMap((bound) => bound ?? []),
          'host port bindings of postgres',
        ).toEqual([]);
        expect(container.Mounts.find((mount) => mount.Destination === '/var/lib/postgresql/data')).toMatchObject({
          Type: 'volume',
          Name: `${PROJECT}_postgres-data`,
        });
      },
    );
  },
);
