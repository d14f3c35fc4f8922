/**
 * The compose overlays, checked without a Docker engine: docker-compose.postgres.yml (users in
 * PostgreSQL) and docker-compose.fleet.yml (replicas behind HAProxy), with the HAProxy and
 * Prometheus configurations they mount. The running variants are tested by test/containers/
 * (`npm run test:containers`). Schema validity is checked with the other compose files in
 * containers.test.ts.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  environment,
  mounts,
  publishedPorts,
  readCompose,
  readYaml,
  serviceNetworks,
  paths,
  type ComposeFile,
  type ComposeService,
} from './container-files.js';
import { repoRoot } from '../../scripts/paths.mjs';

const base = readCompose(paths.compose);
const postgresOverlay = readCompose(paths.composePostgres);
const fleet = readCompose(paths.composeFleet);
/**
 * Node's drain after the listener closes (docs/http.md#draining-and-shutdown): stop_grace_period must cover delay
 * + drain.
 */
const DRAIN_MS = 10_000;

function service(file: ComposeFile, name: string): ComposeService {
  const found = file.services[name];
  if (found === undefined) throw new Error(`no service "${name}"`);
  return found;
}

const seconds = (duration: string | undefined): number => Number(/^(\d+)s$/.exec(duration ?? '')?.[1]);
const internalNetworks = Object.entries(base.networks ?? {})
  .filter(([, network]) => network?.internal === true)
  .map(([name]) => name);
const mountedFile = (definition: ComposeService, target: string): string | undefined => {
  const mount = mounts(definition).find((candidate) => candidate.target === target);
  return mount === undefined ? undefined : relative(repoRoot, resolve(repoRoot, mount.source));
};

/** The hardening every service of ours gets: no capabilities, no privilege gain, read-only root. */
function expectHardened(definition: ComposeService, name: string): void {
  expect(definition.cap_drop, `${name} cap_drop`).toEqual(['ALL']);
  expect(definition.security_opt, `${name} security_opt`).toContain('no-new-privileges:true');
  expect(definition.read_only, `${name} read_only`).toBe(true);
}

/** interval, fall and the /readyz check of a backend section of an HAProxy configuration. */
function haproxyChecks(file: string): {
  interMs: number;
  fall: number;
  checkPort: number;
  httpchk: string;
  template: string;
} {
  const cfg = readFileSync(join(repoRoot, file), 'utf8');
  const defaultServer = /^\s*default-server\s+(.*)$/m.exec(cfg)?.[1] ?? '';
  return {
    interMs: Number(/\binter (\d+)ms\b/.exec(defaultServer)?.[1]),
    fall: Number(/\bfall (\d+)\b/.exec(defaultServer)?.[1]),
    checkPort: Number(/\bcheck port (\d+)\b/.exec(defaultServer)?.[1]),
    httpchk: /^\s*option httpchk (.*)$/m.exec(cfg)?.[1]?.trim() ?? '',
    template: /^\s*server-template \S+ \d+ (\S+)/m.exec(cfg)?.[1] ?? '',
  };
}

describe('docker-compose.postgres.yml', () => {
  const postgres = service(postgresOverlay, 'postgres');
  const backend = service(postgresOverlay, 'backend');

  it('runs the official postgres:17 image, on the internal network only, published nowhere', () => {
    expect(postgres.image).toBe('postgres:17');
    expect(publishedPorts(postgres)).toEqual([]);
    for (const network of serviceNetworks(postgres))
      expect(internalNetworks, `postgres is on network ${network}`).toContain(network);
  });

  it('keeps the data on a named volume at the image data directory', () => {
    const data = mounts(postgres).find((mount) => mount.target === '/var/lib/postgresql/data');
    expect(data?.bind, 'a named volume, not a host path').toBe(false);
    expect(Object.keys(postgresOverlay.volumes ?? {})).toContain(data?.source);
  });

  it('is healthchecked with pg_isready over TCP, so a database still initialising is not healthy', () => {
    const test = postgres.healthcheck?.test;
    const command = Array.isArray(test) ? test.slice(1).join(' ') : (test ?? '');
    expect(command).toMatch(/^pg_isready /);
    expect(command).toMatch(/-h 127\.0\.0\.1\b/);
  });

  it('runs as the image user postgres with no capabilities, a read-only root and tmpfs for its socket and /tmp', () => {
    expect(postgres.user).toBe('postgres');
    expectHardened(postgres, 'postgres');
    expect(postgres.tmpfs).toEqual(expect.arrayContaining(['/tmp', '/var/run/postgresql']));
  });

  it(
    'gives the backend a DATABASE_URL on that service with the credentials from the environment, defaults for ' +
      'local use',
    () => {
      const env = environment(backend);
      const credentials = environment(postgres);
      expect(credentials).toEqual({
        POSTGRES_USER: '${POSTGRES_USER:-version_router}',
        POSTGRES_PASSWORD: '${POSTGRES_PASSWORD:-version_router}',
        POSTGRES_DB: '${POSTGRES_DB:-version_router}',
      });
      expect(env.DATABASE_URL).toBe(
        `postgres://${credentials.POSTGRES_USER}:${credentials.POSTGRES_PASSWORD}@postgres:5432/` +
          `${credentials.POSTGRES_DB}`,
      );
      expect(env.DATABASE_POOL_MAX).toBe('${DATABASE_POOL_MAX:-10}');
      expect(backend.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    },
  );

  it('changes nothing else of the backend, and docker-compose.yml alone stays in memory', () => {
    expect(Object.keys(backend).sort()).toEqual(['depends_on', 'environment']);
    expect(Object.keys(postgresOverlay.services).sort()).toEqual(['backend', 'postgres']);
    expect(environment(service(base, 'backend')).DATABASE_URL).toBeUndefined();
    expect(base.services.postgres).toBeUndefined();
  });
});

describe('docker-compose.fleet.yml', () => {
  const gatewayChecks = haproxyChecks('ops/haproxy/haproxy.cfg');
  const backendChecks = haproxyChecks('ops/haproxy/backend-haproxy.cfg');

  it('takes PostgreSQL from docker-compose.postgres.yml and gives both backend replicas the same DATABASE_URL', () => {
    expect(service(fleet, 'postgres').extends).toEqual({ file: 'docker-compose.postgres.yml', service: 'postgres' });
    const env = environment(service(fleet, 'backend'));
    expect(env.DATABASE_URL).toBe(environment(service(postgresOverlay, 'backend')).DATABASE_URL);
    expect(env.DATABASE_POOL_MAX).toBe(environment(service(postgresOverlay, 'backend')).DATABASE_POOL_MAX);
    expect(service(fleet, 'backend').depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
  });

  it('runs 2 backend and 3 gateway replicas; the gateways publish nothing, HAProxy publishes :8080', () => {
    expect(service(fleet, 'backend').deploy?.replicas).toBe(2);
    expect(service(fleet, 'gateway').deploy?.replicas).toBe(3);
    expect(service(fleet, 'gateway').ports).toEqual([]);
    expect(publishedPorts(service(fleet, 'haproxy')).map((port) => [port.target, port.published])).toEqual([
      [8080, '8080'],
    ]);
  });

  it.each([
    ['haproxy', 'ops/haproxy/haproxy.cfg'],
    ['backend-haproxy', 'ops/haproxy/backend-haproxy.cfg'],
  ])('%s runs the official haproxy:3 image on %s, read-only, hardened and healthchecked', (name, config) => {
    const definition = service(fleet, name);
    expect(definition.image).toBe('haproxy:3');
    expect(mountedFile(definition, '/usr/local/etc/haproxy/haproxy.cfg')).toBe(config);
    expect(mounts(definition).every((mount) => mount.readOnly)).toBe(true);
    expectHardened(definition, name);
    expect(definition.healthcheck?.test).toBeDefined();
  });

  it(
    'puts the backends behind the internal HAProxy: on internal networks only, the gateways reach them through ' + 'it',
    () => {
      for (const network of serviceNetworks(service(fleet, 'backend-haproxy')))
        expect(internalNetworks).toContain(network);
      expect(environment(service(fleet, 'gateway')).BACKEND_URL).toBe('http://backend-haproxy:8081');
      expect(backendChecks.template).toBe('backend:8081');
      expect(gatewayChecks.template).toBe('gateway:8080');
    },
  );

  it.each(['ops/haproxy/haproxy.cfg', 'ops/haproxy/backend-haproxy.cfg'])(
    "%s answers its own errors in the API's JSON envelope",
    (config) => {
      const errors = [
        ...readFileSync(join(repoRoot, config), 'utf8').matchAll(
          /^\s*http-error status (\d+) content-type (\S+) string '(.*)'$/gm,
        ),
      ];
      expect(errors.map((match) => Number(match[1]))).toEqual([502, 503, 504]);
      for (const [, status, contentType, body] of errors) {
        expect(contentType).toBe('application/json');
        expect(JSON.parse(body!)).toEqual({ error: expect.any(String) as string, code: Number(status) });
      }
    },
  );

  it.each(['ops/haproxy/haproxy.cfg', 'ops/haproxy/backend-haproxy.cfg'])(
    '%s retries on another replica only a GET or HEAD, or a POST with an Idempotency-Key, held whole, with a server ' +
      'timeout above the gateway deadlines',
    (config) => {
      const cfg = readFileSync(join(repoRoot, config), 'utf8');
      const directive = (name: string): string[] =>
        [...cfg.matchAll(new RegExp(`^\\s*${name}\\b(.*)$`, 'gm'))].map((match) => match[1]!.trim());
      expect(directive('retry-on')).toEqual(['conn-failure empty-response response-timeout']);
      expect(directive('http-request disable-l7-retry')).toEqual([
        'unless METH_GET or METH_POST { req.hdr(idempotency-key) -m found }',
      ]);
      expect(directive('option redispatch')).toEqual(['1']);
      expect(directive('option http-buffer-request')).toEqual(['']);
      // Above BACKEND_TIMEOUT_MS (9 s by default): the gateway's own 504 comes first.
      expect(Number(/^(\d+)s$/.exec(directive('timeout server')[0] ?? '')?.[1])).toBeGreaterThan(9);
    },
  );

  it("has each HAProxy check every replica's /readyz on its admin port", () => {
    expect(gatewayChecks.httpchk).toBe('GET /readyz');
    expect(backendChecks.httpchk).toBe('GET /readyz');
    expect(String(gatewayChecks.checkPort)).toBe(environment(service(base, 'gateway')).GATEWAY_ADMIN_PORT);
    expect(String(backendChecks.checkPort)).toBe(environment(service(base, 'backend')).BACKEND_ADMIN_PORT);
  });

  it.each([
    ['gateway', 'ops/haproxy/haproxy.cfg'],
    ['backend', 'ops/haproxy/backend-haproxy.cfg'],
  ])(
    'gives every %s replica a SHUTDOWN_DELAY_MS above what HAProxy needs to take it out, and a stop grace period ' +
      'above delay + drain',
    (name, config) => {
      const { interMs, fall } = haproxyChecks(config);
      expect(interMs).toBeGreaterThan(0);
      expect(fall).toBeGreaterThan(0);
      const delay = Number(environment(service(fleet, name)).SHUTDOWN_DELAY_MS);
      // fall failed checks, each up to one interval apart and one (default: interval) timeout long.
      expect(delay, `${name} SHUTDOWN_DELAY_MS`).toBeGreaterThan(interMs * (fall + 1));
      expect(seconds(service(fleet, name).stop_grace_period) * 1000, `${name} stop_grace_period`).toBeGreaterThan(
        delay + DRAIN_MS,
      );
    },
  );

  it(
    "keeps docker-compose.yml's mount of ops/ as a directory at the policy file directory, so an edit renamed over " +
      'the file reaches the gateways',
    () => {
      expect(service(fleet, 'gateway').volumes).toBeUndefined();
      const policyFile = environment(service(base, 'gateway')).API_VERSIONS_FILE ?? '';
      const mount = mounts(service(base, 'gateway')).find((candidate) => candidate.target === dirname(policyFile));
      expect(mount, `a mount at ${dirname(policyFile)}`).toBeDefined();
      expect(relative(repoRoot, resolve(repoRoot, mount!.source))).toBe('ops');
      expect(mount!.readOnly).toBe(true);
    },
  );

  it('waits on healthchecks: every depends_on of the fleet is service_healthy', () => {
    for (const [name, definition] of Object.entries(fleet.services)) {
      for (const [on, dependency] of Object.entries(
        (definition.depends_on ?? {}) as Record<string, { condition: string }>,
      )) {
        expect(dependency.condition, `${name} → ${on}`).toBe('service_healthy');
      }
    }
  });

  it("points Prometheus at prometheus.fleet.yml, which finds every replica by DNS on the services' admin ports", () => {
    const command = service(fleet, 'prometheus').command ?? [];
    expect(command).toContain('--config.file=/etc/prometheus/prometheus.fleet.yml');
    const config = readYaml(join(repoRoot, 'ops/prometheus/prometheus.fleet.yml')) as {
      rule_files: string[];
      scrape_configs: { job_name: string; dns_sd_configs?: { names: string[]; type: string; port: number }[] }[];
    };
    expect(config.rule_files).toEqual(['rules.yml']);
    const discovered = Object.fromEntries(
      config.scrape_configs.map((job) => [
        job.job_name,
        job.dns_sd_configs?.map(({ names, type, port }) => ({ names, type, port })),
      ]),
    );
    expect(discovered['version-router-gateway']).toEqual([
      { names: ['gateway'], type: 'A', port: Number(environment(service(base, 'gateway')).GATEWAY_ADMIN_PORT) },
    ]);
    expect(discovered['version-router-backend']).toEqual([
      { names: ['backend'], type: 'A', port: Number(environment(service(base, 'backend')).BACKEND_ADMIN_PORT) },
    ]);
    expect(discovered.haproxy).toEqual([{ names: ['haproxy', 'backend-haproxy'], type: 'A', port: 8404 }]);
  });
});
