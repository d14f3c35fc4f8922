/**
 * The fleet as docs/deployment.md#several-replicas-with-compose-fleet runs it:
 * docker-compose.yml + docker-compose.fleet.yml (PostgreSQL,
 * 2 backend replicas behind the internal HAProxy, 3 gateway replicas behind the public one,
 * Prometheus finding every replica by DNS), plus the test overlay compose.fleet.test.yml and, on
 * machines without a registry, the stand-in overlays. One stack for the whole file, started once,
 * always removed with its volumes at the end; every published port random and on loopback.
 *
 * Load goes through HAProxy from this process (a few workers, bounded); a single replica is
 * reached on its own published ports; HAProxy's view comes from its statistics page.
 * The tests run in order and each leaves the fleet as it found it (policy restored, replicas up).
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../../scripts/paths.mjs';
import { eventually } from '../../../platform/test/support/eventually.mjs';
import { ComposeProject, docker, healthy, inspect, waitForContainer } from '../docker.js';
import { findEngine } from '../engine.js';
import { scrapeJobs } from '../../ops/scrape-jobs.js';
import { promQuery } from '../prometheus-api.js';
import { sectionTotals, serverStats, type SectionTotals } from './haproxy.js';
import { keyedCreates, mixedRequest, startLoad, type KeyedCreates, type LoadReport, type LoadRequest } from './load.js';

const PROJECT = 'version-router-test-fleet';
const engine = await findEngine();
const composeFiles = [
  'docker-compose.yml',
  'docker-compose.fleet.yml',
  'test/containers/compose.fleet.test.yml',
  ...(engine.standin
    ? [
        'test/containers/compose.standin.yml',
        'test/containers/compose.standin.postgres.yml',
        'test/containers/compose.standin.haproxy.yml',
      ]
    : []),
];
/** Started with their dependencies (postgres, backend, backend-haproxy, gateway); Grafana is not needed. */
const SERVICES = ['haproxy', 'prometheus'];
const GATEWAYS = 3;
const BACKENDS = 2;

interface Replica {
  id: string;
  /** The compose container name, e.g. version-router-test-fleet-gateway-2. */
  name: string;
  /** Its address on the network its load balancer reaches it by. */
  address: string;
  /** The gateway's own API and admin listener, published on loopback (gateways only). */
  apiUrl: string;
  adminUrl: string;
}

interface PolicyFile {
  versions: { version: number; status: string }[];
}

const log = (line: string): void => {
  process.stdout.write(`fleet: ${line}\n`);
};
/** What the gateways report as policy_sha256: the first 12 hex digits of the file's SHA-256. */
const policySha = (content: string): string => createHash('sha256').update(content).digest('hex').slice(0, 12);
const userNumber = (id: string): number => Number(/^user-(\d+)$/.exec(id)?.[1]);
const summary = (report: LoadReport): string =>
  `${report.sent} requests, ${report.failed} failed${
    report.failed > 0
      ? `: ${report.failures
          .slice(0, 5)
          .map((f) => `${f.request} → ${f.outcome}`)
          .join('; ')}`
      : ''
  }`;

describe.skipIf(!engine.reachable)(
  `fleet: docker-compose.fleet.yml${engine.reachable ? '' : ` (skipped: no Docker engine: ${engine.reason})`}`,
  () => {
    const testDir = mkdtempSync(join(tmpdir(), 'version-router-fleet-'));
    const policyFile = join(testDir, 'policy', 'versions.json');
    const originalPolicy = readFileSync(join(repoRoot, 'ops/versions.json'), 'utf8');
    const project = new ComposeProject(
      repoRoot,
      PROJECT,
      composeFiles,
      { VERSION_ROUTER_TEST_DIR: testDir },
      '127.0.0.1',
    );
    let loadBalancerUrl = '';
    let prometheusUrl = '';

    const replicas = async (service: 'gateway' | 'backend'): Promise<Replica[]> => {
      const network = `${PROJECT}_${service === 'gateway' ? 'edge' : 'internal'}`;
      return Promise.all(
        (await project.containerIds(service)).map(async (id) => {
          const container = await inspect(id);
          const published = (port: number): string => {
            const hostPort = container.NetworkSettings.Ports?.[`${port}/tcp`]?.[0]?.HostPort;
            return hostPort === undefined ? '' : `http://127.0.0.1:${hostPort}`;
          };
          return {
            id,
            name: container.Name.replace(/^\//, ''),
            address: container.NetworkSettings.Networks[network]?.IPAddress ?? '',
            apiUrl: published(8080),
            adminUrl: published(9464),
          };
        }),
      );
    };
    const haproxy = (): Promise<string> => project.containerId('haproxy');
    const backendHaproxy = (): Promise<string> => project.containerId('backend-haproxy');
    /** Waits until the load balancer counts the replica at `address` UP. */
    const waitUp = async (balancer: string, section: string, address: string, timeoutMs = 90_000): Promise<void> => {
      await eventually(
        `${section} server ${address} UP`,
        async () =>
          (await serverStats(balancer, section)).some((server) => server.address === address && server.status === 'UP')
            ? true
            : undefined,
        { timeoutMs, intervalMs: 500 },
      );
    };
    const servedSha = async (replica: Replica): Promise<string | undefined> => {
      const response = await fetch(`${replica.apiUrl}/versions`).catch(() => undefined);
      if (response?.status !== 200) return undefined;
      return ((await response.json()) as { policy_sha256?: string }).policy_sha256;
    };
    /** Replaces the policy file the way editors and configuration tools do: a new file renamed over it. */
    const replacePolicy = (content: string): void => {
      writeFileSync(`${policyFile}.new`, content);
      renameSync(`${policyFile}.new`, policyFile);
    };
    const gatewayMetrics = async (replica: Replica): Promise<string> =>
      (await fetch(`${replica.adminUrl}/metrics`)).text();

    beforeAll(async () => {
      mkdirSync(join(testDir, 'policy'));
      mkdirSync(join(testDir, 'prometheus'));
      copyFileSync(join(repoRoot, 'ops/versions.json'), policyFile);
      // The product's fleet configuration with short intervals; rules.yml stays the product's
      // (mounted at /etc/prometheus by docker-compose.yml).
      const prometheusConfig = parse(readFileSync(join(repoRoot, 'ops/prometheus/prometheus.fleet.yml'), 'utf8')) as {
        global: Record<string, string>;
        rule_files: string[];
      };
      prometheusConfig.global = { ...prometheusConfig.global, scrape_interval: '2s', evaluation_interval: '2s' };
      prometheusConfig.rule_files = prometheusConfig.rule_files.map((file) => `/etc/prometheus/${file}`);
      writeFileSync(join(testDir, 'prometheus', 'prometheus.fleet.yml'), stringify(prometheusConfig));
      // Readable by the containers' non-root users.
      for (const path of [testDir, join(testDir, 'policy'), join(testDir, 'prometheus')]) chmodSync(path, 0o755);

      log(`${engine.standin ? 'stand-in' : 'official'} images, overlays ${composeFiles.slice(1).join(', ')}`);
      const started = Date.now();
      // A run that was killed leaves its containers and volume behind (no Ryuk: it needs a registry).
      await project.run(['down', '--volumes', '--remove-orphans', '--timeout', '25'], 120_000);
      await project.run(['up', '--detach', '--build', '--wait', '--wait-timeout', '300', ...SERVICES], 20 * 60_000);
      loadBalancerUrl = await project.url('haproxy', 8080);
      prometheusUrl = await project.url('prometheus', 9090);
      // Healthy containers; now each load balancer counting every replica UP.
      for (const replica of await replicas('gateway'))
        await waitUp(await haproxy(), 'gateways', `${replica.address}:8080`);
      for (const replica of await replicas('backend'))
        await waitUp(await backendHaproxy(), 'backends', `${replica.address}:8081`);
      log(
        `${GATEWAYS} gateways and ${BACKENDS} backends up behind HAProxy after ` +
          `${Math.round((Date.now() - started) / 1000)} s`,
      );
    });

    afterAll(async () => {
      await project.run(['down', '--volumes', '--remove-orphans', '--timeout', '25'], 120_000).catch((err: unknown) => {
        log(`removing ${PROJECT} failed: ${String(err)}`);
      });
      rmSync(testDir, { recursive: true, force: true });
    });

    it(
      `runs ${GATEWAYS} gateway and ${BACKENDS} backend replicas, each one a Prometheus target of its own found by ` +
        `DNS`,
      async () => {
        expect(await replicas('gateway')).toHaveLength(GATEWAYS);
        expect(await replicas('backend')).toHaveLength(BACKENDS);
        const up = await eventually(
          'every replica scraped (up == 1)',
          async () => {
            const samples = await promQuery(prometheusUrl, 'up == 1');
            const byJob = (job: string) => samples.filter((sample) => sample.metric.job === job).length;
            return byJob(scrapeJobs.gateway) === GATEWAYS && byJob(scrapeJobs.backend) === BACKENDS
              ? { gateway: byJob(scrapeJobs.gateway), backend: byJob(scrapeJobs.backend) }
              : undefined;
          },
          { timeoutMs: 60_000, intervalMs: 500 },
        );
        expect(up).toEqual({ gateway: GATEWAYS, backend: BACKENDS });
      },
    );

    it(
      'a policy edit in the mounted file reaches all 3 gateway replicas within 5 s, without a signal or a restart, ' +
        'and they agree on policy_sha256',
      async () => {
        const gateways = await replicas('gateway');
        const before = await Promise.all(gateways.map(async (replica) => (await inspect(replica.id)).State.StartedAt));
        expect(await Promise.all(gateways.map(servedSha))).toEqual(Array(GATEWAYS).fill(policySha(originalPolicy)));

        const policy = JSON.parse(originalPolicy) as PolicyFile;
        const added = Math.max(...policy.versions.map(({ version }) => version)) + 1;
        policy.versions.push({ version: added, status: 'current' });
        const edited = `${JSON.stringify(policy, null, 2)}\n`;
        try {
          const editedAt = Date.now();
          replacePolicy(edited);
          const appliedAfter = await Promise.all(
            gateways.map(async (replica) => {
              await eventually(
                `${replica.name} to serve the edited policy`,
                async () => ((await servedSha(replica)) === policySha(edited) ? true : undefined),
                { timeoutMs: 30_000, intervalMs: 100 },
              );
              return Date.now() - editedAt;
            }),
          );
          log(`policy edit applied by the ${GATEWAYS} gateways after ${appliedAfter.join(', ')} ms`);
          expect(Math.max(...appliedAfter), 'slowest replica, ms after the edit').toBeLessThanOrEqual(5_000);

          for (const replica of gateways) {
            // The backend has no presenter for the new version: its answer does not matter, the gateway's header does.
            const served = await fetch(`${replica.apiUrl}/v${added}/orders/ord-1001`);
            expect(served.headers.get('api-version'), replica.name).toBe(String(added));
            const shas = [
              ...(await gatewayMetrics(replica)).matchAll(
                /^api_version_policy_info\{[^}]*sha256="([0-9a-f]+)"[^}]*\} 1$/gm,
              ),
            ].map((match) => match[1]);
            expect(shas, `${replica.name} api_version_policy_info`).toEqual([policySha(edited)]);
          }
          // Applied by the watch: the same containers, never restarted.
          expect(
            await Promise.all(gateways.map(async (replica) => (await inspect(replica.id)).State.StartedAt)),
          ).toEqual(before);
        } finally {
          replacePolicy(originalPolicy);
          for (const replica of gateways) {
            await eventually(
              `${replica.name} back on the shipped policy`,
              async () => ((await servedSha(replica)) === policySha(originalPolicy) ? true : undefined),
              { timeoutMs: 90_000, intervalMs: 500 },
            );
          }
        }
      },
    );

    it(
      'restarting the gateway replicas one at a time, then the backend replicas, under constant load through ' +
        'HAProxy: 0 failed requests',
      async () => {
        const balancers = [
          { service: 'gateway', container: await haproxy(), section: 'gateways', port: 8080 },
          { service: 'backend', container: await backendHaproxy(), section: 'backends', port: 8081 },
        ] as const;
        const totalsBefore = await Promise.all(
          balancers.map(({ container, section }) => sectionTotals(container, section)),
        );
        const load = startLoad(loadBalancerUrl, {
          concurrency: 4,
          pauseMs: 5,
          maxRequests: 200_000,
          request: mixedRequest,
        });
        let report: LoadReport | undefined;
        try {
          await sleep(1_000);
          for (const { service, container, section, port } of balancers) {
            for (const replica of await replicas(service)) {
              const startedBefore = (await inspect(replica.id)).State.StartedAt;
              // SIGTERM, the replica's own stop sequence, then a start: what a rolling update does to each.
              await docker(['restart', '--time', '25', replica.id], { timeoutMs: 120_000 });
              expect((await inspect(replica.id)).State.StartedAt, `${replica.name} restarted`).not.toBe(startedBefore);
              const restarted = (await replicas(service)).find((candidate) => candidate.id === replica.id);
              await waitUp(container, section, `${restarted?.address ?? ''}:${port}`);
              log(`${replica.name} restarted and back in rotation; ${load.sent} requests so far`);
            }
          }
        } finally {
          report = await load.stop();
        }
        const totalsAfter = await Promise.all(
          balancers.map(({ container, section }) => sectionTotals(container, section)),
        );
        const retried = balancers.map(({ section }, i) => {
          const delta = (key: keyof SectionTotals): number => totalsAfter[i]![key] - totalsBefore[i]![key];
          return {
            section,
            connectionErrors: delta('connectionErrors'),
            retries: delta('retries'),
            redispatches: delta('redispatches'),
          };
        });
        log(
          `rolling restart of ${GATEWAYS} gateways and ${BACKENDS} backends under load: ${summary(report)}; HAProxy ` +
            `retries: ${JSON.stringify(retried)}`,
        );
        expect(report.sent, 'requests sent during the restarts').toBeGreaterThan(100);
        expect(report.failures).toEqual([]);
        // Each replica left the rotation before it closed its listener: HAProxy never had to try a
        // request again elsewhere (its retries hide such failures from clients, other balancers do not).
        expect(retried).toEqual(
          balancers.map(({ section }) => ({ section, connectionErrors: 0, retries: 0, redispatches: 0 })),
        );
      },
      900_000,
    );

    it(
      'users created through the load balancer are readable through every gateway and every backend replica, ids ' +
        'without gaps',
      async () => {
        const count = 60;
        const created: { id: string }[] = [];
        for (let batch = 0; batch < count; batch += 6) {
          const responses = await Promise.all(
            Array.from({ length: 6 }, async (_, i) => {
              const response = await fetch(`${loadBalancerUrl}/api/users`, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({ name: `Fleet ${batch + i}`, email: `fleet-${batch + i}@example.com` }),
              });
              expect(response.status).toBe(201);
              return (await response.json()) as { id: string };
            }),
          );
          created.push(...responses);
        }
        const numbers = created.map(({ id }) => userNumber(id)).sort((a, b) => a - b);
        expect(numbers, 'ids user-<n>, n consecutive').toEqual(
          Array.from({ length: count }, (_, i) => numbers[0]! + i),
        );

        for (const replica of await replicas('gateway')) {
          for (const user of created) {
            const response = await fetch(`${replica.apiUrl}/api/users/${user.id}`);
            expect(response.status, `${user.id} through ${replica.name}`).toBe(200);
            expect(await response.json()).toEqual(user);
          }
          // A cursor issued through one replica pages on through any other.
          const first = (await (await fetch(`${loadBalancerUrl}/api/users/page?limit=2`)).json()) as {
            next_cursor: string;
          };
          const onReplica = await fetch(
            `${replica.apiUrl}/api/users/page?limit=2&cursor=${encodeURIComponent(first.next_cursor)}`,
          );
          expect(onReplica.status, `cursor through ${replica.name}`).toBe(200);
        }
        // Each backend replica on its own (not published: asked from inside its container).
        const probe =
          `Promise.all(${JSON.stringify(created.map(({ id }) => id))}.map((id) => ` +
          `fetch('http://127.0.0.1:8081/api/users/' + id).then((r) => r.json())))
      .then((users) => console.log(JSON.stringify(users)))`;
        for (const replica of await replicas('backend')) {
          const { stdout } = await docker(['exec', replica.id, 'node', '-e', probe]);
          expect(JSON.parse(stdout), `users read on ${replica.name}`).toEqual(created);
        }
      },
    );

    describe('consumers across replicas', () => {
      it("Prometheus's fleet-wide consumers equal what known clients sent, spread over every replica", async () => {
        const suffix = randomUUID().slice(0, 8);
        const sent: Record<string, number> = {
          [`acme-${suffix}`]: 30,
          [`globex-${suffix}`]: 20,
          [`initech-${suffix}`]: 10,
        };
        const requests = Object.entries(sent).flatMap(([client, n]) => Array<string>(n).fill(client));
        for (let i = 0; i < requests.length; i += 6) {
          const statuses = await Promise.all(
            requests
              .slice(i, i + 6)
              .map(
                async (client) =>
                  (await fetch(`${loadBalancerUrl}/v1/orders/ord-1001`, { headers: { 'x-client-id': client } })).status,
              ),
          );
          expect(statuses).toEqual(Array(statuses.length).fill(200));
        }
        // Each replica saw only its share: the whole answer exists only fleet-wide.
        const perReplica = await Promise.all(
          (await replicas('gateway')).map(async (replica) => {
            const metrics = await gatewayMetrics(replica);
            return [
              ...metrics.matchAll(
                new RegExp(
                  `^api_version_consumer_requests_total\\{[^}]*consumer="[a-z]+-${suffix}"[^}]*\\} (\\S+)$`,
                  'gm',
                ),
              ),
            ].reduce((sum, match) => sum + Number(match[1]), 0);
          }),
        );
        log(`known clients' v1 requests per gateway replica: ${perReplica.join(', ')}`);
        expect(perReplica.filter((n) => n > 0).length, 'replicas that served the known clients').toBe(GATEWAYS);

        const fleetWide = await eventually(
          'the fleet-wide sums in Prometheus',
          async () => {
            const samples = await promQuery(
              prometheusUrl,
              `sum by (consumer) (api_version_consumer_requests_total{version="1", consumer=~".*-${suffix}"})`,
            );
            const sums = Object.fromEntries(
              samples.map((sample): [string, number] => [sample.metric.consumer ?? '', Number(sample.value[1])]),
            );
            return Object.keys(sent).every((client) => sums[client] === sent[client]) ? sums : undefined;
          },
          { timeoutMs: 60_000, intervalMs: 500 },
        );
        expect(fleetWide).toEqual(sent);
      });

      it(
        'under 5,000 random client ids each replica exports at most 20 consumers per version plus "other", and ' +
          'every request is still counted',
        async () => {
          const total = async (): Promise<number> => {
            const sums = await Promise.all(
              (await replicas('gateway')).map(async (replica) =>
                [
                  ...(await gatewayMetrics(replica)).matchAll(
                    /^api_version_consumer_requests_total\{[^}]*version="1"[^}]*\} (\S+)$/gm,
                  ),
                ].reduce((sum, match) => sum + Number(match[1]), 0),
              ),
            );
            return sums.reduce((sum, n) => sum + n, 0);
          };
          const before = await total();
          const clients = 5_000;
          const load = startLoad(loadBalancerUrl, {
            concurrency: 16,
            pauseMs: 0,
            maxRequests: clients,
            request: () => ({
              path: '/v1/orders/ord-1001',
              init: { headers: { 'x-client-id': `random-${randomUUID()}` } },
              expect: 200,
            }),
          });
          while (load.sent < clients) await sleep(200);
          const report = await load.stop();
          expect(report.failures).toEqual([]);

          for (const replica of await replicas('gateway')) {
            const consumers = [
              ...(await gatewayMetrics(replica)).matchAll(
                /^api_version_consumer_requests_total\{[^}]*version="1"[^}]*\} /gm,
              ),
            ].map((match) => /consumer="([^"]*)"/.exec(match[0])?.[1] ?? '');
            expect(consumers.length, `v1 consumer series on ${replica.name}`).toBeLessThanOrEqual(21);
            expect(consumers, replica.name).toContain('other');
          }
          expect(await total(), 'v1 consumer requests counted across the replicas').toBe(before + clients);

          // Prometheus holds the same bound per replica.
          const series = await eventually(
            'Prometheus to scrape the consumer series after the burst',
            async () => {
              const samples = await promQuery(
                prometheusUrl,
                'count by (instance) (api_version_consumer_requests_total{version="1"})',
              );
              return samples.length === GATEWAYS ? samples.map((sample) => Number(sample.value[1])) : undefined;
            },
            { timeoutMs: 60_000, intervalMs: 500 },
          );
          log(`v1 consumer series per replica after ${clients} random client ids: ${series.join(', ')}`);
          for (const count of series) expect(count).toBeLessThanOrEqual(21);
        },
      );
    });

    /** Users made by a keyed load, by key, read through the load balancer: more than one for a key is a duplicate. */
    const usersByKey = async (creates: KeyedCreates): Promise<Map<string, string[]>> => {
      const response = await fetch(`${loadBalancerUrl}/api/users`);
      expect(response.status).toBe(200);
      const keyByName = new Map([...creates.sentKeys].map((key): [string, string] => [creates.nameOf(key), key]));
      const byKey = new Map<string, string[]>();
      for (const user of (await response.json()) as { id: string; name: string }[]) {
        const key = keyByName.get(user.name);
        if (key !== undefined) byKey.set(key, [...(byKey.get(key) ?? []), user.id]);
      }
      return byKey;
    };
    /** Users beyond the first for a key (duplicates), and acknowledged keys whose one user is not the one answered. */
    const countUsersPerKey = async (creates: KeyedCreates): Promise<{ duplicates: number; misanswered: string[] }> => {
      const byKey = await usersByKey(creates);
      return {
        duplicates: [...byKey.values()].reduce((sum, ids) => sum + ids.length - 1, 0),
        misanswered: [...creates.acknowledged.keys()].filter(
          (key) => byKey.get(key)?.length !== 1 || byKey.get(key)?.[0] !== creates.acknowledged.get(key),
        ),
      };
    };
    const retryTotals = async (): Promise<SectionTotals[]> =>
      Promise.all([sectionTotals(await haproxy(), 'gateways'), sectionTotals(await backendHaproxy(), 'backends')]);
    const retriesSince = (before: SectionTotals[], after: SectionTotals[]): string =>
      ['gateways', 'backends']
        .map(
          (section, i) =>
            `${section} ${after[i]!.retries - before[i]!.retries} retries, ` +
            `${after[i]!.redispatches - before[i]!.redispatches} redispatches`,
        )
        .join('; ');
    const triesOf = (report: LoadReport): string =>
      Object.entries(report.tries)
        .sort()
        .map(([outcome, n]) => `${outcome}: ${n}`)
        .join(', ');

    it(
      'a gateway, then a backend, killed with SIGKILL under GETs and keyed creates (retried once by the client): ' +
        'no GET fails, every create is acknowledged, no user is created twice',
      async () => {
        const creates = keyedCreates(`kill-${randomUUID().slice(0, 8)}`);
        const gets: LoadRequest[] = [
          { path: '/v2/orders/ord-1001', expect: 200 },
          { path: '/v1/orders/ord-1002', expect: 200 },
          { path: '/api/users/page?limit=5', expect: 200 },
        ];
        const concurrency = 8;
        const totalsBefore = await retryTotals();
        const load = startLoad(loadBalancerUrl, {
          concurrency,
          pauseMs: 2,
          maxRequests: 100_000,
          request: (n) => (n % 4 === 3 ? creates.request(n) : gets[n % 4]!),
        });
        const killed: { id: string; balancer: string; section: string; port: number }[] = [];
        let report: LoadReport | undefined;
        try {
          await sleep(2_000);
          for (const [service, balancer, section, port] of [
            ['gateway', await haproxy(), 'gateways', 8080],
            ['backend', await backendHaproxy(), 'backends', 8081],
          ] as const) {
            const victim = (await replicas(service))[1]!;
            const slotOf = async () =>
              (await serverStats(balancer, section)).find((server) => server.address === `${victim.address}:${port}`);
            // HAProxy's count of requests in progress on the replica, just before the kill.
            const inFlight = (await slotOf())?.current ?? 0;
            const killedAt = Date.now();
            await docker(['kill', '--signal', 'KILL', victim.id]);
            killed.push({ id: victim.id, balancer, section, port });
            const takenOutAfter = await eventually(
              `HAProxy to take ${victim.name} out`,
              async () => ((await slotOf())?.status.startsWith('DOWN') === true ? Date.now() - killedAt : undefined),
              { timeoutMs: 15_000, intervalMs: 100 },
            );
            log(
              `SIGKILL on ${victim.name} with ${inFlight} requests in progress on it: HAProxy took it out after ` +
                `${takenOutAfter} ms; ${load.sent} requests so far`,
            );
            // The load goes on against the remaining replicas.
            await sleep(3_000);
          }
        } finally {
          report = await load.stop();
          for (const { id } of killed) await docker(['start', id]);
        }
        const { duplicates, misanswered } = await countUsersPerKey(creates);
        log(
          `SIGKILL of a gateway, then a backend, under load (${concurrency} workers): ${summary(report)}; ` +
            `${report.retried} creates retried by the client; ` +
            `${creates.sentKeys.size} keyed creates, ${creates.acknowledged.size} acknowledged, ${duplicates} ` +
            `duplicates; tries: ${triesOf(report)}; HAProxy: ${retriesSince(totalsBefore, await retryTotals())}`,
        );
        expect(
          report.failures.filter((failure) => failure.request.startsWith('GET')),
          'failed GETs',
        ).toEqual([]);
        expect(report.failures, 'creates not acknowledged after one retry').toEqual([]);
        expect(creates.acknowledged.size).toBe(creates.sentKeys.size);
        expect(duplicates, 'users created twice for one key').toBe(0);
        expect(misanswered, 'acknowledged creates whose user is not the one answered').toEqual([]);

        for (const { id, balancer, section, port } of killed) {
          const service = section === 'gateways' ? 'gateway' : 'backend';
          const restarted = (await replicas(service)).find((candidate) => candidate.id === id);
          await waitUp(balancer, section, `${restarted?.address ?? ''}:${port}`);
        }
      },
      300_000,
    );

    it(
      'PostgreSQL restarted under keyed creates: they answer only 201 or 503, /versions and orders answer 200 ' +
        'throughout through HAProxy, and no user is created twice',
      async () => {
        const creates = keyedCreates(`pg-${randomUUID().slice(0, 8)}`);
        const gets: LoadRequest[] = [
          { path: '/versions', expect: 200 },
          { path: '/v2/orders/ord-1001', expect: 200 },
        ];
        const postgres = await project.containerId('postgres');
        const load = startLoad(loadBalancerUrl, {
          concurrency: 6,
          pauseMs: 5,
          maxRequests: 100_000,
          request: (n) => (n % 3 === 2 ? creates.request(n, { tolerate: [503] }) : gets[n % 3]!),
        });
        let report: LoadReport | undefined;
        let outageMs = 0;
        try {
          await sleep(1_500);
          const restarting = Date.now();
          await docker(['restart', '--time', '10', postgres], { timeoutMs: 120_000 });
          await waitForContainer(postgres, 'healthy', healthy, 120_000);
          outageMs = Date.now() - restarting;
          await sleep(3_000);
        } finally {
          report = await load.stop();
        }
        const refused = [...creates.sentKeys].filter((key) => !creates.acknowledged.has(key));
        log(
          `PostgreSQL restarted (healthy again after ${outageMs} ms) under load: ${summary(report)}; tries: ` +
            `${triesOf(report)}; ${report.retried} creates retried by the client, ${refused.length} still 503 after ` +
            `their retry`,
        );
        expect(report.failures).toEqual([]);
        const postTries = Object.keys(report.tries).filter((outcome) => outcome.startsWith('POST '));
        expect(
          postTries.filter((outcome) => outcome !== 'POST 201' && outcome !== 'POST 503'),
          'answers to creates other than 201 and 503',
        ).toEqual([]);
        expect(report.tries['POST 503'] ?? 0, 'creates answered 503 while PostgreSQL restarted').toBeGreaterThan(0);

        // A create that got 503 twice either committed nothing or committed with its key: the same request
        // sent once more now is created or answered with its first answer, never made twice.
        for (const key of refused) {
          const request = creates.request(Number(key.slice(key.lastIndexOf('-') + 1)));
          const response = await fetch(`${loadBalancerUrl}${request.path}`, request.init);
          const body = await response.text();
          expect(response.status, `${key} sent again: ${body}`).toBe(201);
          request.onOutcome?.({ status: response.status, body });
        }
        const { duplicates, misanswered } = await countUsersPerKey(creates);
        log(
          `after sending the ${refused.length} refused creates again: ${creates.sentKeys.size} keyed creates, ` +
            `${creates.acknowledged.size} acknowledged, ${duplicates} duplicates`,
        );
        expect(duplicates, 'users created twice for one key').toBe(0);
        expect(misanswered, 'acknowledged creates whose user is not the one answered').toEqual([]);
        expect(creates.acknowledged.size).toBe(creates.sentKeys.size);
      },
      300_000,
    );

    it(
      "the backends stopped: every gateway stays in HAProxy's rotation with backend_up 0, /versions answers 200 " +
        'and orders 502 or 503',
      async () => {
        const balancer = await haproxy();
        const statuses: Record<string, number[]> = { '/versions': [], '/v2/orders/ord-1001': [] };
        const gatewaysUp: number[] = [];
        let backendUp: string[] = [];
        try {
          await project.run(['stop', '--timeout', '25', 'backend'], 120_000);
          // Several times what HAProxy needs to take a replica out (2 failed checks 500 ms apart).
          const until = Date.now() + 5_000;
          while (Date.now() < until) {
            gatewaysUp.push(
              (await serverStats(balancer, 'gateways')).filter((server) => server.status.startsWith('UP')).length,
            );
            for (const path of Object.keys(statuses))
              statuses[path]!.push((await fetch(`${loadBalancerUrl}${path}`)).status);
            await sleep(250);
          }
          backendUp = await Promise.all(
            (await replicas('gateway')).map(
              async (replica) => /^backend_up (\S+)$/m.exec(await gatewayMetrics(replica))?.[1] ?? 'absent',
            ),
          );
        } finally {
          await project.run(['start', 'backend'], 120_000);
          for (const replica of await replicas('backend'))
            await waitUp(await backendHaproxy(), 'backends', `${replica.address}:8081`);
        }
        const counted = (list: number[]) =>
          JSON.stringify(
            Object.fromEntries([...new Set(list)].map((value) => [value, list.filter((v) => v === value).length])),
          );
        log(
          `backends stopped for 5 s: gateways UP in HAProxy ${counted(gatewaysUp)}; /versions ` +
            `${counted(statuses['/versions']!)}; orders ${counted(statuses['/v2/orders/ord-1001']!)}; backend_up ` +
            `${backendUp.join(', ')}`,
        );
        expect(new Set(gatewaysUp)).toEqual(new Set([GATEWAYS]));
        expect(new Set(statuses['/versions'])).toEqual(new Set([200]));
        expect(statuses['/v2/orders/ord-1001']!.filter((status) => status !== 502 && status !== 503)).toEqual([]);
        expect(backendUp).toEqual(Array(GATEWAYS).fill('0'));
      },
      300_000,
    );
  },
);
