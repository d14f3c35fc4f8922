/**
 * The rules across objects of deploy/kubernetes (network access, availability, namespace, monitoring, the
 * copies kustomize forces), one function per rule returning what is wrong, so each can be seen failing
 * on a broken fixture (test/kubernetes/rules.test.ts).
 */
import { isDeepStrictEqual } from 'node:util';
import type { IPrometheusRule, IServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import type { IDeployment } from 'kubernetes-models/apps/v1';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import type { INetworkPolicy, INetworkPolicyPeer } from 'kubernetes-models/networking.k8s.io/v1';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1';
import type { IService, IServiceAccount } from 'kubernetes-models/v1';
import type { ManifestObject } from './kubectl.js';
import { podSpec, workloadName, type Workload } from './pod-rules.js';

type Labels = Record<string, string>;

function podLabels(workload: Workload): Labels {
  return workload.spec?.template.metadata?.labels ?? {};
}

/** A label selector given by matchLabels selects these labels (matchExpressions only narrow it further). */
function selects(selector: { matchLabels?: Labels } | undefined, labels: Labels): boolean {
  return Object.entries(selector?.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
}

/**
 * Who may reach a port, or be reached. `pods` without a namespace: pods of the policy's own namespace. `public`:
 * addresses outside the private, loopback and link-local ranges (PRIVATE_RANGES), which hold the cluster's
 * pods, Services and nodes and a cloud's metadata endpoint. `host`: one server the operator names, by its address
 * (an ipBlock of one address) or as pods (a namespaceSelector and a podSelector, each naming labels).
 */
export type Peer =
  | { kind: 'anyone' }
  | { kind: 'public' }
  | { kind: 'host' }
  | { kind: 'namespace'; name: string }
  | { kind: 'pods'; labels: Labels; namespace?: string };

/** Per address family, the whole range and what a `public` peer must leave out of it. */
const PRIVATE_RANGES: Record<string, string[]> = {
  '0.0.0.0/0': ['10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.168.0.0/16'],
  '::/0': ['::1/128', 'fc00::/7', 'fe80::/10'],
};

/** One port of one Deployment's pods and who alone may reach it (`pods`: a selector every peer must include). */
export interface PortAccess {
  deployment: string;
  port: number;
  /** The container port's name, which a NetworkPolicy may use instead of the number. */
  portName: string;
  allowed: Peer;
}

function describePeer(peer: Peer): string {
  if (peer.kind === 'anyone') return 'anyone';
  if (peer.kind === 'public') return 'public addresses';
  if (peer.kind === 'host') return 'one named server (an ipBlock of one address, or pods by namespace and labels)';
  if (peer.kind === 'namespace') return `the namespace ${peer.name}`;
  return `pods selected by ${JSON.stringify(peer.labels)} in ${
    peer.namespace === undefined ? 'the same ' + 'namespace' : `the namespace ${peer.namespace}`
  }`;
}

/** A namespaceSelector that selects the one namespace named `name` and no other. */
function onlyNamespace(
  selector: { matchLabels?: Labels; matchExpressions?: unknown[] } | undefined,
  name: string,
): boolean {
  const labels = selector?.matchLabels ?? {};
  return Object.keys(labels).length === 1 && labels['kubernetes.io/metadata.name'] === name;
}

/** A NetworkPolicy peer admits no one beyond `allowed` (every label `allowed` names is required). */
function within(peer: INetworkPolicyPeer, allowed: Peer): boolean {
  if (allowed.kind === 'anyone') return true;
  if (allowed.kind === 'public') {
    const excluded = PRIVATE_RANGES[peer.ipBlock?.cidr ?? ''];
    return excluded !== undefined && excluded.every((range) => peer.ipBlock?.except?.includes(range));
  }
  if (allowed.kind === 'host') {
    if (peer.ipBlock !== undefined) return /^[0-9.]+\/32$|^[0-9a-f:]+\/128$/i.test(peer.ipBlock.cidr);
    return (
      Object.keys(peer.namespaceSelector?.matchLabels ?? {}).length > 0 &&
      Object.keys(peer.podSelector?.matchLabels ?? {}).length > 0
    );
  }
  if (peer.ipBlock !== undefined) return false;
  if (allowed.kind === 'namespace') return onlyNamespace(peer.namespaceSelector, allowed.name);
  const podsMatch =
    peer.podSelector !== undefined &&
    Object.entries(allowed.labels).every(([key, value]) => peer.podSelector?.matchLabels?.[key] === value);
  const namespaceMatches =
    allowed.namespace === undefined
      ? peer.namespaceSelector === undefined
      : onlyNamespace(peer.namespaceSelector, allowed.namespace);
  return podsMatch && namespaceMatches;
}

/**
 * Each listed port is reachable from its allowed peers and from no one else: its pods are isolated for
 * ingress by a NetworkPolicy, and every ingress rule covering the port names only allowed peers.
 */
export function networkPolicyViolations(
  deployments: Workload[],
  policies: INetworkPolicy[],
  access: PortAccess[],
): string[] {
  const found: string[] = [];
  for (const { deployment: name, port, portName, allowed } of access) {
    const deployment = deployments.find((candidate) => candidate.metadata?.name === name);
    if (deployment === undefined) {
      found.push(`no Deployment/${name}`);
      continue;
    }
    const where = `Deployment/${name} port ${port}`;
    const applying = policies.filter(
      (policy) =>
        selects(policy.spec?.podSelector, podLabels(deployment)) &&
        (policy.spec?.policyTypes ?? ['Ingress']).includes('Ingress'),
    );
    if (applying.length === 0) {
      found.push(`${where}: no NetworkPolicy isolates these pods, so every port is open to everyone`);
      continue;
    }
    const covering = applying.flatMap((policy) =>
      (policy.spec?.ingress ?? [])
        .filter(
          (rule) =>
            (rule.ports ?? []).length === 0 ||
            rule.ports?.some(
              (rulePort) =>
                rulePort.port === undefined ||
                rulePort.port === port ||
                rulePort.port === portName ||
                (typeof rulePort.port === 'number' &&
                  rulePort.endPort !== undefined &&
                  rulePort.port <= port &&
                  port <= rulePort.endPort),
            ),
        )
        .map((rule) => ({ policy: policy.metadata?.name, rule })),
    );
    if (covering.length === 0) found.push(`${where}: not admitted at all (${describePeer(allowed)} must reach it)`);
    for (const { policy, rule } of covering) {
      const from = rule.from ?? [];
      if (allowed.kind !== 'anyone' && from.length === 0)
        found.push(`${where}: NetworkPolicy/${policy} admits every source, not only ${describePeer(allowed)}`);
      for (const peer of from) {
        if (!within(peer, allowed))
          found.push(
            `${where}: NetworkPolicy/${policy} admits ${JSON.stringify(peer)}, not only ${describePeer(allowed)}`,
          );
      }
    }
  }
  return found;
}

/** Pods that listen on nothing (the migration Job's) are isolated for ingress, and no rule admits anyone to them. */
export function closedToIngressViolations(workloads: Workload[], policies: INetworkPolicy[]): string[] {
  return workloads.flatMap((workload) => {
    const applying = policies.filter(
      (policy) =>
        selects(policy.spec?.podSelector, podLabels(workload)) &&
        (policy.spec?.policyTypes ?? ['Ingress']).includes('Ingress'),
    );
    if (applying.length === 0) return [`${workloadName(workload)}: no NetworkPolicy isolates its pods for ingress`];
    return applying
      .filter((policy) => (policy.spec?.ingress ?? []).length > 0)
      .map((policy) => `${workloadName(workload)}: NetworkPolicy/${policy.metadata?.name} admits ingress`);
  });
}

/** Where one Deployment's pods may send to: a peer on some ports (protocol TCP unless named). */
export interface EgressAllowance {
  /** What it is for, in messages (DNS, the backend, PostgreSQL). */
  what: string;
  peer: Peer;
  ports: { port: number; protocol?: 'TCP' | 'UDP' }[];
}

/**
 * The pods of each Deployment are isolated for egress, every egress rule that applies to them names ports
 * and peers, each port and peer of which one allowance covers, and every allowance is admitted by some rule
 * (else, say, name lookups fail).
 */
export function egressViolations(
  deployments: Workload[],
  policies: INetworkPolicy[],
  allowed: Record<string, EgressAllowance[]>,
): string[] {
  const found: string[] = [];
  const protocolOf = (protocol: string | undefined): string => protocol ?? 'TCP';
  for (const deployment of deployments) {
    const name = deployment.metadata?.name ?? '';
    const where = workloadName(deployment);
    const allowances = allowed[name] ?? [];
    const applying = policies.filter(
      (policy) =>
        selects(policy.spec?.podSelector, podLabels(deployment)) && (policy.spec?.policyTypes ?? []).includes('Egress'),
    );
    if (applying.length === 0) {
      found.push(`${where}: no NetworkPolicy limits its egress, so its pods reach everything`);
      continue;
    }
    const rules = applying.flatMap((policy) =>
      (policy.spec?.egress ?? []).map((rule) => ({ policy: policy.metadata?.name, rule })),
    );
    for (const { policy, rule } of rules) {
      const ports = rule.ports ?? [];
      if (ports.length === 0) found.push(`${where}: NetworkPolicy/${policy} admits egress on every port`);
      const peers: (INetworkPolicyPeer | undefined)[] = (rule.to ?? []).length === 0 ? [undefined] : (rule.to ?? []);
      for (const peer of peers) {
        for (const port of ports) {
          const covered = allowances.some(
            (allowance) =>
              (peer === undefined ? allowance.peer.kind === 'anyone' : within(peer, allowance.peer)) &&
              allowance.ports.some(
                (candidate) =>
                  candidate.port === port.port && protocolOf(candidate.protocol) === protocolOf(port.protocol),
              ),
          );
          if (!covered)
            found.push(
              `${where}: NetworkPolicy/${policy} admits egress to ` +
                `${peer === undefined ? 'anyone' : JSON.stringify(peer)} on ${protocolOf(port.protocol)} ` +
                `${String(port.port)}, which it needs not reach`,
            );
        }
      }
    }
    for (const allowance of allowances) {
      const admitted = allowance.ports.every((needed) =>
        rules.some(
          ({ rule }) =>
            (rule.ports ?? []).some(
              (port) => port.port === needed.port && protocolOf(port.protocol) === protocolOf(needed.protocol),
            ) &&
            ((rule.to ?? []).length === 0
              ? allowance.peer.kind === 'anyone'
              : (rule.to ?? []).some((peer) => within(peer, allowance.peer))),
        ),
      );
      if (!admitted)
        found.push(
          `${where}: cannot reach ${allowance.what} (${describePeer(allowance.peer)} on ` +
            `${allowance.ports.map((port) => `${protocolOf(port.protocol)} ${port.port}`).join(', ')})`,
        );
    }
  }
  return found;
}

/**
 * Rollouts and disruptions keep serving: RollingUpdate that adds a pod before removing one, replicas spread
 * across nodes and zones, no `replicas` where an HPA owns the count (an apply would reset it), a PDB where several
 * replicas run, and none that would block every node drain of a single replica.
 */
export function availabilityViolations(
  deployment: IDeployment,
  autoscalers: IHorizontalPodAutoscaler[],
  budgets: IPodDisruptionBudget[],
): string[] {
  const found: string[] = [];
  const where = `Deployment/${deployment.metadata?.name}`;
  const strategy = deployment.spec?.strategy;
  if (strategy?.type !== 'RollingUpdate' || strategy.rollingUpdate?.maxUnavailable !== 0)
    found.push(`${where}: not a RollingUpdate with maxUnavailable 0`);
  const spread = podSpec(deployment).topologySpreadConstraints ?? [];
  const acrossNodes = spread.some(
    (constraint) =>
      constraint.topologyKey === 'kubernetes.io/hostname' &&
      Object.keys(constraint.labelSelector?.matchLabels ?? {}).length > 0 &&
      selects(constraint.labelSelector, podLabels(deployment)),
  );
  if (!acrossNodes)
    found.push(`${where}: no topologySpreadConstraint across nodes (kubernetes.io/hostname) selecting its pods`);
  const acrossZones = spread.some(
    (constraint) =>
      constraint.topologyKey === 'topology.kubernetes.io/zone' &&
      Object.keys(constraint.labelSelector?.matchLabels ?? {}).length > 0 &&
      selects(constraint.labelSelector, podLabels(deployment)),
  );
  if (!acrossZones)
    found.push(`${where}: no topologySpreadConstraint across zones (topology.kubernetes.io/zone) selecting its pods`);
  const autoscaler = autoscalers.find(
    (candidate) =>
      candidate.spec?.scaleTargetRef.kind === 'Deployment' &&
      candidate.spec.scaleTargetRef.name === deployment.metadata?.name,
  );
  if (autoscaler !== undefined && deployment.spec?.replicas !== undefined)
    found.push(`${where}: sets replicas although HorizontalPodAutoscaler/${autoscaler.metadata?.name} owns the count`);
  const fewest = autoscaler === undefined ? (deployment.spec?.replicas ?? 1) : (autoscaler.spec?.minReplicas ?? 1);
  const most = autoscaler === undefined ? fewest : (autoscaler.spec?.maxReplicas ?? fewest);
  const budget = budgets.find((candidate) => selects(candidate.spec?.selector, podLabels(deployment)));
  if (most > 1 && budget === undefined)
    found.push(`${where}: runs up to ${most} replicas without a PodDisruptionBudget`);
  // A budget that scales with the replicas: minAvailable keeps a fixed number, so a drain may take all the others.
  if (budget?.spec?.minAvailable !== undefined)
    found.push(
      `${where}: PodDisruptionBudget/${budget.metadata?.name} sets minAvailable ${String(budget.spec.minAvailable)}, ` +
        `which lets a drain take all but that many of ${most} replicas (set maxUnavailable)`,
    );
  else if (budget !== undefined && budget.spec?.maxUnavailable === undefined)
    found.push(`${where}: PodDisruptionBudget/${budget.metadata?.name} sets no maxUnavailable`);
  if (budget !== undefined && fewest <= 1) {
    const blocks = (budget.spec?.minAvailable ?? 0) !== 0 || budget.spec?.maxUnavailable === 0;
    if (blocks)
      found.push(
        `${where}: one replica under PodDisruptionBudget/${budget.metadata?.name} can never be evicted (node drains ` +
          `hang)`,
      );
  }
  return found;
}

/**
 * The autoscaler scales down on purpose: after a stabilization window of at least 5 minutes (a lull between two peaks
 * keeps the replicas the next one needs) and by a bounded number of pods or share per period of at least a minute.
 */
export function autoscalerBehaviorViolations(autoscaler: IHorizontalPodAutoscaler): string[] {
  const where = `HorizontalPodAutoscaler/${autoscaler.metadata?.name}`;
  const scaleDown = autoscaler.spec?.behavior?.scaleDown;
  if (scaleDown === undefined) return [`${where}: no behavior.scaleDown`];
  const found: string[] = [];
  if ((scaleDown.stabilizationWindowSeconds ?? 0) < 300)
    found.push(
      `${where}: scales down after a stabilization window of ${String(scaleDown.stabilizationWindowSeconds ?? 0)} s, ` +
        'less than 300',
    );
  const policies = scaleDown.policies ?? [];
  if (policies.length === 0 || scaleDown.selectPolicy === 'Disabled')
    found.push(`${where}: no policy bounds how many replicas a scale-down removes at once`);
  for (const policy of policies) {
    if (policy.periodSeconds < 60)
      found.push(`${where}: a scale-down policy of ${policy.value} ${policy.type} every ${policy.periodSeconds} s`);
  }
  return found;
}

/**
 * Each workload runs as a ServiceAccount of its own (never `default`, never another workload's) that mounts no token,
 * and its pods mount none either: they never call the Kubernetes API.
 */
export function serviceAccountViolations(workloads: Workload[], accounts: IServiceAccount[]): string[] {
  const found: string[] = [];
  const users = new Map<string, string[]>();
  for (const workload of workloads) {
    const where = workloadName(workload);
    const spec = podSpec(workload);
    const name = spec.serviceAccountName;
    if (name === undefined || name === 'default') {
      found.push(`${where}: runs as the namespace's default ServiceAccount`);
      continue;
    }
    users.set(name, [...(users.get(name) ?? []), where]);
    const account = accounts.find((candidate) => candidate.metadata?.name === name);
    if (account === undefined) found.push(`${where}: ServiceAccount/${name} is not among the manifests`);
    else if (account.automountServiceAccountToken !== false)
      found.push(`ServiceAccount/${name}: automountServiceAccountToken is not false`);
    if (spec.automountServiceAccountToken !== false)
      found.push(`${where}: its pods' automountServiceAccountToken is not false`);
  }
  for (const [name, sharing] of users) {
    if (sharing.length > 1) found.push(`ServiceAccount/${name} is shared by ${sharing.join(', ')}`);
  }
  return found;
}

/** Every object lands in the one namespace (an object without one would go wherever kubectl points). */
export function namespaceViolations(objects: ManifestObject[], namespace: string): string[] {
  return objects
    .filter((object) => object.kind !== 'Namespace' && object.metadata.namespace !== namespace)
    .map(
      (object) =>
        `${object.kind}/${object.metadata.name}: namespace ${object.metadata.namespace ?? '(none)'}, not ${namespace}`,
    );
}

/**
 * Each ServiceMonitor carries kube-prometheus-stack's `release` label, selects a Service, and scrapes a port
 * of it that leads to the pods' admin container port.
 */
export function serviceMonitorViolations(
  monitors: IServiceMonitor[],
  services: IService[],
  deployments: IDeployment[],
  jobs: Record<string, string>,
): string[] {
  const found: string[] = [];
  for (const monitor of monitors) {
    const where = `ServiceMonitor/${monitor.metadata?.name}`;
    if (monitor.metadata?.labels?.release === undefined)
      found.push(`${where}: no release label (kube-prometheus-stack ignores it)`);
    // The job label the rules and the dashboard select by is this application's own name for the process, whatever the
    // Service is called (the Prometheus Operator sets the Service's name, gateway-admin, before an endpoint's
    // relabelings run).
    const job = jobs[monitor.metadata?.name ?? ''];
    for (const endpoint of monitor.spec.endpoints ?? []) {
      const setsJob = (endpoint.relabelings ?? []).filter((relabeling) => relabeling.targetLabel === 'job');
      const last = setsJob.at(-1);
      if (
        last === undefined ||
        last.replacement !== job ||
        (last.sourceLabels ?? []).length > 0 ||
        (last.action ?? 'replace') !== 'replace'
      )
        found.push(
          `${where} endpoint ${String(endpoint.port)}: no relabeling sets job to ${String(job)} (the job the rules ` +
            'select)',
        );
    }
    const selected = services.filter(
      (service) =>
        Object.keys(monitor.spec.selector.matchLabels ?? {}).length > 0 &&
        selects(monitor.spec.selector, service.metadata?.labels ?? {}),
    );
    if (selected.length === 0) found.push(`${where}: selects no Service`);
    for (const service of selected) {
      const pods = deployments.filter(
        (deployment) =>
          Object.keys(service.spec?.selector ?? {}).length > 0 &&
          selects({ matchLabels: service.spec?.selector }, podLabels(deployment)),
      );
      for (const endpoint of monitor.spec.endpoints ?? []) {
        const servicePort = service.spec?.ports?.find((port) => port.name === endpoint.port);
        if (servicePort === undefined) {
          found.push(`${where}: Service/${service.metadata?.name} has no port named ${JSON.stringify(endpoint.port)}`);
          continue;
        }
        for (const deployment of pods) {
          for (const container of podSpec(deployment).containers) {
            const admin = container.ports?.find((port) => port.name === 'admin')?.containerPort;
            const target = servicePort.targetPort ?? servicePort.port;
            const reached =
              typeof target === 'number'
                ? target
                : container.ports?.find((port) => port.name === target)?.containerPort;
            if (admin === undefined || reached !== admin)
              found.push(
                `${where}: Service/${service.metadata?.name} port ${endpoint.port} leads to ${String(reached)}, not ` +
                  `the admin port of Deployment/${deployment.metadata?.name}`,
              );
          }
        }
      }
    }
  }
  return found;
}

/**
 * The admin port (metrics, the consumer registry, the policy reload) is on a Service of its own, never beside
 * the API port: whatever routes to the API Service (an Ingress, an HTTPRoute, a LoadBalancer) cannot reach it.
 */
export function adminServiceViolations(services: IService[]): string[] {
  return services.flatMap((service) => {
    const ports = service.spec?.ports ?? [];
    const admin = ports.filter((port) => port.name === 'admin' || port.targetPort === 'admin');
    const others = ports.filter((port) => !admin.includes(port)).map((port) => port.name ?? String(port.port));
    return admin.length > 0 && others.length > 0
      ? [`Service/${service.metadata?.name}: the admin port shares the Service with ${others.join(', ')}`]
      : [];
  });
}

/** A copy kustomize needs inside its directory: what it holds and what its source makes of it. */
export interface CopyState {
  target: string;
  source: string;
  expected: string;
  /** undefined when the copy is missing. */
  actual: string | undefined;
}

/** Each copy equals what its source makes of it; the message names the command that refreshes them. */
export function copyViolations(copies: CopyState[], syncCommand: string): string[] {
  return copies
    .filter((copy) => copy.actual !== copy.expected)
    .map(
      (copy) =>
        `${copy.target} ${copy.actual === undefined ? 'is missing' : `differs from ${copy.source}`}: run \`` +
        `${syncCommand}\``,
    );
}

/** The rendered PrometheusRule's groups are exactly the Prometheus rule file's. */
export function ruleGroupViolations(
  rule: IPrometheusRule,
  groups: unknown,
  source: string,
  syncCommand: string,
): string[] {
  return isDeepStrictEqual(rule.spec.groups, groups)
    ? []
    : [`PrometheusRule/${rule.metadata?.name} groups differ from ${source}: run \`${syncCommand}\``];
}
