/**
 * Each rendered object against its API's schema: the Kubernetes OpenAPI schemas (npm `kubernetes-models`),
 * the prometheus-operator CRDs' (`@kubernetes-models/prometheus-operator`) and the Gateway API CRDs'
 * (`@kubernetes-models/gateway-api`). A kind without a model
 * here is reported, so a new kind in deploy/kubernetes gets validated too once it is added below.
 */
import { HTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute';
import { PrometheusRule, ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Service, ServiceAccount } from 'kubernetes-models/v1';
import type { ManifestObject } from './kubectl.js';

interface Model {
  apiVersion: string;
  kind: string;
  new (data: never): { validate(): void };
}

const models: Model[] = [
  Namespace,
  ConfigMap,
  Service,
  ServiceAccount,
  Deployment,
  Job,
  HorizontalPodAutoscaler,
  PodDisruptionBudget,
  NetworkPolicy,
  Ingress,
  HTTPRoute,
  ServiceMonitor,
  PrometheusRule,
];

/** What is wrong with the object by its schema: an empty list when it validates. */
export function schemaViolations(object: ManifestObject): string[] {
  const where = `${object.kind}/${object.metadata.name}`;
  const model = models.find(
    (candidate) => candidate.apiVersion === object.apiVersion && candidate.kind === object.kind,
  );
  if (model === undefined) return [`${where}: no schema for ${object.apiVersion} ${object.kind}`];
  try {
    new model(object as never).validate();
    return [];
  } catch (err) {
    return [`${where}: ${(err as Error).message}`];
  }
}

/** The objects of one kind, typed by that kind's model (`Deployment.is`, `Service.is`, …). */
export function ofKind<T>(objects: readonly unknown[], is: (value: unknown) => value is T): T[] {
  return objects.filter(is);
}
