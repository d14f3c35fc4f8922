/**
 * Each rule of test/kubernetes/database-rules.ts, seen failing: the rendered overlays/postgres passes it (see
 * manifests.test.ts), and the same objects broken one way each make it report that.
 */
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job, type IJob } from 'kubernetes-models/batch/v1';
import { expect, it } from 'vitest';
import { describeWithTool } from '../../platform/test/support/tools.js';
import {
  DEFAULT_MAX_CONNECTIONS,
  backendScaleViolations,
  connectionBudgetViolations,
  connectionUses,
  migrationJobViolations,
  progressDeadlineViolations,
  type ConnectionsOf,
  type MigrationFacts,
} from './database-rules.js';
import { render, type ManifestObject } from './kubectl.js';
import { podSpec } from './pod-rules.js';
import { ofKind } from './schemas.js';

let cached: ManifestObject[] | undefined;
/** A fresh copy of the rendered overlay for each test to break. */
function overlay() {
  cached ??= render('deploy/kubernetes/overlays/postgres');
  const objects = structuredClone(cached);
  const named = <T extends { metadata?: { name?: string } }>(list: T[], name: string): T => {
    const found = list.find((candidate) => candidate.metadata?.name === name);
    if (found === undefined) throw new Error(`no ${name}`);
    return found;
  };
  const deployments = ofKind(objects, Deployment.is);
  const autoscalers = ofKind(objects, HorizontalPodAutoscaler.is);
  return {
    deployments,
    autoscalers,
    gateway: named(deployments, 'gateway'),
    backend: named(deployments, 'backend'),
    gatewayScaler: named(autoscalers, 'gateway'),
    backendScaler: named(autoscalers, 'backend'),
    job: ofKind(objects, Job.is)[0] as IJob,
  };
}

/** Pools as the fixture says: 2 per gateway, 5 per backend, 1 per migration command. */
const connectionsOf: ConnectionsOf = (workload, container) => {
  if (!(container.env ?? []).some((variable) => variable.name === 'DATABASE_URL')) return 0;
  if (workload.kind === 'Job') return 1;
  return workload.metadata?.name === 'gateway' ? 2 : 5;
};

const facts: MigrationFacts = {
  commands: {
    backend: ['node', 'services/users-orders/dist/src/migrate.js'],
    gateway: ['node', 'gateway/dist/src/migrate.js'],
  },
  migrationSecret: 'version-router-database-migrations',
  runtimeSecret: 'version-router-database',
};

describeWithTool('kubectl', 'the rules about PostgreSQL', () => {
  it('count every pod at the worst moment: the maxima, a surge each, the Job', () => {
    const { deployments, autoscalers, job, gatewayScaler, backendScaler } = overlay();
    const uses = connectionUses([...deployments, job], autoscalers, connectionsOf);
    const gatewayPods = gatewayScaler.spec.maxReplicas + 1;
    const backendPods = backendScaler.spec.maxReplicas + 1;
    expect(uses).toEqual([
      { workload: 'Deployment/backend', pods: backendPods, perPod: 5, connections: backendPods * 5 },
      { workload: 'Deployment/gateway', pods: gatewayPods, perPod: 2, connections: gatewayPods * 2 },
      { workload: 'Job/migrations', pods: 1, perPod: 1, connections: 1 },
    ]);
  });

  it('report a budget the autoscalers can break: 30 gateways of 2 connections', () => {
    const { deployments, autoscalers, job, gatewayScaler, backendScaler } = overlay();
    gatewayScaler.spec.maxReplicas = 30;
    const uses = connectionUses([...deployments, job], autoscalers, connectionsOf);
    const backendPods = backendScaler.spec.maxReplicas + 1;
    const total = backendPods * 5 + 31 * 2 + 1;
    expect(connectionBudgetViolations(uses, DEFAULT_MAX_CONNECTIONS)).toEqual([
      `Deployment/backend ${backendPods} × 5 + Deployment/gateway 31 × 2 + Job/migrations 1 × 1 = ${total} ` +
        'connections at the worst moment, above 80 (80 % of max_connections 100)',
    ]);
  });

  it('count a surge given as a share, a Job run in parallel, and its init containers one at a time', () => {
    const { gateway, autoscalers, job, gatewayScaler } = overlay();
    gateway.spec!.strategy!.rollingUpdate!.maxSurge = '25%';
    job.spec!.parallelism = 2;
    const uses = connectionUses([gateway, job], autoscalers, connectionsOf);
    const most = gatewayScaler.spec.maxReplicas;
    expect(uses).toEqual([
      {
        workload: 'Deployment/gateway',
        pods: most + Math.ceil(most / 4),
        perPod: 2,
        connections: (most + Math.ceil(most / 4)) * 2,
      },
      { workload: 'Job/migrations', pods: 2, perPod: 1, connections: 2 },
    ]);
    // Both commands as containers side by side: two connections per pod.
    podSpec(job).containers.push(...podSpec(job).initContainers!.splice(0));
    expect(connectionUses([job], [], connectionsOf)).toEqual([
      { workload: 'Job/migrations', pods: 2, perPod: 2, connections: 4 },
    ]);
  });

  it("report a backend maximum below what the gateways' maximum sends it, and a single backend", () => {
    const { gateway, backend, autoscalers, backendScaler } = overlay();
    backendScaler.spec.maxReplicas = 3;
    backendScaler.spec.minReplicas = 1;
    // A gateway held to 400m serving 1,000 requests per second per 400 millicores; a backend request costing the same.
    container(gateway).resources!.requests!.cpu = '500m';
    container(backend).resources!.requests!.cpu = '500m';
    const cost = { gateway: 400, backend: 400 };
    expect(backendScaleViolations(gateway, backend, autoscalers, cost)).toEqual([
      'HorizontalPodAutoscaler/backend: at most 3 replicas, but 10 gateways at their target pass on about 10000 ' +
        'requests per second, which take 10 backends at theirs',
      'HorizontalPodAutoscaler/backend: fewer than 2 replicas at its minimum',
    ]);
    expect(
      backendScaleViolations(
        gateway,
        backend,
        autoscalers.filter((found) => found.metadata?.name === 'gateway'),
        cost,
      ),
    ).toEqual(['no HorizontalPodAutoscaler for Deployment/backend']);
  });

  it('report a Job migrating as the processes’ role, from another image, with another command', () => {
    const { deployments, job } = overlay();
    const [backend] = podSpec(job).initContainers!;
    backend!.env!.find((variable) => variable.name === 'DATABASE_URL')!.valueFrom!.secretKeyRef!.name =
      'version-router-database';
    backend!.image = 'version-router-backend:0.0.9';
    podSpec(job).containers[0]!.command = ['node', 'gateway/dist/src/main.js'];
    expect(migrationJobViolations(job, deployments, facts)).toEqual([
      "Job/migrations container backend: image version-router-backend:0.0.9, not Deployment/backend's " +
        'version-router-backend:0.1.0',
      'Job/migrations container backend: DATABASE_URL is not from the Secret version-router-database-migrations',
      'Job/migrations container gateway: runs ["node","gateway/dist/src/main.js"], not ' +
        '["node","gateway/dist/src/migrate.js"]',
    ]);
  });

  it('report a process left to migrate at start, or as the migrations’ role, and a process the Job forgets', () => {
    const { deployments, gateway, backend, job } = overlay();
    const env = container(gateway).env!;
    env.splice(
      env.findIndex((variable) => variable.name === 'DATABASE_MIGRATIONS'),
      1,
    );
    container(backend).env!.find((variable) => variable.name === 'DATABASE_URL')!.valueFrom!.secretKeyRef!.name =
      'version-router-database-migrations';
    podSpec(job).containers = [];
    expect(migrationJobViolations(job, deployments, facts)).toEqual([
      'Job/migrations: migrates backend, not backend, gateway',
      'Deployment/backend: DATABASE_URL is not from the Secret version-router-database',
      'Deployment/gateway: DATABASE_MIGRATIONS is not check (its pods would change the schema at start)',
    ]);
  });

  it('report a startup probe that outlasts the progress deadline (the 625 s of a migration at start)', () => {
    const { backend } = overlay();
    expect(progressDeadlineViolations(backend)).toEqual([]);
    container(backend).startupProbe = {
      httpGet: { path: '/healthz', port: 'admin' },
      periodSeconds: 5,
      failureThreshold: 125,
    };
    expect(progressDeadlineViolations(backend)).toEqual([
      'Deployment/backend container backend: the startup probe allows 625 s, not less than progressDeadlineSeconds 600',
    ]);
    backend.spec!.progressDeadlineSeconds = 900;
    expect(progressDeadlineViolations(backend)).toEqual([]);
  });
});

function container(deployment: IDeployment) {
  return podSpec(deployment).containers[0]!;
}
