/**
 * The rules of deploy/kubernetes about PostgreSQL (docs/deployment.md#kubernetes-with-postgresql): the connections
 * every workload may hold at the worst moment against the server's budget, the backend's autoscaler against the
 * gateway's, the migration Job against the Deployments it migrates for, and the start-up budgets against the rollout's
 * progress deadline. One function per rule returning what is wrong, so test/kubernetes/database-rules.test.ts can see
 * each fail on a broken object.
 */
import type { IDeployment } from 'kubernetes-models/apps/v1';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import type { IJob } from 'kubernetes-models/batch/v1';
import type { IContainer } from 'kubernetes-models/v1';
import { millicores } from './operator-rules.js';
import { containersOf, envValue, podSpec, workloadName, type Workload } from './pod-rules.js';

/** PostgreSQL's default max_connections, which the shipped pool sizes are held to. */
export const DEFAULT_MAX_CONNECTIONS = 100;
/**
 * The share of max_connections the deployment may take at the worst moment: the rest is for superuser_reserved (3),
 * psql, an exporter, a backup.
 */
const CONNECTION_SHARE = 0.8;
/** Kubernetes' default progressDeadlineSeconds. */
const DEFAULT_PROGRESS_DEADLINE_S = 600;
/** Kubernetes' default maxSurge of a RollingUpdate. */
const DEFAULT_MAX_SURGE = '25%';

/** How many connections one container of a workload opens at most (0: it opens none). */
export type ConnectionsOf = (workload: Workload, container: IContainer) => number;

/** One workload's part of the budget, at the worst moment: every pod it may run at once, each with its most. */
export interface ConnectionUse {
  workload: string;
  pods: number;
  perPod: number;
  connections: number;
}

function autoscalerOf(deployment: IDeployment, autoscalers: IHorizontalPodAutoscaler[]) {
  return autoscalers.find(
    (candidate) =>
      candidate.spec?.scaleTargetRef.kind === 'Deployment' &&
      candidate.spec.scaleTargetRef.name === deployment.metadata?.name,
  );
}

/** A count or a percentage of `of`, rounded up (as the Deployment controller rounds maxSurge). */
function countOf(value: number | string, of: number): number {
  return typeof value === 'number' ? value : Math.ceil((Number(value.replace('%', '')) / 100) * of);
}

/**
 * The pods each workload may run at once at the worst moment, and the connections they may hold: a Deployment at its
 * autoscaler's maximum (else its replicas) plus its rollout's surge; a Job at its parallelism, each pod running its
 * init containers one at a time and then its containers together.
 */
export function connectionUses(
  workloads: Workload[],
  autoscalers: IHorizontalPodAutoscaler[],
  connectionsOf: ConnectionsOf,
): ConnectionUse[] {
  return workloads.flatMap((workload) => {
    const spec = podSpec(workload);
    const each = (containers: IContainer[] | undefined) =>
      (containers ?? []).map((container) => connectionsOf(workload, container));
    const perPod = Math.max(
      0,
      ...each(spec.initContainers),
      each(spec.containers).reduce((a, b) => a + b, 0),
    );
    if (perPod === 0) return [];
    let pods: number;
    if (workload.kind === 'Job') pods = workload.spec?.parallelism ?? 1;
    else {
      const deployment = workload;
      const most = autoscalerOf(deployment, autoscalers)?.spec?.maxReplicas ?? deployment.spec?.replicas ?? 1;
      const surge = deployment.spec?.strategy?.rollingUpdate?.maxSurge ?? DEFAULT_MAX_SURGE;
      pods = most + countOf(surge, most);
    }
    return [{ workload: workloadName(workload), pods, perPod, connections: pods * perPod }];
  });
}

/** The uses together stay within CONNECTION_SHARE of max_connections. */
export function connectionBudgetViolations(uses: ConnectionUse[], maxConnections: number): string[] {
  const total = uses.reduce((sum, use) => sum + use.connections, 0);
  const budget = Math.floor(maxConnections * CONNECTION_SHARE);
  if (total <= budget) return [];
  const parts = uses.map((use) => `${use.workload} ${use.pods} × ${use.perPod}`).join(' + ');
  return [
    `${parts} = ${total} connections at the worst moment, above ${budget} (${CONNECTION_SHARE * 100} % of ` +
      `max_connections ${maxConnections})`,
  ];
}

/** What the autoscaler holds a replica to, in millicores: its CPU request times the target utilization. */
function targetMillicores(deployment: IDeployment, autoscaler: IHorizontalPodAutoscaler | undefined): number {
  const request = millicores(podSpec(deployment).containers[0]?.resources?.requests?.cpu) ?? Number.NaN;
  const utilization =
    autoscaler?.spec?.metrics?.find((metric) => metric.resource?.name === 'cpu')?.resource?.target.averageUtilization ??
    Number.NaN;
  return (request * utilization) / 100;
}

/** The measured CPU of each process per 1,000 requests per second through the gateway (the costliest run). */
export interface RequestCost {
  gateway: number;
  backend: number;
}

/**
 * The backend's autoscaler can follow the gateway's: at the gateways' maximum, each held to its target, they pass on
 * as many requests per second as the measurement says a gateway replica serves at its target; the backend's maximum,
 * each replica at its own target, serves them (by the same measurement, per request through the gateway); and at
 * least two backends run, so that a node drain or a rollout never leaves none.
 */
export function backendScaleViolations(
  gateway: IDeployment,
  backend: IDeployment,
  autoscalers: IHorizontalPodAutoscaler[],
  cost: RequestCost,
): string[] {
  const gatewayScaler = autoscalerOf(gateway, autoscalers);
  const backendScaler = autoscalerOf(backend, autoscalers);
  if (gatewayScaler === undefined || backendScaler === undefined)
    return [
      `no HorizontalPodAutoscaler for ${backendScaler === undefined ? 'Deployment/backend' : 'Deployment/gateway'}`,
    ];
  const found: string[] = [];
  const gatewayMax = gatewayScaler.spec?.maxReplicas ?? 1;
  const requestsPerSecond = (gatewayMax * targetMillicores(gateway, gatewayScaler) * 1000) / cost.gateway;
  const needed = Math.ceil((requestsPerSecond * cost.backend) / 1000 / targetMillicores(backend, backendScaler));
  const backendMax = backendScaler.spec?.maxReplicas ?? 1;
  if (!(backendMax >= needed))
    found.push(
      `HorizontalPodAutoscaler/${backendScaler.metadata?.name}: at most ${backendMax} replicas, but ${gatewayMax} ` +
        `gateways at their target pass on about ${Math.round(requestsPerSecond)} requests per second, which take ` +
        `${needed} backends at theirs`,
    );
  if ((backendScaler.spec?.minReplicas ?? 1) < 2)
    found.push(`HorizontalPodAutoscaler/${backendScaler.metadata?.name}: fewer than 2 replicas at its minimum`);
  return found;
}

/** Where a container's DATABASE_URL comes from: the Secret's name, undefined when it is not from a Secret. */
function databaseSecret(container: IContainer): string | undefined {
  return container.env?.find((variable) => variable.name === 'DATABASE_URL')?.valueFrom?.secretKeyRef?.name;
}

/** What the migration Job must agree with. */
export interface MigrationFacts {
  /** Per process (container and build target name), the command that applies its migrations. */
  commands: Record<string, string[]>;
  /** The Secret of the role that may change the schema. */
  migrationSecret: string;
  /** The Secret of the processes' role, which may not. */
  runtimeSecret: string;
}

/**
 * The Job runs each process's migration command, one container per process, from the very image its Deployment runs,
 * as the role of the migration Secret; the Deployments run as the other role, with DATABASE_MIGRATIONS=check, and so
 * never change the schema themselves.
 */
export function migrationJobViolations(job: IJob, deployments: IDeployment[], facts: MigrationFacts): string[] {
  const found: string[] = [];
  const where = workloadName(job);
  const containers = containersOf(job);
  const migrated = containers.map((container) => container.name).sort();
  const expected = Object.keys(facts.commands).sort();
  if (JSON.stringify(migrated) !== JSON.stringify(expected))
    found.push(`${where}: migrates ${migrated.join(', ') || 'nothing'}, not ${expected.join(', ')}`);
  for (const container of containers) {
    const at = `${where} container ${container.name}`;
    const command = facts.commands[container.name];
    const deployment = deployments.find((candidate) => candidate.metadata?.name === container.name);
    const image = deployment === undefined ? undefined : podSpec(deployment).containers[0]?.image;
    if (
      command !== undefined &&
      JSON.stringify([...(container.command ?? []), ...(container.args ?? [])]) !== JSON.stringify(command)
    )
      found.push(`${at}: runs ${JSON.stringify(container.command)}, not ${JSON.stringify(command)}`);
    if (image === undefined || container.image !== image)
      found.push(`${at}: image ${String(container.image)}, not Deployment/${container.name}'s ${String(image)}`);
    if (databaseSecret(container) !== facts.migrationSecret)
      found.push(`${at}: DATABASE_URL is not from the Secret ${facts.migrationSecret}`);
  }
  for (const deployment of deployments) {
    const container = podSpec(deployment).containers[0];
    if (container === undefined) continue;
    const at = workloadName(deployment);
    if (databaseSecret(container) !== facts.runtimeSecret)
      found.push(`${at}: DATABASE_URL is not from the Secret ${facts.runtimeSecret}`);
    if (envValue(container, 'DATABASE_MIGRATIONS') !== 'check')
      found.push(`${at}: DATABASE_MIGRATIONS is not check (its pods would change the schema at start)`);
  }
  return found;
}

/**
 * The longest a Deployment's pod may take to start (its startup probe's budget) is within the rollout's
 * progressDeadlineSeconds: a pod that waits as long as it may does not mark the rollout failed.
 */
export function progressDeadlineViolations(deployment: IDeployment): string[] {
  const deadline = deployment.spec?.progressDeadlineSeconds ?? DEFAULT_PROGRESS_DEADLINE_S;
  return podSpec(deployment).containers.flatMap((container) => {
    const probe = container.startupProbe;
    const budget = (probe?.initialDelaySeconds ?? 0) + (probe?.periodSeconds ?? 10) * (probe?.failureThreshold ?? 3);
    return budget < deadline
      ? []
      : [
          `${workloadName(deployment)} container ${container.name}: the startup probe allows ${budget} s, not less ` +
            `than progressDeadlineSeconds ${deadline}`,
        ];
  });
}
