/**
 * Who may reach whom in deploy/kubernetes (docs/deployment.md, Kubernetes): the ports each Deployment
 * accepts traffic on and from whom, and where each may send to. Shared by the tests on the rendered
 * manifests and on the files.
 */
import type { EgressAllowance, PortAccess } from './fleet-rules.js';
import { processes } from './processes.js';

const { gateway, backend } = processes;
/** Prometheus's pods as the Prometheus Operator labels them, in kube-prometheus-stack's usual namespace. */
const prometheusPods = {
  kind: 'pods',
  namespace: 'monitoring',
  labels: { 'app.kubernetes.io/name': 'prometheus' },
} as const;
const gatewayPods = { kind: 'pods', labels: { 'app.kubernetes.io/name': 'gateway' } } as const;
const backendPods = { kind: 'pods', labels: { 'app.kubernetes.io/name': 'backend' } } as const;
/** The cluster's DNS pods (CoreDNS keeps the kube-dns label). */
const dnsPods = { kind: 'pods', namespace: 'kube-system', labels: { 'k8s-app': 'kube-dns' } } as const;

/**
 * Where the proxies in front of the gateway's API run: the namespace of the Gateway that the HTTPRoute example
 * (deploy/kubernetes/exposure/gateway-api) attaches to, which base/network-policies.yaml names for the gateway's API.
 */
export const INGRESS_NAMESPACE = 'gateway-system';

/**
 * The API of the gateway from the Gateway API proxies, the backend's from the gateway, the admin ports from Prometheus.
 */
export const portAccess: PortAccess[] = [
  {
    deployment: 'gateway',
    port: gateway.apiPort,
    portName: 'http',
    allowed: { kind: 'namespace', name: INGRESS_NAMESPACE },
  },
  { deployment: 'gateway', port: gateway.admin.port, portName: 'admin', allowed: prometheusPods },
  { deployment: 'backend', port: backend.apiPort, portName: 'http', allowed: gatewayPods },
  { deployment: 'backend', port: backend.admin.port, portName: 'admin', allowed: prometheusPods },
];

const dns: EgressAllowance = {
  what: 'DNS',
  peer: dnsPods,
  ports: [
    { port: 53, protocol: 'UDP' },
    { port: 53, protocol: 'TCP' },
  ],
};

/** The SMTP relay of SMTP_URL, wherever it runs (the port of the URL docs/deployment.md puts in the Secret). */
export const SMTP_PORT = 587;
const notices: EgressAllowance[] = [
  { what: 'the SMTP relay', peer: { kind: 'anyone' }, ports: [{ port: SMTP_PORT }] },
  { what: "consumers' webhooks", peer: { kind: 'public' }, ports: [{ port: 443 }] },
];

/** The one PostgreSQL server the operator names (its address, or its pods), on its port. */
const postgresServer: EgressAllowance = { what: 'PostgreSQL', peer: { kind: 'host' }, ports: [{ port: 5432 }] };

/**
 * DNS for all, the backend and its notices' e-mail and webhooks for the gateway, and the database (on its port, at its
 * address only) for both processes and the migration Job when they keep users and consumers there.
 */
export function egressAllowances({ postgres }: { postgres: boolean }): Record<string, EgressAllowance[]> {
  const toBackend: EgressAllowance = { what: 'the backend', peer: backendPods, ports: [{ port: backend.apiPort }] };
  return {
    gateway: postgres ? [dns, toBackend, ...notices, postgresServer] : [dns, toBackend, ...notices],
    backend: postgres ? [dns, postgresServer] : [dns],
    migrations: [dns, postgresServer],
  };
}
