/**
 * Each rule that test/kubernetes/manifests.test.ts checks on the rendered manifests, seen failing: the
 * manifests' own objects (test/kubernetes/fixtures.ts: read without kustomize, so this runs without
 * kubectl) pass the rule, and the same objects broken one way each make it report that breakage.
 */
import type { IPrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import type { IDeployment } from 'kubernetes-models/apps/v1';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { describe, expect, it } from 'vitest';
import { syncCommand } from '../../scripts/kubernetes-copies.mjs';
import { scrapeJobs } from '../ops/scrape-jobs.js';
import {
  adminServiceViolations,
  autoscalerBehaviorViolations,
  availabilityViolations,
  copyViolations,
  namespaceViolations,
  ruleGroupViolations,
  serviceAccountViolations,
  serviceMonitorViolations,
} from './fleet-rules.js';
import { container, manifests, setEnv } from './fixtures.js';
import type { ManifestObject } from './kubectl.js';
import {
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
import { drainMs, processes } from './processes.js';
import { schemaViolations } from './schemas.js';

describe('schemas', () => {
  it('accept the manifests', () => {
    expect(manifests().base.flatMap(schemaViolations)).toEqual([]);
  });

  it('report a field of the wrong type', () => {
    const { gateway } = manifests();
    container(gateway).ports![0]!.containerPort = 'eighty' as never;
    expect(schemaViolations(gateway as ManifestObject)).toEqual([
      expect.stringMatching(/^Deployment\/gateway: .*containerPort must be integer/),
    ]);
  });

  it('report a kind without a schema', () => {
    expect(schemaViolations({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } })).toEqual([
      'Widget/w: no schema for example.com/v1 Widget',
    ]);
  });
});

describe('Pod Security "restricted" plus a read-only root', () => {
  it('accepts the manifests', () => {
    expect(manifests().deployments.flatMap(podSecurityViolations)).toEqual([]);
  });

  it.each<[string, (deployment: IDeployment) => void, string]>([
    ['runAsNonRoot false', (d) => (podSpec(d).securityContext!.runAsNonRoot = false), 'runAsNonRoot is not true'],
    ['no numeric user', (d) => delete podSpec(d).securityContext!.runAsUser, 'runAsUser must be a non-zero number'],
    ['root', (d) => (podSpec(d).securityContext!.runAsUser = 0), 'runAsUser must be a non-zero number'],
    [
      'no seccomp profile',
      (d) => delete podSpec(d).securityContext!.seccompProfile,
      'seccompProfile is not RuntimeDefault',
    ],
    [
      'privilege escalation',
      (d) => (container(d).securityContext!.allowPrivilegeEscalation = true),
      'allowPrivilegeEscalation is not false',
    ],
    ['privileged', (d) => (container(d).securityContext!.privileged = true), 'privileged'],
    [
      'capabilities kept',
      (d) => (container(d).securityContext!.capabilities = { drop: ['NET_RAW'] }),
      'capabilities do not drop ALL',
    ],
    [
      'a capability added',
      (d) => (container(d).securityContext!.capabilities!.add = ['NET_ADMIN']),
      'adds capabilities NET_ADMIN',
    ],
    [
      'a writable root',
      (d) => (container(d).securityContext!.readOnlyRootFilesystem = false),
      'readOnlyRootFilesystem is not true',
    ],
    ['the host network', (d) => (podSpec(d).hostNetwork = true), 'shares a host namespace'],
    [
      'a hostPath volume',
      (d) => podSpec(d).volumes!.push({ name: 'host', hostPath: { path: '/' } }),
      'volume host is a hostPath',
    ],
    ['a hostPort', (d) => (container(d).ports![0]!.hostPort = 80), 'has a hostPort'],
  ])('reports %s', (_, breakIt, expected) => {
    const { gateway } = manifests();
    breakIt(gateway);
    expect(podSecurityViolations(gateway)).toEqual([expect.stringContaining(expected)]);
  });
});

describe('probes on the admin listener', () => {
  const admin = processes.gateway.admin;

  it('accept the manifests', () => {
    const { gateway, backend } = manifests();
    expect([...probeViolations(gateway, admin), ...probeViolations(backend, processes.backend.admin)]).toEqual([]);
  });

  it.each<[string, (deployment: IDeployment) => void, string]>([
    [
      'liveness on another path',
      (d) => (container(d).livenessProbe!.httpGet!.path = '/readyz'),
      'livenessProbe path is /readyz, not /healthz',
    ],
    [
      'readiness on another path',
      (d) => (container(d).readinessProbe!.httpGet!.path = '/healthz'),
      'readinessProbe path is /healthz, not /readyz',
    ],
    [
      'readiness on the API port',
      (d) => (container(d).readinessProbe!.httpGet!.port = 'http'),
      'readinessProbe is on port http, not the admin port 9464',
    ],
    ['no startup probe', (d) => delete container(d).startupProbe, 'no startupProbe'],
    [
      'a TCP liveness probe',
      (d) => (container(d).livenessProbe = { tcpSocket: { port: 'admin' } }),
      'no livenessProbe (HTTP GET)',
    ],
    [
      'the admin listener on loopback',
      (d) => setEnv(d, 'GATEWAY_ADMIN_HOST', '127.0.0.1'),
      'GATEWAY_ADMIN_HOST is not 0.0.0.0',
    ],
    [
      'the admin port variable unset',
      (d) => setEnv(d, 'GATEWAY_ADMIN_PORT', undefined),
      'GATEWAY_ADMIN_PORT is not "9464"',
    ],
  ])('reports %s', (_, breakIt, expected) => {
    const { gateway } = manifests();
    breakIt(gateway);
    expect(probeViolations(gateway, admin)).toEqual([expect.stringContaining(expected)]);
  });

  it('reports an admin port other than config.ts default', () => {
    const { gateway } = manifests();
    expect(probeViolations(gateway, { ...admin, port: 9999 })).toEqual([
      expect.stringContaining('no container port named admin = 9999'),
      expect.stringContaining('GATEWAY_ADMIN_PORT is not "9999"'),
      expect.stringContaining('livenessProbe is on port admin, not the admin port 9999'),
      expect.stringContaining('readinessProbe is on port admin, not the admin port 9999'),
      expect.stringContaining('startupProbe is on port admin, not the admin port 9999'),
    ]);
  });
});

describe('resources', () => {
  it('accept the manifests', () => {
    expect(manifests().deployments.flatMap(resourceViolations)).toEqual([]);
  });

  it('report a missing limit or request', () => {
    const { backend } = manifests();
    delete container(backend).resources!.limits!.memory;
    delete container(backend).resources!.requests!.cpu;
    expect(resourceViolations(backend)).toEqual([
      'Deployment/backend container backend: no cpu requests',
      'Deployment/backend container backend: no memory limits',
    ]);
  });
});

describe('shutdown delay and grace period', () => {
  it('accept the manifests', () => {
    expect(manifests().deployments.flatMap((deployment) => shutdownViolations(deployment, drainMs))).toEqual([]);
  });

  it('reports a grace period not above delay + drain', () => {
    const { gateway } = manifests();
    podSpec(gateway).terminationGracePeriodSeconds = 15;
    expect(shutdownViolations(gateway, drainMs)).toEqual([
      'Deployment/gateway container gateway: terminationGracePeriodSeconds 15 is not above SHUTDOWN_DELAY_MS 5000 ' +
        'ms + 10000 ms of drain',
    ]);
  });

  it('reports the default grace period (30 s) against a longer delay', () => {
    const { gateway } = manifests();
    delete podSpec(gateway).terminationGracePeriodSeconds;
    setEnv(gateway, 'SHUTDOWN_DELAY_MS', '25000');
    expect(shutdownViolations(gateway, drainMs)).toEqual([
      expect.stringContaining('terminationGracePeriodSeconds 30 is not above SHUTDOWN_DELAY_MS 25000 ms'),
    ]);
  });

  it.each([undefined, '0', '5s'])('reports SHUTDOWN_DELAY_MS %j', (value) => {
    const { backend } = manifests();
    setEnv(backend, 'SHUTDOWN_DELAY_MS', value);
    expect(shutdownViolations(backend, drainMs)).toEqual([
      expect.stringContaining('SHUTDOWN_DELAY_MS is not a positive number of milliseconds'),
    ]);
  });
});

describe('subPath', () => {
  it('is absent from the manifests', () => {
    expect(manifests().deployments.flatMap(subPathViolations)).toEqual([]);
  });

  it('is reported', () => {
    const { gateway } = manifests();
    container(gateway).volumeMounts![0]!.subPath = 'versions.json';
    expect(subPathViolations(gateway)).toEqual([
      'Deployment/gateway container gateway: /etc/version-router/policy is a subPath mount',
    ]);
  });
});

describe('image tags', () => {
  it('are pinned in the manifests', () => {
    expect(manifests().deployments.flatMap(imageViolations)).toEqual([]);
  });

  it.each(['version-router/gateway:latest', 'version-router/gateway', 'registry.example:5000/gateway'])(
    'report %s',
    (image) => {
      const { gateway } = manifests();
      container(gateway).image = image;
      expect(imageViolations(gateway)).toEqual([expect.stringContaining('is not pinned')]);
    },
  );

  it('accept a digest', () => {
    const { gateway } = manifests();
    container(gateway).image = `version-router/gateway@sha256:${'a'.repeat(64)}`;
    expect(imageViolations(gateway)).toEqual([]);
  });
});

describe('the policy ConfigMap', () => {
  it('is mounted as a directory in the manifests, under its own name, with the policy', () => {
    const { gateway, configMaps, policyMount } = manifests();
    expect(policyMountViolations(gateway, configMaps, policyMount)).toEqual([]);
  });

  it('reports a name hash suffix', () => {
    const { gateway, configMaps, policyMount } = manifests();
    configMaps[0]!.metadata!.name = 'version-policy-5g2h7k9c4t';
    podSpec(gateway).volumes![0]!.configMap!.name = 'version-policy-5g2h7k9c4t';
    expect(policyMountViolations(gateway, configMaps, policyMount)).toEqual([
      'no ConfigMap named version-policy (rendered: version-policy-5g2h7k9c4t; a name hash suffix breaks the live ' +
        'update)',
      'Deployment/gateway: no volume of ConfigMap version-policy',
    ]);
  });

  it('reports content other than the policy file', () => {
    const { gateway, configMaps, policyMount } = manifests();
    configMaps[0]!.data!['versions.json'] = '{}';
    expect(policyMountViolations(gateway, configMaps, policyMount)).toEqual([
      'ConfigMap/version-policy versions.json differs from the policy file',
    ]);
  });

  it('reports a subPath mount of it', () => {
    const { gateway, configMaps, policyMount } = manifests();
    const mount = container(gateway).volumeMounts![0]!;
    mount.mountPath = '/etc/version-router/policy/versions.json';
    mount.subPath = 'versions.json';
    expect(policyMountViolations(gateway, configMaps, policyMount)).toEqual([
      'Deployment/gateway container gateway: mounts version-policy with subPath, which never updates',
    ]);
  });

  it('reports a volume listing items', () => {
    const { gateway, configMaps, policyMount } = manifests();
    podSpec(gateway).volumes![0]!.configMap!.items = [{ key: 'versions.json', path: 'policy.json' }];
    expect(policyMountViolations(gateway, configMaps, policyMount)).toEqual([
      'Deployment/gateway: volume version-policy lists items; mount the whole ConfigMap',
    ]);
  });

  it('reports API_VERSIONS_FILE outside the mounted directory', () => {
    const { gateway, configMaps, policyMount } = manifests();
    setEnv(gateway, 'API_VERSIONS_FILE', '/app/ops/versions.json');
    expect(policyMountViolations(gateway, configMaps, policyMount)).toEqual([
      'Deployment/gateway container gateway: API_VERSIONS_FILE is "/app/ops/versions.json", not ' +
        '/etc/version-router/policy/versions.json in the mounted directory',
    ]);
  });
});

describe('environment variables', () => {
  it('of the manifests are read by config.ts', () => {
    for (const facts of Object.values(processes)) {
      const { gateway, backend } = manifests();
      const deployment = facts.name === 'gateway' ? gateway : backend;
      expect(envViolations(deployment, facts.namesRead({}))).toEqual([]);
    }
  });

  it("report NODE_OPTIONS only where it is not Node's", () => {
    const { gateway } = manifests();
    setEnv(gateway, 'NODE_OPTION', '--max-old-space-size=64');
    expect(envViolations(gateway, processes.gateway.namesRead({}))).toEqual([
      "Deployment/gateway container gateway: NODE_OPTION is not read by the process's config.ts",
    ]);
  });

  it('report service links left on', () => {
    const { gateway } = manifests();
    delete podSpec(gateway).enableServiceLinks;
    const read = processes.gateway.namesRead({});
    expect(envViolations(gateway, read)).toEqual([
      'Deployment/gateway: enableServiceLinks is not false (it injects <SERVICE>_PORT=tcp://… variables)',
    ]);
  });

  it('report one that config.ts does not read', () => {
    const { backend } = manifests();
    setEnv(backend, 'BACKEND_LISTEN_PORT', '8081');
    const read = processes.backend.namesRead({});
    expect(read.has('BACKEND_PORT')).toBe(true);
    expect(envViolations(backend, read)).toEqual([
      "Deployment/backend container backend: BACKEND_LISTEN_PORT is not read by the process's config.ts",
    ]);
  });
});

describe('availability', () => {
  const check = (
    deployment: IDeployment,
    autoscalers: IHorizontalPodAutoscaler[],
    budgets: IPodDisruptionBudget[],
  ): string[] => availabilityViolations(deployment, autoscalers, budgets);

  it('of the manifests holds', () => {
    const { deployments, autoscalers, budgets } = manifests();
    expect(deployments.flatMap((deployment) => check(deployment, autoscalers, budgets))).toEqual([]);
  });

  it('reports a rollout that removes a pod first', () => {
    const { gateway, autoscalers, budgets } = manifests();
    gateway.spec!.strategy!.rollingUpdate!.maxUnavailable = 1;
    expect(check(gateway, autoscalers, budgets)).toEqual([
      'Deployment/gateway: not a RollingUpdate with maxUnavailable 0',
    ]);
  });

  it('reports replicas not spread across nodes', () => {
    const { gateway, autoscalers, budgets } = manifests();
    podSpec(gateway).topologySpreadConstraints![0]!.topologyKey = 'topology.kubernetes.io/zone';
    expect(check(gateway, autoscalers, budgets)).toEqual([
      'Deployment/gateway: no topologySpreadConstraint across nodes (kubernetes.io/hostname) selecting its pods',
    ]);
  });

  it('reports replicas not spread across zones', () => {
    const { backend, autoscalers, budgets } = manifests();
    podSpec(backend).topologySpreadConstraints = podSpec(backend).topologySpreadConstraints!.filter(
      (constraint) => constraint.topologyKey !== 'topology.kubernetes.io/zone',
    );
    expect(check(backend, autoscalers, budgets)).toEqual([
      'Deployment/backend: no topologySpreadConstraint across zones (topology.kubernetes.io/zone) selecting its pods',
    ]);
  });

  it('reports replicas set beside an HPA', () => {
    const { gateway, autoscalers, budgets } = manifests();
    gateway.spec!.replicas = 2;
    expect(check(gateway, autoscalers, budgets)).toEqual([
      'Deployment/gateway: sets replicas although HorizontalPodAutoscaler/gateway owns the count',
    ]);
  });

  it('reports several replicas without a PDB', () => {
    const { gateway, autoscalers } = manifests();
    expect(check(gateway, autoscalers, [])).toEqual([
      'Deployment/gateway: runs up to 10 replicas without a PodDisruptionBudget',
    ]);
  });

  it('reports a PDB that no single replica can satisfy', () => {
    const { backend, budgets } = manifests();
    const budget = structuredClone(budgets[0]!);
    budget.metadata!.name = 'backend';
    budget.spec!.selector = { matchLabels: { 'app.kubernetes.io/name': 'backend' } };
    budget.spec!.maxUnavailable = 0;
    expect(check(backend, [], [budget])).toEqual([
      'Deployment/backend: one replica under PodDisruptionBudget/backend can never be evicted (node drains hang)',
    ]);
  });

  it('reports a PDB that keeps a fixed number of replicas rather than letting a fixed number go', () => {
    const { gateway, autoscalers, budgets } = manifests();
    delete budgets[0]!.spec!.maxUnavailable;
    budgets[0]!.spec!.minAvailable = 1;
    expect(check(gateway, autoscalers, budgets)).toEqual([
      'Deployment/gateway: PodDisruptionBudget/gateway sets minAvailable 1, which lets a drain take all but that ' +
        'many of 10 replicas (set maxUnavailable)',
    ]);
    delete budgets[0]!.spec!.minAvailable;
    expect(check(gateway, autoscalers, budgets)).toEqual([
      'Deployment/gateway: PodDisruptionBudget/gateway sets no maxUnavailable',
    ]);
  });
});

describe('autoscaler behavior', () => {
  it('of the manifests scales down on purpose', () => {
    const { autoscalers } = manifests();
    expect(autoscalers.flatMap(autoscalerBehaviorViolations)).toEqual([]);
  });

  it('reports no scale-down behavior, a short window, and a policy of every few seconds', () => {
    const { autoscalers } = manifests();
    const [autoscaler] = autoscalers;
    const scaleDown = autoscaler!.spec.behavior!.scaleDown!;
    scaleDown.stabilizationWindowSeconds = 60;
    scaleDown.policies = [{ type: 'Percent', value: 100, periodSeconds: 15 }];
    expect(autoscalerBehaviorViolations(autoscaler!)).toEqual([
      'HorizontalPodAutoscaler/gateway: scales down after a stabilization window of 60 s, less than 300',
      'HorizontalPodAutoscaler/gateway: a scale-down policy of 100 Percent every 15 s',
    ]);
    scaleDown.policies = [];
    scaleDown.stabilizationWindowSeconds = 300;
    expect(autoscalerBehaviorViolations(autoscaler!)).toEqual([
      'HorizontalPodAutoscaler/gateway: no policy bounds how many replicas a scale-down removes at once',
    ]);
    delete autoscaler!.spec.behavior;
    expect(autoscalerBehaviorViolations(autoscaler!)).toEqual([
      'HorizontalPodAutoscaler/gateway: no behavior.scaleDown',
    ]);
  });
});

describe('ServiceAccounts', () => {
  it('of the manifests are one per workload, without a token', () => {
    const { deployments, accounts } = manifests();
    expect(serviceAccountViolations(deployments, accounts)).toEqual([]);
  });

  it('report the default account, a shared one, a missing one and a token mounted', () => {
    const { gateway, backend, accounts } = manifests();
    delete podSpec(gateway).serviceAccountName;
    expect(serviceAccountViolations([gateway], accounts)).toEqual([
      "Deployment/gateway: runs as the namespace's default ServiceAccount",
    ]);
    podSpec(gateway).serviceAccountName = 'backend';
    expect(serviceAccountViolations([gateway, backend], accounts)).toEqual([
      'ServiceAccount/backend is shared by Deployment/gateway, Deployment/backend',
    ]);
    podSpec(gateway).serviceAccountName = 'router';
    podSpec(backend).automountServiceAccountToken = true;
    accounts.find((account) => account.metadata?.name === 'backend')!.automountServiceAccountToken = true;
    expect(serviceAccountViolations([gateway, backend], accounts)).toEqual([
      'Deployment/gateway: ServiceAccount/router is not among the manifests',
      'ServiceAccount/backend: automountServiceAccountToken is not false',
      "Deployment/backend: its pods' automountServiceAccountToken is not false",
    ]);
  });
});

describe('namespace', () => {
  it('reports an object outside it', () => {
    const objects: ManifestObject[] = [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'version-router' } },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'gateway', namespace: 'version-router' } },
      { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'backend' } },
    ];
    expect(namespaceViolations(objects, 'version-router')).toEqual([
      'PodDisruptionBudget/backend: namespace (none), not version-router',
    ]);
  });
});

describe('ServiceMonitors', () => {
  it('of the manifests scrape the admin ports', () => {
    const { monitors, services, deployments } = manifests();
    expect(serviceMonitorViolations(monitors, services, deployments, scrapeJobs)).toEqual([]);
  });

  it('report a missing release label', () => {
    const { monitors, services, deployments } = manifests();
    delete monitors[0]!.metadata!.labels;
    expect(serviceMonitorViolations(monitors, services, deployments, scrapeJobs)).toEqual([
      'ServiceMonitor/gateway: no release label (kube-prometheus-stack ignores it)',
    ]);
  });

  it('report a port the Service does not name', () => {
    const { monitors, services, deployments } = manifests();
    monitors[1]!.spec.endpoints[0]!.port = 'metrics';
    expect(serviceMonitorViolations(monitors, services, deployments, scrapeJobs)).toEqual([
      'ServiceMonitor/backend: Service/backend-admin has no port named "metrics"',
    ]);
  });

  it('report a Service port that leads to the API, not the admin port', () => {
    const { monitors, services, deployments } = manifests();
    services.find((service) => service.metadata?.name === 'gateway-admin')!.spec!.ports![0]!.targetPort = 'http';
    expect(serviceMonitorViolations(monitors, services, deployments, scrapeJobs)).toEqual([
      'ServiceMonitor/gateway: Service/gateway-admin port admin leads to 8080, not the admin port of ' +
        'Deployment/gateway',
    ]);
  });

  it("report a job left as the Service's name, or named as any application's gateway may be", () => {
    const { monitors, services, deployments } = manifests();
    delete monitors[0]!.spec.endpoints[0]!.relabelings;
    monitors[1]!.spec.endpoints[0]!.relabelings![0]!.replacement = 'backend';
    expect(serviceMonitorViolations(monitors, services, deployments, scrapeJobs)).toEqual([
      'ServiceMonitor/gateway endpoint admin: no relabeling sets job to version-router-gateway (the job the rules ' +
        'select)',
      'ServiceMonitor/backend endpoint admin: no relabeling sets job to version-router-backend (the job the rules ' +
        'select)',
    ]);
  });
});

describe('the admin ports', () => {
  it('are each on a Service of their own', () => {
    const { services } = manifests();
    expect(services.map((service) => service.metadata?.name)).toEqual([
      'gateway',
      'gateway-admin',
      'backend',
      'backend-admin',
    ]);
    expect(adminServiceViolations(services)).toEqual([]);
  });

  it('report an admin port beside the API port', () => {
    const { services } = manifests();
    const gateway = services.find((service) => service.metadata?.name === 'gateway')!;
    gateway.spec!.ports!.push({ name: 'admin', port: 9464, targetPort: 'admin' });
    expect(adminServiceViolations(services)).toEqual(['Service/gateway: the admin port shares the Service with http']);
  });

  it('report a selector that matches no Service', () => {
    const { monitors, services, deployments } = manifests();
    monitors[0]!.spec.selector = { matchLabels: { 'app.kubernetes.io/name': 'gatewy' } };
    expect(serviceMonitorViolations(monitors, services, deployments, scrapeJobs)).toEqual([
      'ServiceMonitor/gateway: selects no Service',
    ]);
  });
});

describe('copies of files outside the kustomization', () => {
  it('report a differing or missing copy with the command that refreshes it', () => {
    const copies = [
      {
        target: 'deploy/kubernetes/base/policy/versions.json',
        source: 'ops/versions.json',
        expected: '{"a":1}\n',
        actual: '{"a":2}\n',
      },
      {
        target: 'deploy/kubernetes/monitoring/prometheus-rule.yaml',
        source: 'ops/prometheus/rules.yml',
        expected: 'x',
        actual: undefined,
      },
      { target: 'same.json', source: 'same-source.json', expected: 'x', actual: 'x' },
    ];
    expect(copyViolations(copies, syncCommand)).toEqual([
      'deploy/kubernetes/base/policy/versions.json differs from ops/versions.json: run `npm run k8s:sync`',
      'deploy/kubernetes/monitoring/prometheus-rule.yaml is missing: run `npm run k8s:sync`',
    ]);
  });

  it('report PrometheusRule groups that differ from the rule file', () => {
    const groups = [{ name: 'api-versions', rules: [{ alert: 'A', expr: 'up == 0' }] }];
    const rule: IPrometheusRule = {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PrometheusRule',
      metadata: { name: 'version-router' },
      spec: { groups: structuredClone(groups) },
    };
    expect(ruleGroupViolations(rule, groups, 'ops/prometheus/rules.yml', syncCommand)).toEqual([]);
    rule.spec.groups![0]!.rules![0]!.expr = 'up == 1';
    expect(ruleGroupViolations(rule, groups, 'ops/prometheus/rules.yml', syncCommand)).toEqual([
      'PrometheusRule/version-router groups differ from ops/prometheus/rules.yml: run `npm run k8s:sync`',
    ]);
  });
});
