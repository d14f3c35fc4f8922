/**
 * The rules every pod of deploy/kubernetes follows (docs/deployment.md#kubernetes), one function per rule.
 * Each returns what is wrong, empty when nothing is, so test/kubernetes/rules.test.ts can feed it a
 * deliberately broken object and see the rule report it.
 */
import type { IDeployment } from 'kubernetes-models/apps/v1';
import type { IJob } from 'kubernetes-models/batch/v1';
import type { IConfigMap, IContainer, IPodSpec } from 'kubernetes-models/v1';

/** What runs pods from a template: the processes' Deployments and the migration Job. */
export type Workload = IDeployment | IJob;

/** The pod template's spec; a workload without one is reported by the schema check. */
export function podSpec(workload: Workload): IPodSpec {
  const spec = workload.spec?.template.spec;
  if (spec === undefined) throw new Error(`${workloadName(workload)} has no pod template spec`);
  return spec;
}

/** `Deployment/gateway`, `Job/migrations`. */
export function workloadName(workload: Workload): string {
  return `${workload.kind}/${workload.metadata?.name}`;
}

/** Every container of the pod, its init containers first. */
export function containersOf(workload: Workload): IContainer[] {
  const spec = podSpec(workload);
  return [...(spec.initContainers ?? []), ...spec.containers];
}

function label(workload: Workload, container?: IContainer): string {
  return workloadName(workload) + (container === undefined ? '' : ` container ${container.name}`);
}

/** A literal `env` value (undefined when unset or taken from a Secret or ConfigMap). */
export function envValue(container: IContainer, name: string): string | undefined {
  return container.env?.find((variable) => variable.name === name)?.value;
}

/** A container port given by number or by name, as a number. */
function containerPort(container: IContainer, port: number | string): number | undefined {
  return typeof port === 'number' ? port : container.ports?.find((candidate) => candidate.name === port)?.containerPort;
}

/**
 * Pod Security Standard "restricted" (non-root with a numeric user the kubelet can verify, no privilege
 * escalation, every capability dropped, RuntimeDefault seccomp, nothing from the host) plus a read-only root.
 */
export function podSecurityViolations(deployment: Workload): string[] {
  const spec = podSpec(deployment);
  const pod = spec.securityContext ?? {};
  const found: string[] = [];
  if (spec.hostNetwork === true || spec.hostPID === true || spec.hostIPC === true)
    found.push(`${label(deployment)}: shares a host namespace`);
  for (const volume of spec.volumes ?? []) {
    if (volume.hostPath !== undefined) found.push(`${label(deployment)}: volume ${volume.name} is a hostPath`);
  }
  for (const container of containersOf(deployment)) {
    const own = container.securityContext ?? {};
    const where = label(deployment, container);
    if ((own.runAsNonRoot ?? pod.runAsNonRoot) !== true) found.push(`${where}: runAsNonRoot is not true`);
    const user = own.runAsUser ?? pod.runAsUser;
    if (user === undefined || user === 0)
      found.push(
        `${where}: runAsUser must be a non-zero number (the image names its user, which the kubelet cannot verify)`,
      );
    if ((own.seccompProfile ?? pod.seccompProfile)?.type !== 'RuntimeDefault')
      found.push(`${where}: seccompProfile is not RuntimeDefault`);
    if (own.allowPrivilegeEscalation !== false) found.push(`${where}: allowPrivilegeEscalation is not false`);
    if (own.privileged === true) found.push(`${where}: privileged`);
    if (!(own.capabilities?.drop ?? []).includes('ALL')) found.push(`${where}: capabilities do not drop ALL`);
    if ((own.capabilities?.add ?? []).length > 0)
      found.push(`${where}: adds capabilities ${own.capabilities?.add?.join(', ')}`);
    if (own.readOnlyRootFilesystem !== true) found.push(`${where}: readOnlyRootFilesystem is not true`);
    for (const port of container.ports ?? []) {
      if (port.hostPort !== undefined) found.push(`${where}: port ${port.containerPort} has a hostPort`);
    }
  }
  return found;
}

/** What the probes must reach: the process's admin listener, on every interface of the pod. */
export interface AdminListener {
  /** The admin port by config.ts's default. */
  port: number;
  /** The variables config.ts reads for the admin listener's port and address. */
  portVariable: string;
  hostVariable: string;
}

/**
 * Liveness on /healthz, readiness on /readyz, a startup probe, all on the admin port (the container port
 * named `admin`, which is what the process listens on: the port variable says the same and the host
 * variable is 0.0.0.0).
 */
export function probeViolations(deployment: IDeployment, admin: AdminListener): string[] {
  const found: string[] = [];
  for (const container of podSpec(deployment).containers) {
    const where = label(deployment, container);
    if (containerPort(container, 'admin') !== admin.port)
      found.push(`${where}: no container port named admin = ${admin.port}`);
    if (envValue(container, admin.portVariable) !== String(admin.port))
      found.push(`${where}: ${admin.portVariable} is not "${admin.port}"`);
    if (envValue(container, admin.hostVariable) !== '0.0.0.0')
      found.push(`${where}: ${admin.hostVariable} is not 0.0.0.0 (the kubelet probes from outside the pod)`);
    const probes = [
      ['livenessProbe', container.livenessProbe, '/healthz'],
      ['readinessProbe', container.readinessProbe, '/readyz'],
      ['startupProbe', container.startupProbe, undefined],
    ] as const;
    for (const [kind, probe, path] of probes) {
      const get = probe?.httpGet;
      if (get === undefined) {
        found.push(`${where}: no ${kind} (HTTP GET)`);
        continue;
      }
      if (containerPort(container, get.port) !== admin.port)
        found.push(`${where}: ${kind} is on port ${get.port}, not the admin port ${admin.port}`);
      if (path !== undefined && get.path !== path) found.push(`${where}: ${kind} path is ${get.path}, not ${path}`);
    }
  }
  return found;
}

/** CPU and memory, requested and limited, for every container. */
export function resourceViolations(deployment: Workload): string[] {
  const found: string[] = [];
  for (const container of containersOf(deployment)) {
    for (const bound of ['requests', 'limits'] as const) {
      for (const resource of ['cpu', 'memory']) {
        if (container.resources?.[bound]?.[resource] === undefined)
          found.push(`${label(deployment, container)}: no ${resource} ${bound}`);
      }
    }
  }
  return found;
}

/**
 * SHUTDOWN_DELAY_MS set, and the grace period above the delay plus the process's drain, or the kubelet kills
 * a pod that is still draining.
 */
export function shutdownViolations(deployment: IDeployment, drainMs: number): string[] {
  const found: string[] = [];
  const graceMs = (podSpec(deployment).terminationGracePeriodSeconds ?? 30) * 1_000;
  for (const container of podSpec(deployment).containers) {
    const where = label(deployment, container);
    const delay = envValue(container, 'SHUTDOWN_DELAY_MS');
    if (delay === undefined || !/^\d+$/.test(delay) || Number(delay) === 0) {
      found.push(
        `${where}: SHUTDOWN_DELAY_MS is not a positive number of milliseconds (endpoints would still route to a ` +
          `closed listener)`,
      );
    } else if (graceMs <= Number(delay) + drainMs) {
      found.push(
        `${where}: terminationGracePeriodSeconds ${graceMs / 1_000} is not above SHUTDOWN_DELAY_MS ${delay} ms + ` +
          `${drainMs} ms of drain`,
      );
    }
  }
  return found;
}

/** No subPath mount: the kubelet never updates one. */
export function subPathViolations(deployment: Workload): string[] {
  return containersOf(deployment).flatMap((container) =>
    (container.volumeMounts ?? [])
      .filter((mount) => mount.subPath !== undefined || mount.subPathExpr !== undefined)
      .map((mount) => `${label(deployment, container)}: ${mount.mountPath} is a subPath mount`),
  );
}

/** Every image pinned by a tag other than `latest`, or by digest. */
export function imageViolations(deployment: Workload): string[] {
  const found: string[] = [];
  for (const container of containersOf(deployment)) {
    const image = container.image ?? '';
    if (image.includes('@sha256:')) continue;
    const tag = /:([^/:]+)$/.exec(image)?.[1];
    if (tag === undefined || tag === 'latest')
      found.push(`${label(deployment, container)}: image ${JSON.stringify(image)} is not pinned (no tag or latest)`);
  }
  return found;
}

/** Where the version policy comes from in the pod. */
export interface PolicyMount {
  /** The variable naming the policy file (API_VERSIONS_FILE). */
  variable: string;
  /** The ConfigMap's name as written in the kustomization: a generated hash suffix would differ. */
  configMapName: string;
  key: string;
  /** What the ConfigMap must hold under `key` (the policy file's content). */
  content: string;
}

/**
 * The policy file is `<mountPath>/<key>` of the ConfigMap mounted as a whole directory, and that ConfigMap is
 * rendered under its own name (no hash suffix) with the policy's content.
 */
export function policyMountViolations(
  deployment: IDeployment,
  configMaps: IConfigMap[],
  policy: PolicyMount,
): string[] {
  const found: string[] = [];
  const spec = podSpec(deployment);
  const configMap = configMaps.find((candidate) => candidate.metadata?.name === policy.configMapName);
  if (configMap === undefined) {
    const names = configMaps.map((candidate) => candidate.metadata?.name).join(', ');
    found.push(
      `no ConfigMap named ${policy.configMapName} (rendered: ${names || 'none'}; a name hash suffix breaks the live ` +
        `update)`,
    );
  } else if (configMap.data?.[policy.key] !== policy.content) {
    found.push(`ConfigMap/${policy.configMapName} ${policy.key} differs from the policy file`);
  }
  const volume = spec.volumes?.find((candidate) => candidate.configMap?.name === policy.configMapName);
  if (volume === undefined) return [...found, `${label(deployment)}: no volume of ConfigMap ${policy.configMapName}`];
  if (volume.configMap?.items !== undefined)
    found.push(`${label(deployment)}: volume ${volume.name} lists items; mount the whole ConfigMap`);
  for (const container of spec.containers) {
    const where = label(deployment, container);
    const mount = container.volumeMounts?.find((candidate) => candidate.name === volume.name);
    const file = envValue(container, policy.variable);
    if (mount === undefined) found.push(`${where}: does not mount volume ${volume.name}`);
    else if (mount.subPath !== undefined)
      found.push(`${where}: mounts ${volume.name} with subPath, which never updates`);
    else if (file !== `${mount.mountPath.replace(/\/$/, '')}/${policy.key}`) {
      found.push(
        `${where}: ${policy.variable} is ${JSON.stringify(file)}, not ${mount.mountPath}/${policy.key} in the ` +
          `mounted directory`,
      );
    }
  }
  return found;
}

/** Variables Node itself reads, not config.ts: the heap cap goes in NODE_OPTIONS. */
const NODE_VARIABLES = new Set(['NODE_OPTIONS']);

/**
 * Every variable set on a container is one the process's config.ts reads (or Node's own NODE_OPTIONS), and Kubernetes
 * injects none of its
 * own: service links would set `<SERVICE>_PORT=tcp://…` for each Service of the namespace, and the Services
 * `gateway` and `backend` make those GATEWAY_PORT and BACKEND_PORT, variables the processes read.
 */
export function envViolations(deployment: Workload, readNames: ReadonlySet<string>): string[] {
  const found =
    podSpec(deployment).enableServiceLinks === false
      ? []
      : [`${label(deployment)}: enableServiceLinks is not false (it injects <SERVICE>_PORT=tcp://… variables)`];
  for (const container of containersOf(deployment)) {
    for (const variable of container.env ?? []) {
      if (!readNames.has(variable.name) && !NODE_VARIABLES.has(variable.name))
        found.push(`${label(deployment, container)}: ${variable.name} is not read by the process's config.ts`);
    }
  }
  return found;
}
