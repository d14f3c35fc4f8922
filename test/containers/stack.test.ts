/**
 * The docker compose stack under testcontainers (issue 5): builds the images, starts
 * docker-compose.yml with the test overlay (compose.test.yml: random host ports, backend admin
 * relay), waits until every container's healthcheck reports healthy, then runs the same
 * end-to-end scenarios as the process-based suite, plus what only the container stack has:
 * the backend is not published, Prometheus scrapes both services, Grafana serves the dashboard.
 *
 * Run through `npm run test:containers` (run.mjs), which skips the whole suite with one line
 * where no Docker engine is reachable. Run directly without an engine, the suite is skipped too.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DockerComposeEnvironment,
  Wait,
  getContainerRuntimeClient,
  type StartedDockerComposeEnvironment,
  type StartedTestContainer,
} from 'testcontainers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerScenarios } from '../e2e/scenarios.js';
import type { StackEndpoints } from '../e2e/stack.js';
import { repoRoot } from '../static/container-files.js';

const composeFiles = ['docker-compose.yml', 'test/containers/compose.test.yml'];

const engine = await getContainerRuntimeClient().then(
  () => ({ reachable: true, reason: '' }),
  (err: unknown) => ({ reachable: false, reason: err instanceof Error ? err.message : String(err) }),
);

describe.skipIf(!engine.reachable)(`docker compose stack${engine.reachable ? '' : ` (skipped: no Docker engine: ${engine.reason})`}`, () => {
  let environment: StartedDockerComposeEnvironment | undefined;
  let endpoints: StackEndpoints | undefined;

  /** Compose names containers <project>-<service>-<n>; testcontainers strips the project. */
  const container = (service: string): StartedTestContainer => {
    if (environment === undefined) throw new Error('the compose stack is not running');
    return environment.getContainer(`${service}-1`);
  };
  const url = (service: string, port: number): string => `http://${container(service).getHost()}:${container(service).getMappedPort(port)}`;

  beforeAll(async () => {
    environment = await new DockerComposeEnvironment(repoRoot, composeFiles)
      .withBuild()
      // Every service has a healthcheck (the images' HEALTHCHECK or compose's): "up" means healthy.
      .withDefaultWaitStrategy(Wait.forHealthCheck())
      .withStartupTimeout(180_000)
      .up();
    endpoints = {
      gatewayUrl: url('gateway', 8080),
      gatewayAdminUrl: url('gateway', 9464),
      // The backend is not published; the overlay's relay forwards its admin port.
      backendAdminUrl: url('backend-admin-relay', 9465),
    };
  });

  afterAll(async () => {
    // 20 s: more than the services' 10 s drain, so `down` sees them exit on their own.
    await environment?.down({ timeout: 20_000, removeVolumes: true });
  });

  describe('end-to-end scenarios shared with the process-based suite', () => {
    registerScenarios(() => {
      if (endpoints === undefined) throw new Error('the compose stack is not running');
      return endpoints;
    });
  });

  it('does not publish the backend, which sits on internal networks only', async () => {
    const backend = container('backend');
    for (const port of [8081, 9465]) expect(() => backend.getMappedPort(port), `backend port ${port} is published`).toThrow();

    const client = await getContainerRuntimeClient();
    const inspect = await client.container.inspect(client.container.getById(backend.getId()));
    const bindings = Object.entries(inspect.NetworkSettings.Ports ?? {}).filter(([, bound]) => (bound ?? []).length > 0);
    expect(bindings, 'host port bindings of the backend').toEqual([]);

    const networks = Object.values(inspect.NetworkSettings.Networks ?? {});
    expect(networks.length).toBeGreaterThan(0);
    for (const network of networks) {
      const details = (await client.network.getById(network.NetworkID).inspect()) as { Name: string; Internal: boolean };
      expect(details.Internal, `backend is attached to non-internal network ${details.Name}`).toBe(true);
    }
  });

  it('lets Prometheus scrape both services (up == 1)', async () => {
    const prometheus = url('prometheus', 9090);
    const deadline = Date.now() + 90_000; // scrape_interval is 15 s
    let up: Record<string, string> = {};
    while (Date.now() < deadline) {
      const response = await fetch(`${prometheus}/api/v1/query?query=${encodeURIComponent('up')}`);
      expect(response.status).toBe(200);
      const body = (await response.json()) as { data: { result: { metric: { job: string }; value: [number, string] }[] } };
      up = Object.fromEntries(body.data.result.map((sample) => [sample.metric.job, sample.value[1]]));
      if (up.gateway === '1' && up.backend === '1') break;
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
    expect(up).toMatchObject({ gateway: '1', backend: '1' });
  });

  it('serves the provisioned dashboard from Grafana to an anonymous viewer', async () => {
    const dashboard = JSON.parse(readFileSync(join(repoRoot, 'ops/grafana/dashboards/api-versions.json'), 'utf8')) as { uid: string; title: string };
    const grafana = url('grafana', 3000);
    // Provisioning runs at start, before /api/health answers, but give the file provider a moment.
    const deadline = Date.now() + 60_000;
    let response = await fetch(`${grafana}/api/dashboards/uid/${dashboard.uid}`);
    while (response.status === 404 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      response = await fetch(`${grafana}/api/dashboards/uid/${dashboard.uid}`);
    }
    expect(response.status).toBe(200); // no credentials sent: anonymous access
    const body = (await response.json()) as { dashboard: { title: string }; meta: { provisioned: boolean; canEdit: boolean } };
    expect(body.dashboard.title).toBe(dashboard.title);
    expect(body.meta.provisioned).toBe(true);
    expect(body.meta.canEdit).toBe(false);

    const search = await fetch(`${grafana}/api/search?query=${encodeURIComponent(dashboard.title)}`);
    expect(((await search.json()) as { uid: string }[]).map((hit) => hit.uid)).toContain(dashboard.uid);

    // The dashboard's panels query the provisioned datasource (uid "prometheus") through Grafana.
    const query = await fetch(`${grafana}/api/ds/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        from: 'now-5m',
        to: 'now',
        queries: [{ refId: 'A', datasource: { type: 'prometheus', uid: 'prometheus' }, expr: 'up', instant: true }],
      }),
    });
    expect(query.status).toBe(200);
    const result = (await query.json()) as { results: { A?: { frames?: unknown[]; error?: string } } };
    expect(result.results.A?.error).toBeUndefined();
    expect(result.results.A?.frames?.length ?? 0).toBeGreaterThan(0);
  });
});
