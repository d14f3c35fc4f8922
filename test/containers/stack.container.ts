/**
 * The docker compose stack, built from this working tree's Dockerfile and docker-compose.yml
 * (plus the test overlay compose.test.yml), started with testcontainers and checked for real:
 * the shared end-to-end scenarios, what only the container stack has (backend unreachable from
 * the host, hardened containers, Prometheus and its recording rule, Grafana), the operations
 * docs/deployment.md#run-with-docker promises (graceful stop, policy edit + restart, a refused policy)
 * and its "Deploy one service alone" commands as written.
 *
 * Where no image registry is reachable, test/containers/engine.sh built stand-in base images;
 * when they exist the second overlay compose.standin.yml swaps them in and Grafana (which has no
 * stand-in) is not started: its test is skipped, with the reason.
 *
 * Run through `npm run test:containers` (run.mjs), which skips the whole suite with one line
 * where no Docker engine is reachable. Run directly without an engine, the suite is skipped too.
 */
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DockerComposeEnvironment, Wait, type StartedDockerComposeEnvironment } from 'testcontainers';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerScenarios } from '../e2e/scenarios.js';
import type { StackEndpoints } from '../e2e/stack.js';
import { repoRoot } from '../../scripts/paths.mjs';
import { eventually } from '../../platform/test/support/eventually.mjs';
import { readmeCurlProblems } from '../support/readme-curls.js';
import { ComposeProject, bash, docker, healthy, inspect, waitForContainer } from './docker.js';
import { STANDIN_NODE_IMAGE, findEngine } from './engine.js';
import { maildevEmails, waitForEmail } from './maildev-api.js';
import { scrapeJobs } from '../ops/scrape-jobs.js';
import { promQuery as queryPrometheus, type PromSample } from './prometheus-api.js';

const PROJECT = 'version-router-test';

const engine = await findEngine();
const { standin } = engine;
const composeFiles = [
  'docker-compose.yml',
  'test/containers/compose.test.yml',
  ...(standin ? ['test/containers/compose.standin.yml'] : []),
];
const GRAFANA_SKIPPED =
  'Grafana is not started on stand-in images: no image registry is reachable here and Grafana has no Debian or npm ' +
  'source; it is verified where the official images can be pulled';

const V2_ORDER = { id: 'ord-1001', customer_id: 'user-1', total_cents: 1999, currency: 'EUR' };

interface PolicyFile {
  default_version: number;
  versions: { version: number; status: string; announced?: string; sunset?: string }[];
}

describe.skipIf(!engine.reachable)(
  `docker compose stack${engine.reachable ? '' : ` (skipped: no Docker engine: ${engine.reason})`}`,
  () => {
    const testDir = mkdtempSync(join(tmpdir(), 'version-router-containers-'));
    const policyCopy = join(testDir, 'versions.json');
    const originalPolicy = readFileSync(join(repoRoot, 'ops/versions.json'), 'utf8');
    let environment: StartedDockerComposeEnvironment | undefined;
    let project = new ComposeProject(
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
    const promQuery = async (expr: string): Promise<PromSample[]> =>
      queryPrometheus(await project.url('prometheus', 9090), expr);
    const restartGateway = async (): Promise<void> => {
      await project.run(['restart', 'gateway'], 60_000);
      await waitForContainer(await project.containerId('gateway'), 'healthy', healthy, 90_000);
      await refreshEndpoints();
    };
    const writePolicy = (edit: (policy: PolicyFile) => void): void => {
      const policy = JSON.parse(originalPolicy) as PolicyFile;
      edit(policy);
      // Written in place: the gateway's bind mount follows the file's inode.
      writeFileSync(policyCopy, `${JSON.stringify(policy, null, 2)}\n`);
    };
    const v1 = (policy: PolicyFile) => {
      const entry = policy.versions.find((candidate) => candidate.version === 1);
      if (entry === undefined) throw new Error('ops/versions.json lists no version 1');
      return entry;
    };

    beforeAll(async () => {
      // Readable by the containers' non-root users.
      chmodSync(testDir, 0o755);
      copyFileSync(join(repoRoot, 'ops/versions.json'), policyCopy);
      // The product's Prometheus configuration with short intervals; rules.yml stays the product's
      // (mounted at /etc/prometheus by docker-compose.yml).
      const prometheusConfig = parse(readFileSync(join(repoRoot, 'ops/prometheus/prometheus.yml'), 'utf8')) as {
        global: Record<string, string>;
        rule_files: string[];
      };
      prometheusConfig.global = { ...prometheusConfig.global, scrape_interval: '2s', evaluation_interval: '2s' };
      prometheusConfig.rule_files = prometheusConfig.rule_files.map((file) => `/etc/prometheus/${file}`);
      mkdirSync(join(testDir, 'prometheus'), { mode: 0o755 });
      writeFileSync(join(testDir, 'prometheus', 'prometheus.yml'), stringify(prometheusConfig));

      process.stdout.write(
        standin
          ? `container suite: stand-in base images (${STANDIN_NODE_IMAGE} present), overlays ` +
              `${composeFiles.slice(1).join(', ')}; Grafana not started\n`
          : 'container suite: official base images (no stand-ins built), every service of docker-compose.yml\n',
      );
      // A run that was killed leaves its containers behind (Ryuk is off: it needs a registry).
      await project.run(['down', '--volumes', '--remove-orphans', '--timeout', '20'], 120_000);
      environment = await new DockerComposeEnvironment(repoRoot, composeFiles)
        .withProjectName(PROJECT)
        .withEnvironment({ VERSION_ROUTER_TEST_DIR: testDir })
        .withBuild()
        // Every service has a healthcheck (the images' HEALTHCHECK or compose's): "up" means healthy.
        .withDefaultWaitStrategy(Wait.forHealthCheck())
        .withStartupTimeout(180_000)
        .up();
      project = new ComposeProject(
        repoRoot,
        PROJECT,
        composeFiles,
        project.env,
        environment.getContainer('gateway-1').getHost(),
      );
      await refreshEndpoints();
    });

    afterAll(async () => {
      // 20 s: more than the services' 10 s drain, so `down` sees them exit on their own.
      if (environment !== undefined) await environment.down({ timeout: 20_000, removeVolumes: true });
      else
        await project.run(['down', '--volumes', '--remove-orphans', '--timeout', '20'], 120_000).catch(() => undefined);
      rmSync(testDir, { recursive: true, force: true });
    });

    // First, before the scenarios add versioned traffic of their own: the share measured is the burst's.
    describe('Prometheus (scrape interval 2 s in the test copy of its configuration)', () => {
      it('scrapes both services: up == 1 for the gateway and backend jobs', async () => {
        const up = await eventually(
          'up == 1 for both jobs',
          async () => {
            const samples = await promQuery('up');
            const byJob = Object.fromEntries(
              samples.map((sample): [string, string] => [sample.metric.job ?? '', sample.value[1]]),
            );
            return byJob[scrapeJobs.gateway] === '1' && byJob[scrapeJobs.backend] === '1' ? byJob : undefined;
          },
          { timeoutMs: 60_000, intervalMs: 500 },
        );
        expect(up).toEqual({ [scrapeJobs.gateway]: '1', [scrapeJobs.backend]: '1' });
      });

      it('api:deprecated_version_share:ratio_rate5m reports the share of v1 requests sent', async () => {
        const gateway = (path: string, headers: Record<string, string> = {}) =>
          fetch(`${stack().gatewayUrl}${path}`, { headers });
        const versionTotal = async (): Promise<number> => {
          const text = await (await fetch(`${stack().gatewayAdminUrl}/metrics`)).text();
          return [...text.matchAll(/^api_version_requests_total\{version="[12]",[^}]*\} (\S+)$/gm)].reduce(
            (sum, match) => sum + Number(match[1]),
            0,
          );
        };
        // rate() needs a sample before the burst: create both series and wait until they are scraped.
        expect((await gateway('/v1/orders/ord-1001')).status).toBe(200);
        expect((await gateway('/v2/orders/ord-1001')).status).toBe(200);
        await eventually(
          'the v1 and v2 series in Prometheus',
          async () =>
            (await promQuery('sum by (version) (api_version_requests_total{version=~"1|2"})')).length === 2
              ? true
              : undefined,
          { timeoutMs: 60_000, intervalMs: 500 },
        );

        // 60 v1 and 140 v2, by path and by header: the deprecated share is 0.3.
        const burst = [
          ...Array.from({ length: 30 }, () => ['/v1/orders/ord-1001', {}] as const),
          ...Array.from({ length: 30 }, () => ['/orders/ord-1001', { 'api-version': '1' }] as const),
          ...Array.from({ length: 70 }, () => ['/v2/orders/ord-1001', {}] as const),
          ...Array.from({ length: 70 }, () => ['/orders/ord-1002', { 'api-version': '2' }] as const),
        ];
        for (let i = 0; i < burst.length; i += 10) {
          const statuses = await Promise.all(
            burst.slice(i, i + 10).map(async ([path, headers]) => (await gateway(path, headers)).status),
          );
          expect(statuses).toEqual(Array(statuses.length).fill(200));
        }

        // Wait until Prometheus has scraped the whole burst, then for a rule evaluation after that scrape.
        const total = await versionTotal();
        const scrapedAt = await eventually(
          `Prometheus to scrape all ${total} versioned requests`,
          async () => {
            const [sample] = await promQuery('sum(api_version_requests_total{version=~"1|2"})');
            if (Number(sample?.value[1]) !== total) return undefined;
            return Number((await promQuery('max(timestamp(api_version_requests_total{version=~"1|2"}))'))[0]?.value[1]);
          },
          { timeoutMs: 60_000, intervalMs: 500 },
        );
        await eventually(
          'a rule evaluation after the scrape',
          async () => {
            const [sample] = await promQuery('timestamp(api:deprecated_version_share:ratio_rate5m)');
            return sample !== undefined && Number(sample.value[1]) > scrapedAt ? true : undefined;
          },
          { timeoutMs: 60_000, intervalMs: 500 },
        );
        const [share] = await promQuery('api:deprecated_version_share:ratio_rate5m');
        expect(share, 'no api:deprecated_version_share:ratio_rate5m sample').toBeDefined();
        expect(Math.abs(Number(share!.value[1]) - 60 / 200), `share ${share!.value[1]}, sent 0.3`).toBeLessThanOrEqual(
          0.05,
        );
      });
    });

    describe('end-to-end scenarios shared with the process-based suite', () => {
      registerScenarios(stack);
    });

    describe('isolation and hardening', () => {
      it(
        'does not publish the backend, which sits on internal networks only, out of reach of the public ' + 'side',
        async () => {
          const backend = await inspect(await project.containerId('backend'));
          const bindings = Object.entries(backend.NetworkSettings.Ports ?? {}).filter(
            ([, bound]) => (bound ?? []).length > 0,
          );
          expect(bindings, 'host port bindings of the backend').toEqual([]);
          await expect(project.run(['port', 'backend', '8081'])).rejects.toThrow(
            /no port|not published|no public port/i,
          );

          const backendNetworks = Object.values(backend.NetworkSettings.Networks);
          expect(backendNetworks.length).toBeGreaterThan(0);
          for (const network of backendNetworks) {
            const { stdout } = await docker([
              'network',
              'inspect',
              '--format',
              '{{.Name}} {{.Internal}}',
              network.NetworkID,
            ]);
            expect(stdout.trim(), 'backend network').toMatch(/ true$/);
          }

          // A client on the gateway's public network (where a user's traffic arrives) reaches neither
          // the backend's name nor any of its addresses.
          const gateway = await inspect(await project.containerId('gateway'));
          const backendIds = new Set(backendNetworks.map((network) => network.NetworkID));
          const publicNetworks = Object.values(gateway.NetworkSettings.Networks).filter(
            (network) => !backendIds.has(network.NetworkID),
          );
          expect(publicNetworks.length, 'the gateway has a network the backend is not on').toBeGreaterThan(0);
          const addresses = backendNetworks.map((network) => network.IPAddress);
          const probe =
            `
        const net = require('node:net');
        const dns = require('node:dns/promises');
        const attempt = (host, port) => new Promise((resolve) => {
          const socket = net.connect({ host, port, timeout: 2000 });
          const settle = (result) => { socket.destroy(); resolve(host + ':' + port + ' ' + result); };
          socket.on('connect', () => settle('connected'));
          socket.on('timeout', () => settle('timeout'));
          socket.on('error', (err) => settle(err.code));
        });
        (async () => {
          const results = [await dns.lookup('backend').then((a) => 'backend resolves to ' + a.address, (err) => ` +
            `'backend ' + err.code)];
          for (const host of ${JSON.stringify(addresses)}) for (const port of [8081, 9465]) results.push(await ` +
            `attempt(host, port));
          console.log(JSON.stringify(results));
        })();`;
          for (const network of publicNetworks) {
            const { stdout } = await docker([
              'run',
              '--rm',
              '--network',
              network.NetworkID,
              '--entrypoint',
              'node',
              gateway.Config.Image,
              '-e',
              probe,
            ]);
            const results = JSON.parse(stdout) as string[];
            expect(results[0]).toBe('backend ENOTFOUND');
            expect(
              results.slice(1).filter((result) => result.endsWith('connected')),
              `from the public network: ${results.join(', ')}`,
            ).toEqual([]);
            expect(results.length).toBe(1 + addresses.length * 2);
          }
        },
      );

      it.each(['gateway', 'backend'])(
        'runs %s as non-root with a read-only root filesystem and no capabilities',
        async (service) => {
          const id = await project.containerId(service);
          const container = await inspect(id);
          expect(container.Config.User).toBe('node');
          expect(container.HostConfig.ReadonlyRootfs).toBe(true);
          expect(container.HostConfig.CapDrop).toEqual(['ALL']);
          expect(container.HostConfig.CapAdd ?? []).toEqual([]);
          expect(container.HostConfig.Privileged).toBe(false);
          expect(container.HostConfig.SecurityOpt).toContain('no-new-privileges:true');

          // The running server process itself, seen from inside the container.
          const probe =
            `
        const fs = require('node:fs');
        const pid = fs.readdirSync('/proc').filter((p) => /^\\d+$/.test(p))
          .find((p) => { try { return /dist\\/.*\\/main\\.js/.test(fs.readFileSync('/proc/' + p + '/cmdline', ` +
            `'utf8')); } catch { return false; } });
        const status = Object.fromEntries(fs.readFileSync('/proc/' + pid + '/status', 'utf8').split('\\n').map((l) ` +
            `=> l.split(':\\t')));
        let write = 'written';
        try { fs.writeFileSync('/app/probe', 'x'); } catch (err) { write = err.code; }
        console.log(JSON.stringify({ pid, uid: status.Uid, capEff: status.CapEff, capBnd: status.CapBnd, ` +
            `noNewPrivs: status.NoNewPrivs, write }));`;
          const { stdout } = await docker(['exec', id, 'node', '-e', probe]);
          const seen = JSON.parse(stdout) as Record<string, string>;
          expect(seen.pid, 'server process found').toBeDefined();
          expect(seen.uid?.split('\t')[0]).not.toBe('0');
          expect(seen.capEff).toBe('0000000000000000');
          expect(seen.capBnd).toBe('0000000000000000');
          expect(seen.noNewPrivs).toBe('1');
          expect(seen.write).toBe('EROFS');
        },
      );
    });

    describe('MailDev, the mail catcher the gateway sends its notices to', () => {
      /**
       * A minimal SMTP client (RFC 5321: greeting, EHLO, MAIL, RCPT, DATA, QUIT), run with `node -e` inside the
       * gateway's container: it sends to the host and port of the gateway's own SMTP_URL, from its NOTICE_FROM,
       * so what it proves is the path the gateway's notices take. Each reply is read to its last line
       * (`250 …`, not `250-…`) and must have the expected code.
       */
      const SMTP_SEND = `
      const net = require('node:net');
      const readline = require('node:readline');
      (async () => {
        const smtp = new URL(process.env.SMTP_URL);
        const socket = net.connect(Number(smtp.port), smtp.hostname);
        const lines = readline.createInterface({ input: socket })[Symbol.asyncIterator]();
        const expectReply = async (code) => {
          for (;;) {
            const { value, done } = await lines.next();
            if (done) throw new Error('connection closed waiting for ' + code);
            if (value[3] === '-') continue;
            if (!value.startsWith(code + ' ')) throw new Error('expected ' + code + ', got: ' + value);
            return;
          }
        };
        const command = async (line, code) => { socket.write(line + '\\r\\n'); await expectReply(code); };
        await expectReply('220');
        await command('EHLO gateway', '250');
        await command('MAIL FROM:<' + process.env.NOTICE_FROM + '>', '250');
        await command('RCPT TO:<' + process.env.MAIL_TO + '>', '250');
        await command('DATA', '354');
        await command([
          'From: ' + process.env.NOTICE_FROM,
          'To: ' + process.env.MAIL_TO,
          'Subject: ' + process.env.MAIL_SUBJECT,
          'Message-ID: <' + process.env.MAIL_ID + '>',
          'Date: ' + new Date().toUTCString(),
          'MIME-Version: 1.0',
          'Content-Type: text/plain; charset=utf-8',
          '',
          process.env.MAIL_TEXT,
          '.',
        ].join('\\r\\n'), '250');
        await command('QUIT', '221');
        socket.end();
      })().catch((err) => { console.error(err.message); process.exit(1); });`;

      it('answers on its published web port: the page, and an e-mail list on its API', async () => {
        const maildev = await project.url('maildev', 1080);
        const page = await fetch(maildev);
        expect(page.status).toBe(200);
        expect(page.headers.get('content-type')).toMatch(/^text\/html/);
        expect(await page.text()).toContain('MailDev');
        expect(Array.isArray(await maildevEmails(maildev))).toBe(true);
      });

      it('publishes its web page only: SMTP is reached inside the stack, not from the host', async () => {
        const container = await inspect(await project.containerId('maildev'));
        const published = Object.entries(container.NetworkSettings.Ports ?? {})
          .filter(([, bound]) => (bound ?? []).length > 0)
          .map(([port]) => port);
        expect(published).toEqual(['1080/tcp']);
        expect(Object.keys(container.HostConfig.PortBindings ?? {})).toEqual(['1080/tcp']);
      });

      it(
        "accepts a message over SMTP from the gateway's container at its SMTP_URL, and shows it through its " + 'API',
        async () => {
          const maildev = await project.url('maildev', 1080);
          const tag = `${Date.now()}-${Math.random().toString(36).slice(2)}`;
          const message = {
            MAIL_TO: 'team@consumer.example',
            MAIL_SUBJECT: `v1 is deprecated (container suite ${tag})`,
            MAIL_ID: `${tag}@version-router.test`,
            MAIL_TEXT: 'Version 1 will be removed.',
          };
          const env = Object.entries(message).flatMap(([name, value]) => ['--env', `${name}=${value}`]);
          await docker(['exec', ...env, await project.containerId('gateway'), 'node', '-e', SMTP_SEND]);

          const email = await waitForEmail(
            maildev,
            `the message "${message.MAIL_SUBJECT}"`,
            ({ subject }) => subject === message.MAIL_SUBJECT,
          );
          const gatewayEnv = (
            await docker(['exec', await project.containerId('gateway'), 'printenv', 'NOTICE_FROM'])
          ).stdout.trim();
          expect(email.from.map(({ address }) => address)).toEqual([gatewayEnv]);
          expect(email.to.map(({ address }) => address)).toEqual([message.MAIL_TO]);
          expect(email.messageId).toBe(message.MAIL_ID);
          expect(email.text?.trim()).toBe(message.MAIL_TEXT);
        },
      );

      it(
        'sends a registered consumer of v1 its deprecation notice, shown by MailDev: its own operation, what ' +
          "breaks in it, the notice's Message-ID",
        async () => {
          const maildev = await project.url('maildev', 1080);
          const token = (
            await docker(['exec', await project.containerId('gateway'), 'printenv', 'ADMIN_TOKEN'])
          ).stdout.trim();
          const tag = `${Date.now()}-${Math.random().toString(36).slice(2)}`;
          const contact = `notices-${tag}@consumer.example`;
          const created = await fetch(`${stack().gatewayAdminUrl}/consumers`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ name: `Notice Team ${tag}`, contact_email: contact }),
          });
          expect(created.status).toBe(201);
          const { id } = (await created.json()) as { id: string };
          const issued = await fetch(`${stack().gatewayAdminUrl}/consumers/${id}/keys`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}` },
          });
          expect(issued.status).toBe(201);
          const { key } = (await issued.json()) as { key: string };
          expect(
            (await fetch(`${stack().gatewayUrl}/v1/orders/ord-1001`, { headers: { 'api-key': key } })).status,
          ).toBe(200);

          // The ledger is written within 10 s, the notices looked for every 2 s (compose.test.yml).
          const notice = await waitForEmail(
            maildev,
            `the notice to ${contact}`,
            ({ to }) => to.some(({ address }) => address === contact),
            60_000,
          );
          const sunset = v1(JSON.parse(originalPolicy) as PolicyFile).sunset?.slice(0, 10);
          // The milestone due today: the announcement, or one of the 90, 30 and 7 days before the sunset.
          expect(notice.subject).toMatch(
            new RegExp(`^API v1 (is deprecated: it will be removed|will be removed in \\d+ days?,) on ${sunset}$`),
          );
          expect(notice.from.map(({ address }) => address)).toEqual(['api-versions@example.com']);
          expect(notice.messageId).toMatch(/^msg_[\w-]{24}@example\.com$/);
          expect(notice.text).toContain(`Hello Notice Team ${tag},`);
          expect(notice.text).toContain('- GET /v1/orders/{id}: 1 request, last on ');
          expect(notice.text).toMatch(
            /breaking: user_id is now customer_id: The customer identifier under its old name\./,
          );
          expect(notice.text).toContain('The migration guide: /versions/1/changes');
        },
      );
    });

    it('serves the provisioned dashboard from Grafana to an anonymous viewer', async (context) => {
      if (standin) process.stdout.write(`container suite: Grafana test skipped: ${GRAFANA_SKIPPED}\n`);
      context.skip(standin, GRAFANA_SKIPPED);
      const dashboard = JSON.parse(
        readFileSync(join(repoRoot, 'ops/grafana/dashboards/api-versions.json'), 'utf8'),
      ) as { uid: string; title: string };
      const grafana = await project.url('grafana', 3000);
      // Provisioning runs at start, before /api/health answers, but give the file provider a moment.
      const response = await eventually(
        'Grafana to know the dashboard',
        async () => {
          const answer = await fetch(`${grafana}/api/dashboards/uid/${dashboard.uid}`);
          return answer.status === 404 ? undefined : answer;
        },
        { timeoutMs: 60_000, intervalMs: 2_000 },
      );
      expect(response.status).toBe(200); // no credentials sent: anonymous access
      const body = (await response.json()) as {
        dashboard: { title: string };
        meta: { provisioned: boolean; canEdit: boolean };
      };
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

    describe('operations from docs/deployment.md', () => {
      it(
        'docker compose stop gateway during an upload: the upload gets its 201, the gateway exits 0 within the ' +
          'grace period',
        async () => {
          const id = await project.containerId('gateway');
          const shutdownLines = async () =>
            (await project.logs('gateway')).split('\n').filter((line) => line.includes('"shutting down"')).length;
          const before = await shutdownLines();

          const core = '{"name":"Drain","email":"drain@example.com"}';
          const body = Buffer.from(`${core.slice(0, -1)}${' '.repeat(256 * 1024 - core.length)}}`);
          const { hostname, port } = new URL(stack().gatewayUrl);
          const upload = request({
            host: hostname,
            port,
            path: '/api/users',
            method: 'POST',
            agent: false,
            headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
          });
          const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
            upload.on('response', (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (chunk: Buffer) => chunks.push(chunk));
              res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
            });
            upload.on('error', reject);
          });
          upload.write(body.subarray(0, body.length / 2));
          await sleep(500);

          const stopStarted = Date.now();
          const stopped = project.run(['stop', 'gateway'], 60_000).then(() => Date.now() - stopStarted);
          // The upload is still open when the gateway has received SIGTERM and started draining.
          await eventually(
            'the gateway to log "shutting down"',
            async () => ((await shutdownLines()) > before ? true : undefined),
            { timeoutMs: 10_000, intervalMs: 500 },
          );
          upload.end(body.subarray(body.length / 2));

          const response = await answered;
          expect(response.status, response.body).toBe(201);
          expect(JSON.parse(response.body)).toMatchObject({ name: 'Drain', email: 'drain@example.com' });
          const stopMs = await stopped;
          const state = await inspect(id);
          expect(state.State.Status).toBe('exited');
          expect(state.State.ExitCode, 'exit code after docker compose stop').toBe(0);
          expect(stopMs, 'docker compose stop took longer than the 15 s grace period').toBeLessThan(15_000);

          await project.run(['start', 'gateway'], 60_000);
          await waitForContainer(id, 'healthy', healthy, 90_000);
          await refreshEndpoints();
        },
      );

      it(
        'an edited ops/versions.json with v1 past its sunset and the default + docker compose restart gateway: ' +
          'healthy, v1 answers 410, and so do requests that name no version, with the successor link',
        async () => {
          try {
            writePolicy((policy) => {
              Object.assign(v1(policy), { announced: '2025-01-01', sunset: '2025-08-01T00:00:00Z' });
              // A date never stops a start: the gateway serves the policy as written and says why.
              Object.assign(policy, { default_version: 1 });
            });
            await restartGateway();
            const unnamed = await fetch(`${stack().gatewayUrl}/orders/ord-1001`);
            expect(unnamed.status).toBe(410);
            expect(unnamed.headers.get('link')).toBe('</v2/orders/ord-1001>; rel="successor-version"');
            expect(await (await fetch(`${stack().gatewayAdminUrl}/metrics`)).text()).toMatch(
              /^api_version_policy_problems\{rule="default_version_removed"\} 1$/m,
            );
            expect(await project.logs('gateway')).toContain('"msg":"version policy problem default_version_removed:');
            const removed = await fetch(`${stack().gatewayUrl}/v1/orders/ord-1001`);
            expect(removed.status).toBe(410);
            expect(await removed.json()).toEqual({
              error: 'version_removed',
              code: 410,
              details: 'version 1 was removed on Fri, 01 Aug 2025 00:00:00 GMT; use version 2',
            });
            expect(removed.headers.get('sunset')).toBe('Fri, 01 Aug 2025 00:00:00 GMT');
            const current = await fetch(`${stack().gatewayUrl}/v2/orders/ord-1001`);
            expect(current.status).toBe(200);
            expect(await current.json()).toEqual(V2_ORDER);
          } finally {
            writeFileSync(policyCopy, originalPolicy);
            await restartGateway();
          }
          expect((await fetch(`${stack().gatewayUrl}/v1/orders/ord-1001`)).status).toBe(200);
        },
      );

      it(
        'docker compose kill -s HUP gateway applies an edited policy without a restart, and keeps it when the next ' +
          'edit is refused',
        async () => {
          const id = await project.containerId('gateway');
          const restartsBefore = (await inspect(id)).RestartCount;
          const reloadLines = async (msg: string) =>
            (await project.logs('gateway')).split('\n').filter((line) => line.includes(`"msg":"${msg}`)).length;
          try {
            const reloadedBefore = await reloadLines('version policy reloaded');
            const shipped = JSON.parse(originalPolicy) as PolicyFile;
            // One above the highest listed version: a version the shipped policy does not have yet.
            const added = Math.max(...shipped.versions.map(({ version }) => version)) + 1;
            const supported = [
              ...shipped.versions.filter(({ status }) => status === 'current').map(({ version }) => version),
              added,
            ].join(', ');
            writePolicy((policy) => {
              policy.versions.push({ version: added, status: 'current' });
            });
            await project.run(['kill', '-s', 'HUP', 'gateway'], 30_000);
            await eventually(
              'the reload log line',
              async () => ((await reloadLines('version policy reloaded')) > reloadedBefore ? true : undefined),
              { timeoutMs: 15_000, intervalMs: 500 },
            );
            const served = await fetch(`${stack().gatewayUrl}/v${added}/orders/ord-1001`);
            expect(served.headers.get('api-version')).toBe(String(added));
            expect(served.headers.get('api-supported-versions')).toBe(supported);

            const refusedBefore = await reloadLines('version policy reload failed');
            writePolicy((policy) => {
              policy.default_version = 9;
            });
            await project.run(['kill', '-s', 'HUP', 'gateway'], 30_000);
            await eventually(
              'the refused-reload log line',
              async () => ((await reloadLines('version policy reload failed')) > refusedBefore ? true : undefined),
              { timeoutMs: 15_000, intervalMs: 500 },
            );
            expect((await fetch(`${stack().gatewayUrl}/v${added}/orders/ord-1001`)).headers.get('api-version')).toBe(
              String(added),
            );
            const after = await inspect(id);
            expect(after.State.Status).toBe('running');
            expect(after.RestartCount).toBe(restartsBefore);
          } finally {
            writeFileSync(policyCopy, originalPolicy);
            await project.run(['kill', '-s', 'HUP', 'gateway'], 30_000);
          }
        },
      );

      it(
        'a policy that breaks the lifecycle rules: the restarted gateway exits non-zero and says why in docker ' +
          'compose logs',
        async () => {
          const id = await project.containerId('gateway');
          try {
            writePolicy((policy) => {
              Object.assign(v1(policy), { announced: '2026-06-01', sunset: '2026-07-01T00:00:00Z' });
            });
            await project.run(['restart', 'gateway'], 60_000);
            const exited = await waitForContainer(
              id,
              'exited with an error',
              (state) => state.State.ExitCode !== 0,
              60_000,
            );
            expect(exited.State.ExitCode).not.toBe(0);
            expect(await project.logs('gateway')).toMatch(
              /sunset 2026-07-01\S* is less than 6 calendar months after announced 2026-06-01/,
            );
          } finally {
            writeFileSync(policyCopy, originalPolicy);
            await restartGateway();
          }
          expect((await fetch(`${stack().gatewayUrl}/v2/orders/ord-1001`)).status).toBe(200);
        },
      );

      it(
        '"Deploy one service alone" as written in docs/deployment.md serves GET /v2/orders/ord-1001 through the ' +
          'lone gateway',
        async () => {
          const deployment = readFileSync(join(repoRoot, 'docs/deployment.md'), 'utf8');
          const script = /\*\*Deploy one service alone:\*\*[\s\S]*?```sh\n([\s\S]*?)```/.exec(deployment)?.[1];
          expect(script, 'docs/deployment.md has a "Deploy one service alone" sh block').toBeDefined();
          expect(
            script!.match(/^docker build --target /gm)?.length,
            'docker build commands in the docs/deployment.md block',
          ).toBe(2);
          // The stand-in base replaces node:24-trixie-slim where no registry is reachable; nothing else changes.
          const commands = standin
            ? script!.replaceAll(
                'docker build --target ',
                `docker build --build-arg NODE_IMAGE=${STANDIN_NODE_IMAGE} --target `,
              )
            : script!;

          // The commands use fixed names; never remove a container or network this test did not create.
          for (const [kind, name] of [
            ['container', 'backend'],
            ['container', 'gateway'],
            ['network', 'app'],
          ] as const) {
            await expect(
              docker([kind, 'inspect', name]),
              `a ${kind} named "${name}" already exists on this engine`,
            ).rejects.toThrow();
          }
          try {
            await bash(commands, repoRoot);
            await waitForContainer('gateway', 'healthy', healthy, 120_000);
            const response = await fetch(`http://${project.host}:8080/v2/orders/ord-1001`);
            expect(response.status).toBe(200);
            expect(await response.json()).toEqual(V2_ORDER);
          } finally {
            await docker(['rm', '--force', 'gateway', 'backend']).catch(() => undefined);
            await docker(['network', 'rm', 'app']).catch(() => undefined);
          }
        },
        600_000,
      );
    });

    describe("the README's curls two years ahead", () => {
      /**
       * The gateway container recreated on a clock two years ahead (GATEWAY_CLOCK_START, which the image's
       * NODE_ENV=production refuses, so the overlay sets it to development for this container only): the same image,
       * policy and code path answer as they will on that date. libfaketime is not in the image, and a preview alone
       * would not send the curls.
       */
      const recreateGateway = async (env: Record<string, string>): Promise<void> => {
        const moved = new ComposeProject(
          project.root,
          project.name,
          project.files,
          { ...project.env, ...env },
          project.host,
        );
        await moved.run(['up', '--detach', '--no-deps', 'gateway'], 120_000);
        await waitForContainer(await project.containerId('gateway'), 'healthy', healthy, 90_000);
        await refreshEndpoints();
      };

      it('are answered as the README says by docker compose up on a clock moved two years ahead', async () => {
        const twoYearsAhead = new Date(Date.now() + 730 * 86_400_000).toISOString();
        try {
          await recreateGateway({ GATEWAY_CLOCK_START: twoYearsAhead, GATEWAY_NODE_ENV: 'development' });
          expect(await project.logs('gateway')).toContain(`"clockStart":"${twoYearsAhead}"`);
          expect(await readmeCurlProblems(stack().gatewayUrl)).toEqual([]);
        } finally {
          await recreateGateway({});
        }
        expect(await project.logs('gateway')).not.toContain('the clock is moved');
        expect(await readmeCurlProblems(stack().gatewayUrl)).toEqual([]);
      });
    });
  },
);
