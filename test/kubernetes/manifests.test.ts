/**
 * deploy/kubernetes offline: each kustomization rendered as `kubectl apply -k` renders it, every object
 * validated against its schema, and the rules of docs/deployment.md#kubernetes checked on what was
 * rendered (test/kubernetes/rules.test.ts, network-rules.test.ts, operator-rules.test.ts and database-rules.test.ts
 * show each rule failing on a broken object). No cluster runs here.
 */
import { PrometheusRule, ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1';
import { HTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Service, ServiceAccount } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { kubernetesCopies, syncCommand } from '../../scripts/kubernetes-copies.mjs';
import { scrapeJobs } from '../ops/scrape-jobs.js';
import {
  DEFAULT_MAX_CONNECTIONS,
  backendScaleViolations,
  connectionBudgetViolations,
  connectionUses,
  migrationJobViolations,
  progressDeadlineViolations,
  type ConnectionsOf,
} from './database-rules.js';
import {
  adminServiceViolations,
  autoscalerBehaviorViolations,
  availabilityViolations,
  closedToIngressViolations,
  copyViolations,
  egressViolations,
  namespaceViolations,
  networkPolicyViolations,
  ruleGroupViolations,
  serviceAccountViolations,
  serviceMonitorViolations,
} from './fleet-rules.js';
import { render, renderEdited, type ManifestObject } from './kubectl.js';
import {
  containersOf,
  envValue,
  envViolations,
  imageViolations,
  podSecurityViolations,
  podSpec,
  policyMountViolations,
  probeViolations,
  resourceViolations,
  shutdownViolations,
  subPathViolations,
  type Workload,
} from './pod-rules.js';
import { measuredMemory, measuredMillicoresPer1000Rps, packageVersion } from './measured.js';
import { INGRESS_NAMESPACE, egressAllowances, portAccess } from './network-access.js';
import {
  autoscalingViolations,
  dashboardViolations,
  exposureViolations,
  memoryViolations,
  secretViolations,
  startupBudgetViolations,
} from './operator-rules.js';
import { drainMs, migrationCommands, processes, MIGRATION_CONNECTIONS, type ProcessFacts } from './processes.js';
import { ofKind, schemaViolations } from './schemas.js';
import { describeWithTool } from '../../platform/test/support/tools.js';
import { readRepoFile } from '../support/repo-file.js';

const NAMESPACE = 'version-router';
const BASE = 'deploy/kubernetes/base';
const POSTGRES = 'deploy/kubernetes/overlays/postgres';
const PRODUCTION = 'deploy/kubernetes/overlays/production';
const MONITORING = 'deploy/kubernetes/monitoring';
const INGRESS = 'deploy/kubernetes/exposure/ingress';
const GATEWAY_API = 'deploy/kubernetes/exposure/gateway-api';
/** The secrets the pods read, each from the Secret the operator creates. */
const ADMIN_TOKEN = { variable: 'ADMIN_TOKEN', secret: 'version-router-admin', key: 'token', optional: false };
const DATABASE_URL = { variable: 'DATABASE_URL', secret: 'version-router-database', key: 'url', optional: false };
const MIGRATION_DATABASE_URL = { ...DATABASE_URL, secret: 'version-router-database-migrations' };
/** What labels the migration Job and what it needs, so that it can be applied alone, before the rollout. */
const MIGRATION_SELECTOR = ['app.kubernetes.io/component', 'migrations'] as const;
/**
 * Besides DATABASE_MIGRATION_TIMEOUT_MS, a start takes its connection (at most 5 s) and the process's own start.
 */
const START_MARGIN_MS = 15_000;

const renders = new Map<string, ManifestObject[]>();
function rendered(directory: string): ManifestObject[] {
  const cached = renders.get(directory) ?? render(directory);
  renders.set(directory, cached);
  return cached;
}

/** What runs pods: the Deployments and the migration Job. */
const workloadsOf = (objects: ManifestObject[]): Workload[] => [
  ...ofKind(objects, Deployment.is),
  ...ofKind(objects, Job.is),
];

function deployment(objects: ManifestObject[], name: string): IDeployment {
  const found = ofKind(objects, Deployment.is).find((candidate) => candidate.metadata?.name === name);
  if (found === undefined) throw new Error(`no Deployment/${name}`);
  return found;
}

function processOf(found: IDeployment): ProcessFacts {
  const facts = Object.values(processes).find((candidate) => candidate.name === found.metadata?.name);
  if (facts === undefined) throw new Error(`Deployment/${found.metadata?.name} is no process of this repository`);
  return facts;
}

/** The literal environment of the workload's containers. */
function literalEnv(found: Workload): NodeJS.ProcessEnv {
  return Object.fromEntries(
    containersOf(found).flatMap((container) =>
      (container.env ?? [])
        .filter((variable) => variable.value !== undefined)
        .map((variable) => [variable.name, variable.value]),
    ),
  );
}

/** The variables the workload's containers read: a process's config.ts, or the migration commands'. */
function namesRead(found: Workload): Set<string> {
  if (found.kind === 'Deployment') return processOf(found).namesRead(literalEnv(found));
  // DATABASE_URL comes from a Secret; the commands refuse to run without one.
  const env = { ...literalEnv(found), DATABASE_URL: 'postgres://database.invalid/router' };
  return new Set(
    containersOf(found).flatMap((container) => [
      ...(migrationCommands[container.name as 'gateway' | 'backend']?.namesRead(env) ?? []),
    ]),
  );
}

/**
 * The connections one container may hold: a process's DATABASE_POOL_MAX (config.ts's reading of its environment), a
 * migration command's one connection; none without DATABASE_URL.
 */
const connectionsOf: ConnectionsOf = (workload, container) => {
  if (!(container.env ?? []).some((variable) => variable.name === 'DATABASE_URL')) return 0;
  if (workload.kind === 'Job') return MIGRATION_CONNECTIONS;
  const facts = processes[processOf(workload).name];
  const env = Object.fromEntries(
    (container.env ?? []).flatMap((variable) =>
      variable.value === undefined ? [] : [[variable.name, variable.value]],
    ),
  );
  return facts.config({ ...env, DATABASE_URL: 'postgres://database.invalid/router' }).database?.poolMax ?? 0;
};

/** The labels an object of the rendered manifests carries. */
const labelsOf = (object: ManifestObject): Record<string, string> => object.metadata.labels ?? {};

describe('copies kustomize needs inside deploy/kubernetes', () => {
  it('equal what their sources make of them', () => {
    const copies = kubernetesCopies().map(({ target, source, content }) => {
      let actual: string | undefined;
      try {
        actual = readRepoFile(target);
      } catch {
        actual = undefined;
      }
      return { target, source, expected: content, actual };
    });
    expect(copyViolations(copies, syncCommand)).toEqual([]);
  });
});

describeWithTool('kubectl', 'kustomizations rendered', () => {
  describe.each([BASE, POSTGRES, PRODUCTION, MONITORING, INGRESS, GATEWAY_API])('%s', (directory) => {
    it('renders, and every object validates against its Kubernetes or prometheus-operator schema', () => {
      const objects = rendered(directory);
      expect(objects.length).toBeGreaterThan(0);
      expect(objects.flatMap(schemaViolations)).toEqual([]);
    });

    it(`puts every object in the namespace ${NAMESPACE}`, () => {
      expect(namespaceViolations(rendered(directory), NAMESPACE)).toEqual([]);
    });
  });

  describe.each([BASE, POSTGRES])('pods of %s', (directory) => {
    const deployments = (): IDeployment[] => ofKind(rendered(directory), Deployment.is);
    const workloads = (): Workload[] => workloadsOf(rendered(directory));

    it('renders the gateway and the backend Deployments', () => {
      expect(
        deployments()
          .map((found) => found.metadata?.name)
          .sort(),
      ).toEqual(['backend', 'gateway']);
    });

    it('run under Pod Security "restricted" with a read-only root filesystem', () => {
      expect(workloads().flatMap(podSecurityViolations)).toEqual([]);
    });

    it('probe /healthz, /readyz and startup on the admin port config.ts defaults to, listening on 0.0.0.0', () => {
      expect(deployments().flatMap((found) => probeViolations(found, processOf(found).admin))).toEqual([]);
    });

    it('serve the API on the port config.ts defaults to', () => {
      for (const found of deployments()) {
        const container = podSpec(found).containers[0];
        expect(container?.ports?.find((port) => port.name === 'http')?.containerPort, found.metadata?.name).toBe(
          processOf(found).apiPort,
        );
      }
    });

    it('request and limit CPU and memory', () => {
      expect(workloads().flatMap(resourceViolations)).toEqual([]);
    });

    it('leave the load balancer before closing: SHUTDOWN_DELAY_MS 5000 and a grace period above delay + drain', () => {
      expect(deployments().flatMap((found) => shutdownViolations(found, drainMs))).toEqual([]);
      for (const found of deployments())
        expect(envValue(podSpec(found).containers[0]!, 'SHUTDOWN_DELAY_MS')).toBe('5000');
    });

    it('mount nothing with subPath', () => {
      expect(workloads().flatMap(subPathViolations)).toEqual([]);
    });

    it(
      'use pinned images, version-router-<process>:<package.json version> as the documented docker build names ' +
        'them, the Job the images of the Deployments',
      () => {
        expect(workloads().flatMap(imageViolations)).toEqual([]);
        for (const container of workloads().flatMap(containersOf))
          expect(container.image).toBe(`version-router-${container.name}:${packageVersion()}`);
      },
    );

    it('request at least the memory measured under load, and cap the V8 heap where it fits the limit', () => {
      expect(
        deployments().flatMap((found) =>
          memoryViolations(found, measuredMemory(directory === POSTGRES ? 'postgres' : 'embedded')),
        ),
      ).toEqual([]);
    });

    it('take ADMIN_TOKEN from the Secret version-router-admin, required', () => {
      expect(deployments().flatMap((found) => secretViolations(found, [ADMIN_TOKEN]))).toEqual([]);
    });

    it('keep serving through rollouts and node drains, under budgets that scale', () => {
      const objects = rendered(directory);
      const autoscalers = ofKind(objects, HorizontalPodAutoscaler.is);
      const budgets = ofKind(objects, PodDisruptionBudget.is);
      expect(deployments().flatMap((found) => availabilityViolations(found, autoscalers, budgets))).toEqual([]);
      expect(autoscalers.length).toBeGreaterThan(0);
      expect(autoscalers.flatMap(autoscalerBehaviorViolations)).toEqual([]);
    });

    it('run each as a ServiceAccount of its own that mounts no token', () => {
      const accounts = ofKind(rendered(directory), ServiceAccount.is);
      expect(serviceAccountViolations(workloads(), accounts)).toEqual([]);
    });

    it('never take longer to start than the rollout waits (progressDeadlineSeconds)', () => {
      expect(deployments().flatMap(progressDeadlineViolations)).toEqual([]);
    });

    it('set only variables their config.ts (or migration command) reads, with values it accepts, no service links', () => {
      expect(workloads().flatMap((found) => envViolations(found, namesRead(found)))).toEqual([]);
    });

    it(
      'give the gateway the policy ConfigMap mounted as a directory, named without a hash, holding ' +
        'ops/versions.json',
      () => {
        const objects = rendered(directory);
        const policy = {
          variable: 'API_VERSIONS_FILE',
          configMapName: 'version-policy',
          key: 'versions.json',
          content: readRepoFile('ops/versions.json'),
        };
        expect(policyMountViolations(deployment(objects, 'gateway'), ofKind(objects, ConfigMap.is), policy)).toEqual(
          [],
        );
      },
    );

    it('point the gateway at the backend Service', () => {
      const objects = rendered(directory);
      const service = ofKind(objects, Service.is).find((candidate) => candidate.metadata?.name === 'backend');
      const port = service?.spec?.ports?.find((candidate) => candidate.name === 'http')?.port;
      expect(envValue(podSpec(deployment(objects, 'gateway')).containers[0]!, 'BACKEND_URL')).toBe(
        `http://backend:${port}`,
      );
    });

    it(
      "admit the gateway's API from the Gateway API proxies' namespace only, the backend's from the gateway only, " +
        "the admin ports from Prometheus's pods only, the migration Job from no one",
      () => {
        const policies = ofKind(rendered(directory), NetworkPolicy.is);
        expect(networkPolicyViolations(deployments(), policies, portAccess)).toEqual([]);
        expect(closedToIngressViolations(ofKind(rendered(directory), Job.is), policies)).toEqual([]);
      },
    );

    it('send to DNS, the gateway to the backend, and (on PostgreSQL) all to the database only', () => {
      const allowances = egressAllowances({ postgres: directory === POSTGRES });
      expect(egressViolations(workloads(), ofKind(rendered(directory), NetworkPolicy.is), allowances)).toEqual([]);
    });
  });

  it('base: the namespace enforces Pod Security "restricted"', () => {
    const namespace = ofKind(rendered(BASE), Namespace.is).find((candidate) => candidate.metadata?.name === NAMESPACE);
    expect(namespace?.metadata?.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
  });

  it('base: the gateway scales on CPU from 2 to 10 replicas, one at a time disrupted; one in-memory backend', () => {
    const objects = rendered(BASE);
    const autoscaler = ofKind(objects, HorizontalPodAutoscaler.is).find(
      (candidate) => candidate.spec?.scaleTargetRef.name === 'gateway',
    );
    expect(autoscaler?.spec).toMatchObject({
      minReplicas: 2,
      maxReplicas: 10,
      metrics: [{ type: 'Resource', resource: { name: 'cpu' } }],
    });
    expect(
      ofKind(objects, PodDisruptionBudget.is).map((budget) => [budget.metadata?.name, budget.spec?.maxUnavailable]),
    ).toEqual([['gateway', 1]]);
    expect(deployment(objects, 'backend').spec?.replicas).toBe(1);
    expect(literalEnv(deployment(objects, 'backend')).DATABASE_URL).toBeUndefined();
    expect(ofKind(objects, Job.is)).toEqual([]);
  });

  it(
    'overlays/postgres: both processes scaled by autoscalers, with DATABASE_URL from the Secret of the role that ' +
      'may not change the schema, the migration Job from the one that may',
    () => {
      const objects = rendered(POSTGRES);
      const backend = deployment(objects, 'backend');
      expect(backend.spec?.replicas).toBeUndefined();
      expect(
        ofKind(objects, HorizontalPodAutoscaler.is)
          .map((autoscaler) => autoscaler.spec?.scaleTargetRef.name)
          .sort(),
      ).toEqual(['backend', 'gateway']);
      expect(secretViolations(backend, [DATABASE_URL])).toEqual([]);
      expect(secretViolations(deployment(objects, 'gateway'), [DATABASE_URL])).toEqual([]);
      expect(
        ofKind(objects, PodDisruptionBudget.is)
          .map((budget) => budget.metadata?.name)
          .sort(),
      ).toEqual(['backend', 'gateway']);
      const [job, ...others] = ofKind(objects, Job.is);
      expect(others).toEqual([]);
      expect(
        migrationJobViolations(job!, ofKind(objects, Deployment.is), {
          commands: Object.fromEntries(
            Object.values(migrationCommands).map(({ process, entry }) => [process, ['node', entry]]),
          ),
          migrationSecret: MIGRATION_DATABASE_URL.secret,
          runtimeSecret: DATABASE_URL.secret,
        }),
      ).toEqual([]);
      expect(secretViolations(job!, [MIGRATION_DATABASE_URL])).toEqual([]);
    },
  );

  it(
    'overlays/postgres: the migration Job and what it needs carry the label it is applied by before the rollout, ' +
      'and nothing else does',
    () => {
      const [key, value] = MIGRATION_SELECTOR;
      const selected = rendered(POSTGRES)
        .filter((object) => labelsOf(object)[key] === value)
        .map((object) => `${object.kind}/${object.metadata.name}`)
        .sort();
      expect(selected).toEqual(['Job/migrations', 'NetworkPolicy/migrations', 'ServiceAccount/migrations']);
    },
  );

  it(
    'overlays/postgres: every replica of both autoscalers at their maximum, a rollout of each and the migration Job ' +
      `hold at most 80 % of max_connections ${DEFAULT_MAX_CONNECTIONS} at once`,
    () => {
      const objects = rendered(POSTGRES);
      const uses = connectionUses(workloadsOf(objects), ofKind(objects, HorizontalPodAutoscaler.is), connectionsOf);
      expect(uses.map(({ workload }) => workload).sort()).toEqual([
        'Deployment/backend',
        'Deployment/gateway',
        'Job/migrations',
      ]);
      expect(connectionBudgetViolations(uses, DEFAULT_MAX_CONNECTIONS)).toEqual([]);
    },
  );

  it("overlays/postgres: the backend's autoscaler follows the gateway's, both sized from one measurement", () => {
    const objects = rendered(POSTGRES);
    const costs = measuredMillicoresPer1000Rps('postgres');
    const autoscalers = ofKind(objects, HorizontalPodAutoscaler.is);
    for (const name of ['gateway', 'backend'] as const) {
      const autoscaler = autoscalers.find((candidate) => candidate.spec?.scaleTargetRef.name === name)!;
      expect(autoscalingViolations(deployment(objects, name), autoscaler, costs[name])).toEqual([]);
    }
    expect(
      backendScaleViolations(
        deployment(objects, 'gateway'),
        deployment(objects, 'backend'),
        ofKind(objects, HorizontalPodAutoscaler.is),
        { gateway: costs.gateway!, backend: costs.backend! },
      ),
    ).toEqual([]);
  });

  it.each(['backend', 'gateway'] as const)(
    "overlays/postgres: the %s's startup probe outlasts its wait for the migration Job (DATABASE_MIGRATION_TIMEOUT_MS), " +
      'within the progress deadline',
    (name) => {
      const found = deployment(rendered(POSTGRES), name);
      const config = processes[name].config({
        ...literalEnv(found),
        DATABASE_URL: 'postgres://database.invalid/users',
      });
      expect(config.database?.migrations).toBe('check');
      const waitMs = config.database?.migrationTimeoutMs ?? Number.NaN;
      expect(waitMs).toBeGreaterThanOrEqual(60_000);
      expect(startupBudgetViolations(found, waitMs + START_MARGIN_MS)).toEqual([]);
      expect(progressDeadlineViolations(found)).toEqual([]);
    },
  );

  it('monitoring: a ServiceMonitor per process scrapes its admin port, as the job the rules select', () => {
    const base = rendered(BASE);
    const monitors = ofKind(rendered(MONITORING), ServiceMonitor.is);
    expect(monitors.map((monitor) => monitor.metadata?.name).sort()).toEqual(['backend', 'gateway']);
    expect(
      serviceMonitorViolations(monitors, ofKind(base, Service.is), ofKind(base, Deployment.is), scrapeJobs),
    ).toEqual([]);
    expect(adminServiceViolations(ofKind(base, Service.is))).toEqual([]);
    // The same job names as the compose stack's Prometheus, which ops/prometheus/rules.yml selects.
    const jobs = (
      parse(readRepoFile('ops/prometheus/prometheus.yml')) as { scrape_configs: { job_name: string }[] }
    ).scrape_configs.map((job) => job.job_name);
    expect(jobs).toEqual([scrapeJobs.gateway, scrapeJobs.backend]);
  });

  it(
    'monitoring: the Grafana dashboard in a ConfigMap for the kube-prometheus-stack sidecar, as ops/grafana has ' +
      'it',
    () => {
      const dashboard = readRepoFile('ops/grafana/dashboards/api-versions.json');
      expect(dashboardViolations(ofKind(rendered(MONITORING), ConfigMap.is), 'api-versions.json', dashboard)).toEqual(
        [],
      );
    },
  );

  it("exposure: the Ingress and the HTTPRoute lead to the gateway's API port only", () => {
    const services = ofKind(rendered(BASE), Service.is);
    expect(
      exposureViolations(ofKind(rendered(INGRESS), Ingress.is), ofKind(rendered(GATEWAY_API), HTTPRoute.is), services),
    ).toEqual([]);
  });

  it("exposure: the HTTPRoute's Gateway is in the namespace the gateway's NetworkPolicy admits its API from", () => {
    const parents = ofKind(rendered(GATEWAY_API), HTTPRoute.is).flatMap((route) => route.spec?.parentRefs ?? []);
    expect(parents.map((parent) => parent.namespace)).toEqual([INGRESS_NAMESPACE]);
    // The policy admits that namespace and no other (portAccess says who may reach the API port).
    expect(portAccess.find((access) => access.portName === 'http' && access.deployment === 'gateway')?.allowed).toEqual(
      { kind: 'namespace', name: INGRESS_NAMESPACE },
    );
  });

  it("monitoring: every alert's runbook_url starts with the page one ConfigMap literal sets, its anchor kept", () => {
    const page = 'https://docs.acme.test/platform/version-router/alerts.md';
    const objects = renderEdited(MONITORING, (kustomization) => {
      const generators = kustomization.configMapGenerator as { name: string; literals?: string[] }[];
      const runbooks = generators.find((generator) => generator.name === 'version-router-runbooks')!;
      expect(runbooks.literals?.filter((literal) => literal.startsWith('page='))).toHaveLength(1);
      runbooks.literals = [`page=${page}`];
    });
    expect(runbookUrls(objects)).toEqual(expectedRunbookUrls(page));
  });

  it("monitoring: the PrometheusRule groups are exactly ops/prometheus/rules.yml's", () => {
    const rules = ofKind(rendered(MONITORING), PrometheusRule.is);
    expect(rules).toHaveLength(1);
    const source = 'ops/prometheus/rules.yml';
    const { groups } = parse(readRepoFile(source)) as { groups: unknown };
    expect(ruleGroupViolations(rules[0]!, groups, source, syncCommand)).toEqual([]);
  });

  describe('overlays/production, the example of an operator overlay', () => {
    type ImageEntry = { name: string; newName?: string; digest?: string };
    const images = (): ImageEntry[] =>
      (parse(readRepoFile(`${PRODUCTION}/kustomization.yaml`)) as { images: ImageEntry[] }).images;

    it("runs every container, the migration Job's too, from its image entry: registry and digest, no tag", () => {
      const containers = workloadsOf(rendered(PRODUCTION)).flatMap(containersOf);
      expect(containers.map((container) => container.name).sort()).toEqual([
        'backend',
        'backend',
        'gateway',
        'gateway',
      ]);
      for (const container of containers) {
        const entry = images().find((candidate) => candidate.name === `version-router-${container.name}`)!;
        expect(entry.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
        expect(container.image).toBe(`${entry.newName}@${entry.digest}`);
      }
    });

    it("changes every container's image with the one entry of that image", () => {
      const digest = `sha256:${'ab'.repeat(32)}`;
      const objects = renderEdited(PRODUCTION, (kustomization) => {
        for (const entry of kustomization.images as ImageEntry[])
          Object.assign(entry, { newName: `registry.acme.test/platform/${entry.name}`, digest });
      });
      const references = workloadsOf(objects)
        .flatMap(containersOf)
        .map((container) => `${container.name} ${container.image}`)
        .sort();
      expect(references).toEqual([
        `backend registry.acme.test/platform/version-router-backend@${digest}`,
        `backend registry.acme.test/platform/version-router-backend@${digest}`,
        `gateway registry.acme.test/platform/version-router-gateway@${digest}`,
        `gateway registry.acme.test/platform/version-router-gateway@${digest}`,
      ]);
    });

    it('changes every runbook_url with the page it sets', () => {
      const page = 'https://gitlab.acme.test/platform/version-router/-/blob/stable/docs/alerts.md';
      expect(runbookUrls(rendered(PRODUCTION))).toEqual(
        expectedRunbookUrls(
          (
            parse(readRepoFile(`${PRODUCTION}/kustomization.yaml`)) as { configMapGenerator: { literals: string[] }[] }
          ).configMapGenerator[0]!.literals[0]!.replace('page=', ''),
        ),
      );
      const objects = renderEdited(PRODUCTION, (kustomization) => {
        const [runbooks] = kustomization.configMapGenerator as { literals: string[] }[];
        runbooks!.literals = [`page=${page}`];
      });
      expect(runbookUrls(objects)).toEqual(expectedRunbookUrls(page));
    });

    it('lets the pods reach the database at the address it sets, and nowhere else on its port', () => {
      const objects = rendered(PRODUCTION);
      const postgres = ofKind(objects, NetworkPolicy.is).find((policy) => policy.metadata?.name === 'postgres');
      expect(postgres?.spec?.egress).toEqual([
        { to: [{ ipBlock: { cidr: '10.0.12.34/32' } }], ports: [{ port: 5432, protocol: 'TCP' }] },
      ]);
      const allowances = egressAllowances({ postgres: true });
      expect(egressViolations(workloadsOf(objects), ofKind(objects, NetworkPolicy.is), allowances)).toEqual([]);
    });
  });
});

/** Every alert's runbook_url in the rendered PrometheusRule, in order. */
function runbookUrls(objects: ManifestObject[]): (string | undefined)[] {
  const [rule] = ofKind(objects, PrometheusRule.is);
  return (rule?.spec.groups ?? [])
    .flatMap((group) => group.rules ?? [])
    .filter((candidate) => candidate.alert !== undefined)
    .map((alert) => alert.annotations?.runbook_url);
}

/** The page, then `#` and the alert's name in lower case, for every alert of ops/prometheus/rules.yml. */
function expectedRunbookUrls(page: string): string[] {
  const { groups } = parse(readRepoFile('ops/prometheus/rules.yml')) as { groups: { rules: { alert?: string }[] }[] };
  const alerts = groups
    .flatMap((group) => group.rules)
    .flatMap((rule) => (rule.alert === undefined ? [] : [rule.alert]));
  expect(alerts.length).toBeGreaterThan(10);
  return alerts.map((alert) => `${page}#${alert.toLowerCase()}`);
}
