/**
 * What a production operator expects of deploy/kubernetes beyond the pod rules (docs/deployment.md,
 * Kubernetes): images named as the documented build names them, memory sized from a measurement, Secrets
 * for what is secret, a start-up probe that outlasts a long migration, the dashboard for Grafana's sidecar,
 * exposure of the API port only. One function per rule returning what is wrong, so
 * test/kubernetes/operator-rules.test.ts can see each fail on a broken object.
 */
import type { IHTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute';
import type { IDeployment } from 'kubernetes-models/apps/v1';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1';
import type { IConfigMap, IService } from 'kubernetes-models/v1';
import { containersOf, envValue, podSpec, workloadName, type Workload } from './pod-rules.js';

const MIB = 1024 * 1024;

function where(deployment: Workload, container?: string): string {
  return workloadName(deployment) + (container === undefined ? '' : ` container ${container}`);
}

/**
 * The `-t` name of each `docker build --target <target> -t <name> .` line (the Dockerfile's header), by target, without
 * a tag.
 */
export function builtImageNames(dockerfile: string): Map<string, string> {
  const names = new Map<string, string>();
  for (const [, target, name] of dockerfile.matchAll(/docker build --target (\S+) -t ([^\s:]+)(?::\S+)? \./g))
    names.set(target as string, name as string);
  return names;
}

/** One entry of a kustomization's `images:`. */
export interface ImageSetting {
  name: string;
  newName?: string;
  newTag?: string;
  digest?: string;
}

/**
 * Each container names the image its build target's documented command gives (`docker build --target
 * <container> -t <name>`), bare: no registry, tag or digest, which the kustomization's `images:` sets, in
 * one entry per image, to `tag`.
 */
export function imageNamingViolations(
  deployments: IDeployment[],
  built: Map<string, string>,
  images: ImageSetting[],
  tag: string,
): string[] {
  const found: string[] = [];
  for (const deployment of deployments) {
    for (const { name, image } of podSpec(deployment).containers) {
      const expected = built.get(name);
      if (expected === undefined) found.push(`${where(deployment, name)}: no documented docker build --target ${name}`);
      else if (image !== expected)
        found.push(
          `${where(deployment, name)}: image ${JSON.stringify(image)}, not ${expected} as \`docker build --target ` +
            `${name} -t ${expected}\` names it (tag, registry and digest go in the kustomization's images:)`,
        );
      const settings = images.filter((setting) => setting.name === image);
      if (settings.length !== 1)
        found.push(
          `${where(deployment, name)}: ${settings.length} entries for ${image} in the kustomization's images:, not 1`,
        );
      else if (settings[0]?.newTag !== tag || settings[0].newName !== undefined || settings[0].digest !== undefined) {
        found.push(
          `${where(deployment, name)}: the kustomization's images: sets ${JSON.stringify(settings[0])}, not newTag ` +
            `${tag} alone`,
        );
      }
    }
  }
  return found;
}

/** A Kubernetes memory quantity in MiB (binary and decimal suffixes, or bytes). */
export function mebibytes(quantity: string | number | undefined): number | undefined {
  if (quantity === undefined) return undefined;
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|k|M|G)?$/.exec(String(quantity));
  if (match === null) return undefined;
  const factor = { Ki: 1024, Mi: MIB, Gi: 1024 * MIB, k: 1e3, M: 1e6, G: 1e9, '': 1 }[match[2] ?? ''] ?? 1;
  return (Number(match[1]) * factor) / MIB;
}

/** A Kubernetes CPU quantity in millicores ("500m", "1", "0.5"). */
export function millicores(quantity: string | number | undefined): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(m)?$/.exec(String(quantity));
  if (match === null) return undefined;
  return match[2] === 'm' ? Number(match[1]) : Number(match[1]) * 1000;
}

/**
 * The autoscaler holds each replica to a CPU use (the request times its target utilization) that rests on a recorded
 * measurement of the CPU per request, and leaves the replica room to take at least twice that load, up to its CPU
 * limit, while new replicas start.
 */
export function autoscalingViolations(
  deployment: IDeployment,
  autoscaler: IHorizontalPodAutoscaler,
  measuredMillicoresPer1000Rps: number | undefined,
): string[] {
  const container = podSpec(deployment).containers[0];
  const at = where(deployment, container?.name);
  const request = millicores(container?.resources?.requests?.cpu);
  const limit = millicores(container?.resources?.limits?.cpu);
  const utilization = autoscaler.spec?.metrics?.find((metric) => metric.resource?.name === 'cpu')?.resource?.target
    .averageUtilization;
  if (request === undefined || limit === undefined || utilization === undefined)
    return [`${at}: no CPU request, limit or autoscaling target on CPU utilization`];
  const found: string[] = [];
  const target = (request * utilization) / 100;
  if (measuredMillicoresPer1000Rps === undefined) found.push(`${at}: no measurement of its CPU per request`);
  if (target * 2 > limit)
    found.push(
      `${at}: the autoscaler's target of ${target}m per replica leaves less than twice that below the CPU limit of ` +
        `${limit}m`,
    );
  return found;
}

/** What bench/container-memory.mjs measured for one process (bench/results/container-memory.json). */
export interface MeasuredMemory {
  /** The largest working set or RSS under load, run as the manifests ship it. */
  peakMiB: number;
  /** The largest resident memory outside V8's old space, in any run. */
  outsideOldSpaceMiB: number;
}

/**
 * The memory request covers the measured peak (the scheduler places the pod where that much is free),
 * and a V8 old-space cap (`--max-old-space-size` in NODE_OPTIONS) keeps the heap where the process fits
 * under its limit: the cap plus what the process holds outside the old space is at most the limit, so V8
 * collects garbage harder before the kernel kills the container.
 */
export function memoryViolations(deployment: IDeployment, measured: Record<string, MeasuredMemory>): string[] {
  const found: string[] = [];
  for (const container of podSpec(deployment).containers) {
    const at = where(deployment, container.name);
    const figures = measured[container.name];
    if (figures === undefined) {
      found.push(`${at}: no measurement of its memory`);
      continue;
    }
    const request = mebibytes(container.resources?.requests?.memory);
    const limit = mebibytes(container.resources?.limits?.memory);
    if (request === undefined || request < figures.peakMiB)
      found.push(
        `${at}: memory request ${String(container.resources?.requests?.memory)} is below the measured peak of ` +
          `${figures.peakMiB} MiB`,
      );
    const cap = /(?:^|\s)--max-old-space-size=(\d+)(?:\s|$)/.exec(envValue(container, 'NODE_OPTIONS') ?? '')?.[1];
    if (cap === undefined) found.push(`${at}: NODE_OPTIONS sets no --max-old-space-size`);
    else if (limit === undefined || Number(cap) + figures.outsideOldSpaceMiB > limit) {
      found.push(
        `${at}: --max-old-space-size=${cap} plus the measured ${figures.outsideOldSpaceMiB} MiB outside the old ` +
          `space exceeds the memory limit ${String(container.resources?.limits?.memory)}`,
      );
    }
  }
  return found;
}

/** A variable a container must take from a Secret. */
export interface SecretVariable {
  variable: string;
  secret: string;
  key: string;
  /** true: the pod starts without the Secret. */
  optional: boolean;
}

/**
 * Each listed variable comes from its Secret's key (never a literal value in the manifest), optional or not as listed.
 */
export function secretViolations(deployment: Workload, expected: SecretVariable[]): string[] {
  const found: string[] = [];
  for (const container of containersOf(deployment)) {
    for (const { variable, secret, key, optional } of expected) {
      const at = `${where(deployment, container.name)}: ${variable}`;
      const entry = container.env?.find((candidate) => candidate.name === variable);
      const reference = entry?.valueFrom?.secretKeyRef;
      if (entry === undefined) found.push(`${at} is not set`);
      else if (reference === undefined) found.push(`${at} is not taken from a Secret`);
      else if (reference.name !== secret || reference.key !== key)
        found.push(`${at} comes from Secret ${reference.name} key ${reference.key}, not ${secret} key ${key}`);
      else if ((reference.optional ?? false) !== optional)
        found.push(`${at}: optional is ${String(reference.optional ?? false)}, not ${String(optional)}`);
    }
  }
  return found;
}

/**
 * The startup probe lets the process take `startMs` before its admin listener answers: a backend on
 * PostgreSQL opens it only after its migrations, which may wait DATABASE_MIGRATION_TIMEOUT_MS. A shorter
 * budget restarts the pod in the middle of a migration, again and again.
 */
export function startupBudgetViolations(deployment: IDeployment, startMs: number): string[] {
  return podSpec(deployment).containers.flatMap((container) => {
    const probe = container.startupProbe;
    const budgetMs =
      ((probe?.initialDelaySeconds ?? 0) + (probe?.periodSeconds ?? 10) * (probe?.failureThreshold ?? 3)) * 1000;
    return budgetMs > startMs
      ? []
      : [
          `${where(deployment, container.name)}: the startup probe gives up after ${budgetMs / 1000} s, not more ` +
            `than the ${startMs / 1000} s start-up may take`,
        ];
  });
}

/** The label kube-prometheus-stack's Grafana sidecar loads dashboards by, and its value. */
const DASHBOARD_LABEL = ['grafana_dashboard', '1'] as const;
/** `kubectl apply` keeps the applied object in an annotation, which is at most this long. */
const APPLY_ANNOTATION_BYTES = 262_144;

/** A ConfigMap the Grafana sidecar loads (its label) holds the dashboard, small enough for `kubectl apply`. */
export function dashboardViolations(configMaps: IConfigMap[], file: string, dashboard: string): string[] {
  const [label, value] = DASHBOARD_LABEL;
  const loaded = configMaps.filter((configMap) => configMap.metadata?.labels?.[label] === value);
  const holding = loaded.filter((configMap) => configMap.data?.[file] === dashboard);
  if (holding.length === 0)
    return [
      `no ConfigMap labelled ${label}: "${value}" holds ${file} as its source has it (labelled: ` +
        `${loaded.map((configMap) => configMap.metadata?.name).join(', ') || 'none'})`,
    ];
  return holding
    .filter((configMap) => Buffer.byteLength(JSON.stringify(configMap)) >= APPLY_ANNOTATION_BYTES)
    .map(
      (configMap) =>
        `ConfigMap/${configMap.metadata?.name} is too large for kubectl apply's annotation (` +
        `${APPLY_ANNOTATION_BYTES} bytes)`,
    );
}

/**
 * Every route from outside (Ingress, Gateway API HTTPRoute) names a host and leads to the gateway
 * Service's API port (the one targeting the container port named http), never the admin port.
 */
export function exposureViolations(ingresses: IIngress[], routes: IHTTPRoute[], services: IService[]): string[] {
  const found: string[] = [];
  const gateway = services.find((service) => service.metadata?.name === 'gateway');
  const apiPort = gateway?.spec?.ports?.find((port) => port.targetPort === 'http');
  if (gateway === undefined || apiPort === undefined)
    return ['no Service gateway with a port targeting the container port http'];
  const check = (at: string, service: string | undefined, port: number | string | undefined): void => {
    if (service !== 'gateway' || (port !== apiPort.port && port !== apiPort.name))
      found.push(
        `${at}: leads to Service ${String(service)} port ${String(port)}, not gateway's API port ${apiPort.port} (` +
          `${apiPort.name})`,
      );
  };
  for (const ingress of ingresses) {
    const at = `Ingress/${ingress.metadata?.name}`;
    const rules = ingress.spec?.rules ?? [];
    if (rules.length === 0 || rules.some((rule) => rule.host === undefined)) found.push(`${at}: a rule without a host`);
    if (ingress.spec?.defaultBackend !== undefined)
      check(
        `${at} default backend`,
        ingress.spec.defaultBackend.service?.name,
        ingress.spec.defaultBackend.service?.port?.number ?? ingress.spec.defaultBackend.service?.port?.name,
      );
    for (const path of rules.flatMap((rule) => rule.http?.paths ?? []))
      check(
        `${at} path ${path.path}`,
        path.backend.service?.name,
        path.backend.service?.port?.number ?? path.backend.service?.port?.name,
      );
  }
  for (const route of routes) {
    const at = `HTTPRoute/${route.metadata?.name}`;
    if ((route.spec?.hostnames ?? []).length === 0) found.push(`${at}: no hostnames`);
    if ((route.spec?.parentRefs ?? []).length === 0) found.push(`${at}: no parentRefs (attached to no Gateway)`);
    // Without a sectionName a route attaches to every listener of its Gateway that admits it, plain HTTP included.
    for (const parent of route.spec?.parentRefs ?? []) {
      if (parent.sectionName === undefined)
        found.push(`${at}: parentRef ${parent.name} names no listener (sectionName)`);
    }
    for (const reference of (route.spec?.rules ?? []).flatMap((rule) => rule.backendRefs ?? [])) {
      const kind = reference.kind ?? 'Service';
      check(
        `${at} backendRef`,
        kind === 'Service' && (reference.group ?? '') === '' ? reference.name : `${kind} ${reference.name}`,
        reference.port,
      );
    }
  }
  return found;
}
