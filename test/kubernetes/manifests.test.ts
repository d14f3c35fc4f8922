/**
 * deploy/kubernetes offline: each kustomization rendered as `kubectl apply -k` renders it, every object
 * validated against its schema, and the rules of docs/deployment.md#kubernetes checked on what was rendered
 * (test/kubernetes/rules.test.ts shows each rule failing on a broken object). No cluster runs here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PrometheusRule, ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Service } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { kubernetesCopies, syncCommand } from '../../scripts/kubernetes-copies.mjs';
import { repoRoot } from '../../scripts/paths.mjs';
import { availabilityViolations, copyViolations, namespaceViolations, networkPolicyViolations, ruleGroupViolations, serviceMonitorViolations, type PortAccess } from './fleet-rules.js';
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
import { drainMs, processes, type ProcessFacts } from './processes.js';
import { ofKind, schemaViolations } from './schemas.js';
import { describeWithTool } from '../support/tools.js';

const NAMESPACE = 'version-router';
const MONITORING_NAMESPACE = 'monitoring';
const BASE = 'deploy/kubernetes/base';
const POSTGRES = 'deploy/kubernetes/overlays/postgres';
const MONITORING = 'deploy/kubernetes/monitoring';

const readRepoFile = (path: string): string => readFileSync(join(repoRoot, path), 'utf8');
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
  return Object.fromEntries((container?.env ?? []).filter((variable) => variable.value !== undefined).map((variable) => [variable.name, variable.value]));
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
  describe.each([BASE, POSTGRES, MONITORING])('%s', (directory) => {
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
      expect(deployments().map((found) => found.metadata?.name).sort()).toEqual(['backend', 'gateway']);
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
        expect(container?.ports?.find((port) => port.name === 'http')?.containerPort, found.metadata?.name).toBe(processOf(found).apiPort);
      }
    });

    it('request and limit CPU and memory', () => {
      expect(deployments().flatMap(resourceViolations)).toEqual([]);
    });

    it('leave the load balancer before closing: SHUTDOWN_DELAY_MS 5000 and a grace period above delay + drain', () => {
      expect(deployments().flatMap((found) => shutdownViolations(found, drainMs))).toEqual([]);
      for (const found of deployments()) expect(envValue(podSpec(found).containers[0]!, 'SHUTDOWN_DELAY_MS')).toBe('5000');
    });

    it('mount nothing with subPath', () => {
      expect(deployments().flatMap(subPathViolations)).toEqual([]);
    });

    it(`use pinned images, version-router/<process>:<package.json version>`, () => {
      expect(deployments().flatMap(imageViolations)).toEqual([]);
      const { version } = JSON.parse(readRepoFile('package.json')) as { version: string };
      for (const found of deployments()) expect(podSpec(found).containers[0]?.image).toBe(`version-router/${found.metadata?.name}:${version}`);
    });

    it('keep serving through rollouts and node drains', () => {
      const objects = rendered(directory);
      const autoscalers = ofKind(objects, HorizontalPodAutoscaler.is);
      const budgets = ofKind(objects, PodDisruptionBudget.is);
      expect(deployments().flatMap((found) => availabilityViolations(found, autoscalers, budgets))).toEqual([]);
    });

    it('set only variables their config.ts reads, with values it accepts, and no service links', () => {
      const unread = deployments().flatMap((found) => envViolations(found, processOf(found).namesRead(literalEnv(found))));
      expect(unread).toEqual([]);
    });

    it('give the gateway the policy ConfigMap mounted as a directory, named without a hash, holding ops/versions.json', () => {
      const objects = rendered(directory);
      const policy = { variable: 'API_VERSIONS_FILE', configMapName: 'version-policy', key: 'versions.json', content: readRepoFile('ops/versions.json') };
      expect(policyMountViolations(deployment(objects, 'gateway'), ofKind(objects, ConfigMap.is), policy)).toEqual([]);
    });

    it('point the gateway at the backend Service', () => {
      const objects = rendered(directory);
      const service = ofKind(objects, Service.is).find((candidate) => candidate.metadata?.name === 'backend');
      const port = service?.spec?.ports?.find((candidate) => candidate.name === 'http')?.port;
      expect(envValue(podSpec(deployment(objects, 'gateway')).containers[0]!, 'BACKEND_URL')).toBe(`http://backend:${port}`);
    });

    it(`admit the backend's API from the gateway only, the admin ports from the namespace ${MONITORING_NAMESPACE} only`, () => {
      const objects = rendered(directory);
      const { gateway, backend } = processes;
      const access: PortAccess[] = [
        { deployment: 'gateway', port: gateway.apiPort, portName: 'http', allowed: { kind: 'anyone' } },
        { deployment: 'gateway', port: gateway.admin.port, portName: 'admin', allowed: { kind: 'namespace', name: MONITORING_NAMESPACE } },
        { deployment: 'backend', port: backend.apiPort, portName: 'http', allowed: { kind: 'pods', labels: deployment(objects, 'gateway').spec?.selector.matchLabels ?? {} } },
        { deployment: 'backend', port: backend.admin.port, portName: 'admin', allowed: { kind: 'namespace', name: MONITORING_NAMESPACE } },
      ];
      expect(networkPolicyViolations(deployments(), ofKind(objects, NetworkPolicy.is), access)).toEqual([]);
    });
  });

  it('base: the namespace enforces Pod Security "restricted"', () => {
    const namespace = ofKind(rendered(BASE), Namespace.is).find((candidate) => candidate.metadata?.name === NAMESPACE);
    expect(namespace?.metadata?.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
  });

  it('base: the gateway scales on CPU from 2 to 10 replicas under a PDB of minAvailable 1; one in-memory backend', () => {
    const objects = rendered(BASE);
    const autoscaler = ofKind(objects, HorizontalPodAutoscaler.is).find((candidate) => candidate.spec?.scaleTargetRef.name === 'gateway');
    expect(autoscaler?.spec).toMatchObject({ minReplicas: 2, maxReplicas: 10, metrics: [{ type: 'Resource', resource: { name: 'cpu' } }] });
    expect(ofKind(objects, PodDisruptionBudget.is).map((budget) => [budget.metadata?.name, budget.spec?.minAvailable])).toEqual([['gateway', 1]]);
    expect(deployment(objects, 'backend').spec?.replicas).toBe(1);
    expect(literalEnv(deployment(objects, 'backend')).DATABASE_URL).toBeUndefined();
  });

  it('overlays/postgres: 3 backend replicas with DATABASE_URL from the operator\'s Secret, under a PDB', () => {
    const objects = rendered(POSTGRES);
    const backend = deployment(objects, 'backend');
    expect(backend.spec?.replicas).toBe(3);
    const databaseUrl = podSpec(backend).containers[0]?.env?.find((variable) => variable.name === 'DATABASE_URL');
    expect(databaseUrl?.valueFrom?.secretKeyRef).toEqual({ name: 'version-router-database', key: 'url' });
    expect(ofKind(objects, PodDisruptionBudget.is).map((budget) => budget.metadata?.name).sort()).toEqual(['backend', 'gateway']);
  });

  it('monitoring: a ServiceMonitor per process scrapes its admin port, as the job the rules select', () => {
    const base = rendered(BASE);
    const monitors = ofKind(rendered(MONITORING), ServiceMonitor.is);
    expect(monitors.map((monitor) => monitor.metadata?.name).sort()).toEqual(['backend', 'gateway']);
    expect(serviceMonitorViolations(monitors, ofKind(base, Service.is), ofKind(base, Deployment.is))).toEqual([]);
    // The job label is the scraped Service's name; ops/prometheus/rules.yml selects jobs by those names.
    const jobs = (parse(readRepoFile('ops/prometheus/prometheus.yml')) as { scrape_configs: { job_name: string }[] }).scrape_configs.map((job) => job.job_name);
    expect(jobs).toEqual(expect.arrayContaining(monitors.map((monitor) => monitor.metadata?.name)));
  });

  it('monitoring: the PrometheusRule groups are exactly ops/prometheus/rules.yml\'s', () => {
    const rules = ofKind(rendered(MONITORING), PrometheusRule.is);
    expect(rules).toHaveLength(1);
    const source = 'ops/prometheus/rules.yml';
    const { groups } = parse(readRepoFile(source)) as { groups: unknown };
    expect(ruleGroupViolations(rules[0]!, groups, source, syncCommand)).toEqual([]);
  });
});
