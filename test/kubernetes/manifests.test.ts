/**
 * deploy/kubernetes offline: each kustomization rendered as `kubectl apply -k` renders it, every object
 * validated against its schema, and the rules of docs/deployment.md#kubernetes checked on what was
 * rendered (test/kubernetes/rules.test.ts, network-rules.test.ts and operator-rules.test.ts show each rule
 * failing on a broken object). No cluster runs here.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { PrometheusRule, ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1';
import { HTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Service } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { kubernetesCopies, syncCommand } from '../../scripts/kubernetes-copies.mjs';
import { repoRoot } from '../../scripts/paths.mjs';
import {
  adminServiceViolations,
  availabilityViolations,
  copyViolations,
  egressViolations,
  namespaceViolations,
  networkPolicyViolations,
  ruleGroupViolations,
  serviceMonitorViolations,
} from './fleet-rules.js';
import { render, type ManifestObject } from './kubectl.js';
import {
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
} from './pod-rules.js';
import { measuredMemory, packageVersion } from './measured.js';
import { egressAllowances, portAccess } from './network-access.js';
import {
  dashboardViolations,
  exposureViolations,
  memoryViolations,
  secretViolations,
  startupBudgetViolations,
} from './operator-rules.js';
import { drainMs, processes, type ProcessFacts } from './processes.js';
import { ofKind, schemaViolations } from './schemas.js';
import { describeWithTool } from '../support/tools.js';
import { readRepoFile } from '../support/repo-file.js';

const NAMESPACE = 'version-router';
const BASE = 'deploy/kubernetes/base';
const POSTGRES = 'deploy/kubernetes/overlays/postgres';
const MONITORING = 'deploy/kubernetes/monitoring';
const INGRESS = 'deploy/kubernetes/exposure/ingress';
const GATEWAY_API = 'deploy/kubernetes/exposure/gateway-api';
/** The secrets the pods read, each from the Secret the operator creates. */
const ADMIN_TOKEN = { variable: 'ADMIN_TOKEN', secret: 'version-router-admin', key: 'token', optional: false };
const DATABASE_URL = { variable: 'DATABASE_URL', secret: 'version-router-database', key: 'url', optional: false };
/**
 * Besides DATABASE_MIGRATION_TIMEOUT_MS, a backend's start takes its connection (at most 5 s) and the process's own
 * start.
 */
const START_MARGIN_MS = 15_000;

const renders = new Map<string, ManifestObject[]>();
function rendered(directory: string): ManifestObject[] {
  const cached = renders.get(directory) ?? render(directory);
  renders.set(directory, cached);
  return cached;
}

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

/** The literal environment of the process's container. */
function literalEnv(found: IDeployment): NodeJS.ProcessEnv {
  const container = podSpec(found).containers[0];
  return Object.fromEntries(
    (container?.env ?? [])
      .filter((variable) => variable.value !== undefined)
      .map((variable) => [variable.name, variable.value]),
  );
}

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
  describe.each([BASE, POSTGRES, MONITORING, INGRESS, GATEWAY_API])('%s', (directory) => {
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

    it('renders the gateway and the backend Deployments', () => {
      expect(
        deployments()
          .map((found) => found.metadata?.name)
          .sort(),
      ).toEqual(['backend', 'gateway']);
    });

    it('run under Pod Security "restricted" with a read-only root filesystem', () => {
      expect(deployments().flatMap(podSecurityViolations)).toEqual([]);
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
      expect(deployments().flatMap(resourceViolations)).toEqual([]);
    });

    it('leave the load balancer before closing: SHUTDOWN_DELAY_MS 5000 and a grace period above delay + drain', () => {
      expect(deployments().flatMap((found) => shutdownViolations(found, drainMs))).toEqual([]);
      for (const found of deployments())
        expect(envValue(podSpec(found).containers[0]!, 'SHUTDOWN_DELAY_MS')).toBe('5000');
    });

    it('mount nothing with subPath', () => {
      expect(deployments().flatMap(subPathViolations)).toEqual([]);
    });

    it(
      `use pinned images, version-router-<process>:<package.json version> as the documented docker build names them` +
        ``,
      () => {
        expect(deployments().flatMap(imageViolations)).toEqual([]);
        for (const found of deployments())
          expect(podSpec(found).containers[0]?.image).toBe(
            `version-router-${found.metadata?.name}:${packageVersion()}`,
          );
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

    it('keep serving through rollouts and node drains', () => {
      const objects = rendered(directory);
      const autoscalers = ofKind(objects, HorizontalPodAutoscaler.is);
      const budgets = ofKind(objects, PodDisruptionBudget.is);
      expect(deployments().flatMap((found) => availabilityViolations(found, autoscalers, budgets))).toEqual([]);
    });

    it('set only variables their config.ts reads, with values it accepts, and no service links', () => {
      const unread = deployments().flatMap((found) =>
        envViolations(found, processOf(found).namesRead(literalEnv(found))),
      );
      expect(unread).toEqual([]);
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

    it("admit the backend's API from the gateway only, the admin ports from Prometheus's pods only", () => {
      expect(networkPolicyViolations(deployments(), ofKind(rendered(directory), NetworkPolicy.is), portAccess)).toEqual(
        [],
      );
    });

    it('send to DNS, the gateway to the backend, and (on PostgreSQL) the backend to the database only', () => {
      const allowances = egressAllowances({ postgres: directory === POSTGRES });
      expect(egressViolations(deployments(), ofKind(rendered(directory), NetworkPolicy.is), allowances)).toEqual([]);
    });
  });

  it('base: the namespace enforces Pod Security "restricted"', () => {
    const namespace = ofKind(rendered(BASE), Namespace.is).find((candidate) => candidate.metadata?.name === NAMESPACE);
    expect(namespace?.metadata?.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
  });

  it(
    'base: the gateway scales on CPU from 2 to 10 replicas under a PDB of minAvailable 1; one in-memory ' + 'backend',
    () => {
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
        ofKind(objects, PodDisruptionBudget.is).map((budget) => [budget.metadata?.name, budget.spec?.minAvailable]),
      ).toEqual([['gateway', 1]]);
      expect(deployment(objects, 'backend').spec?.replicas).toBe(1);
      expect(literalEnv(deployment(objects, 'backend')).DATABASE_URL).toBeUndefined();
    },
  );

  it(
    "overlays/postgres: 3 backend replicas, and the gateways, with DATABASE_URL from the operator's Secret, under " +
      'a PDB',
    () => {
      const objects = rendered(POSTGRES);
      const backend = deployment(objects, 'backend');
      expect(backend.spec?.replicas).toBe(3);
      expect(secretViolations(backend, [DATABASE_URL])).toEqual([]);
      expect(secretViolations(deployment(objects, 'gateway'), [DATABASE_URL])).toEqual([]);
      expect(
        ofKind(objects, PodDisruptionBudget.is)
          .map((budget) => budget.metadata?.name)
          .sort(),
      ).toEqual(['backend', 'gateway']);
    },
  );

  it('monitoring: a ServiceMonitor per process scrapes its admin port, as the job the rules select', () => {
    const base = rendered(BASE);
    const monitors = ofKind(rendered(MONITORING), ServiceMonitor.is);
    expect(monitors.map((monitor) => monitor.metadata?.name).sort()).toEqual(['backend', 'gateway']);
    expect(serviceMonitorViolations(monitors, ofKind(base, Service.is), ofKind(base, Deployment.is))).toEqual([]);
    expect(adminServiceViolations(ofKind(base, Service.is))).toEqual([]);
    // The job label is the process's name (the admin Service's app.kubernetes.io/name, by the monitors'
    // jobLabel), as the compose stack's Prometheus names its jobs; ops/prometheus/rules.yml selects jobs by it.
    const jobs = (
      parse(readRepoFile('ops/prometheus/prometheus.yml')) as { scrape_configs: { job_name: string }[] }
    ).scrape_configs.map((job) => job.job_name);
    expect(jobs).toEqual(expect.arrayContaining(monitors.map((monitor) => monitor.metadata?.name)));
  });

  it.each(['backend', 'gateway'] as const)(
    "overlays/postgres: the %s's startup probe outlasts a migration of DATABASE_MIGRATION_TIMEOUT_MS, so no pod " +
      'restarts in the middle of one',
    (name) => {
      const found = deployment(rendered(POSTGRES), name);
      const config = processes[name].config({
        ...literalEnv(found),
        DATABASE_URL: 'postgres://database.invalid/users',
      });
      const migrationMs = config.database?.migrationTimeoutMs ?? Number.NaN;
      expect(migrationMs).toBeGreaterThanOrEqual(60_000);
      expect(startupBudgetViolations(found, migrationMs + START_MARGIN_MS)).toEqual([]);
    },
  );

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

  it("monitoring: every alert's runbook_url starts with the page one ConfigMap literal sets, its anchor kept", () => {
    const copy = mkdtempSync(join(tmpdir(), 'runbooks-'));
    try {
      // A copy of the monitoring kustomization with the page set in its one place.
      const page = 'https://docs.acme.test/platform/version-router/alerts.md';
      cpSync(join(repoRoot, MONITORING), copy, { recursive: true });
      const kustomization = join(copy, 'kustomization.yaml');
      const text = readFileSync(kustomization, 'utf8');
      expect(text.match(/- page=/g)).toHaveLength(1);
      writeFileSync(kustomization, text.replace(/- page=\S+/, `- page=${page}`));
      const [rule] = ofKind(render(relative(repoRoot, copy)), PrometheusRule.is);
      const alerts = (rule?.spec.groups ?? [])
        .flatMap((group) => group.rules ?? [])
        .filter((candidate) => candidate.alert !== undefined);
      const { groups } = parse(readRepoFile('ops/prometheus/rules.yml')) as {
        groups: { rules: { alert?: string }[] }[];
      };
      expect(alerts).toHaveLength(
        groups.flatMap((group) => group.rules).filter((candidate) => candidate.alert !== undefined).length,
      );
      expect(alerts.map((alert) => alert.annotations?.runbook_url)).toEqual(
        alerts.map((alert) => `${page}#${String(alert.alert).toLowerCase()}`),
      );
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it("monitoring: the PrometheusRule groups are exactly ops/prometheus/rules.yml's", () => {
    const rules = ofKind(rendered(MONITORING), PrometheusRule.is);
    expect(rules).toHaveLength(1);
    const source = 'ops/prometheus/rules.yml';
    const { groups } = parse(readRepoFile(source)) as { groups: unknown };
    expect(ruleGroupViolations(rules[0]!, groups, source, syncCommand)).toEqual([]);
  });
});
