/**
 * The manifests' own objects read from deploy/kubernetes without kustomize (so the rule tests run without
 * kubectl), fresh for each test to break: what kustomize adds (the images' tag, the policy ConfigMap, the
 * monitoring labels) is added here the same way.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { Service, ServiceAccount, type IConfigMap, type IContainer } from 'kubernetes-models/v1';
import { parse, parseAllDocuments } from 'yaml';
import { repoRoot } from '../../scripts/paths.mjs';
import type { ManifestObject } from './kubectl.js';
import type { ImageSetting } from './operator-rules.js';
import { podSpec, type PolicyMount } from './pod-rules.js';
import { ofKind } from './schemas.js';

export function objectsIn(file: string): ManifestObject[] {
  return parseAllDocuments(readFileSync(join(repoRoot, 'deploy/kubernetes', file), 'utf8')).map(
    (document) => document.toJS() as ManifestObject,
  );
}

/** The kustomization (a component) that tags the images, for the base and the migration Job alike. */
export const IMAGES = 'components/images/kustomization.yaml';

/** The `images:` of a kustomization under deploy/kubernetes. */
export function imageSettings(kustomization: string): ImageSetting[] {
  return (
    (parse(readFileSync(join(repoRoot, 'deploy/kubernetes', kustomization), 'utf8')) as { images?: ImageSetting[] })
      .images ?? []
  );
}

/** Fresh copies of the manifests' objects for each test to break. */
export function manifests() {
  const raw = ['base/gateway.yaml', 'base/backend.yaml', 'base/network-policies.yaml'].flatMap(objectsIn);
  const base = structuredClone(raw);
  const deployments = ofKind(base, Deployment.is);
  // The tag the images component gives each image.
  const images = imageSettings(IMAGES);
  for (const found of deployments.flatMap((deployment) => podSpec(deployment).containers)) {
    const setting = images.find((candidate) => candidate.name === found.image);
    if (setting?.newTag !== undefined) found.image = `${setting.name}:${setting.newTag}`;
  }
  const named = (name: string): IDeployment => {
    const found = deployments.find((candidate) => candidate.metadata?.name === name);
    if (found === undefined) throw new Error(`no Deployment/${name}`);
    return found;
  };
  const policy = readFileSync(join(repoRoot, 'ops/versions.json'), 'utf8');
  const configMap: IConfigMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'version-policy' },
    data: { 'versions.json': policy },
  };
  // The monitoring kustomization adds kube-prometheus-stack's release label.
  const monitors = objectsIn('monitoring/service-monitors.yaml').map(
    (monitor) =>
      ({
        ...monitor,
        metadata: { ...monitor.metadata, labels: { release: 'kube-prometheus-stack' } },
      }) as unknown as IServiceMonitor,
  );
  return {
    /** The Deployments as the files have them, before the kustomization's images: */
    rawDeployments: ofKind(raw, Deployment.is),
    base,
    deployments,
    gateway: named('gateway'),
    backend: named('backend'),
    services: ofKind(base, Service.is),
    policies: ofKind(base, NetworkPolicy.is),
    autoscalers: ofKind(base, HorizontalPodAutoscaler.is),
    budgets: ofKind(base, PodDisruptionBudget.is),
    accounts: ofKind(base, ServiceAccount.is),
    configMaps: [configMap],
    policyMount: {
      variable: 'API_VERSIONS_FILE',
      configMapName: 'version-policy',
      key: 'versions.json',
      content: policy,
    } satisfies PolicyMount,
    monitors,
  };
}

export function container(deployment: IDeployment): IContainer {
  const found = podSpec(deployment).containers[0];
  if (found === undefined) throw new Error(`Deployment/${deployment.metadata?.name} has no container`);
  return found;
}

export function setEnv(deployment: IDeployment, name: string, value: string | undefined): void {
  const target = container(deployment);
  target.env = (target.env ?? []).filter((variable) => variable.name !== name);
  if (value !== undefined) target.env.push({ name, value });
}
