/**
 * The NetworkPolicies of deploy/kubernetes, both ways: each port admits its peers only (the admin ports
 * Prometheus's pods only), and each Deployment sends only where it must (DNS, the backend, PostgreSQL).
 * The manifests' own objects (test/kubernetes/fixtures.ts) pass; broken one way each, they are reported.
 */
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { describe, expect, it } from 'vitest';
import type { IJob } from 'kubernetes-models/batch/v1';
import { closedToIngressViolations, egressViolations, networkPolicyViolations } from './fleet-rules.js';
import { manifests, objectsIn } from './fixtures.js';
import { INGRESS_NAMESPACE, SMTP_PORT, egressAllowances, portAccess } from './network-access.js';

const policy = (policies: INetworkPolicy[], name: string): INetworkPolicy => {
  const found = policies.find((candidate) => candidate.metadata?.name === name);
  if (found === undefined) throw new Error(`no NetworkPolicy/${name}`);
  return found;
};
const PROMETHEUS = 'pods selected by {"app.kubernetes.io/name":"prometheus"} in the namespace monitoring';

describe('ingress', () => {
  it('of the manifests admits each port from its peers only', () => {
    const { deployments, policies } = manifests();
    expect(networkPolicyViolations(deployments, policies, portAccess)).toEqual([]);
  });

  it('reports pods no policy isolates', () => {
    const { deployments, policies } = manifests();
    const violations = networkPolicyViolations(
      deployments,
      policies.filter((candidate) => candidate.metadata?.name !== 'backend'),
      portAccess,
    );
    expect(violations).toEqual([
      'Deployment/backend port 8081: no NetworkPolicy isolates these pods, so every port is open to everyone',
      'Deployment/backend port 9465: no NetworkPolicy isolates these pods, so every port is open to everyone',
    ]);
  });

  it("reports the backend's API admitted from every pod of every namespace", () => {
    const { deployments, policies } = manifests();
    policy(policies, 'backend').spec!.ingress![0]!.from = [{ namespaceSelector: {} }];
    expect(networkPolicyViolations(deployments, policies, portAccess)).toEqual([
      expect.stringMatching(
        /^Deployment\/backend port 8081: NetworkPolicy\/backend admits \{"namespaceSelector":\{\}\}, not only pods selected by/,
      ),
    ]);
  });

  it("reports the backend's API admitted from an address range", () => {
    const { deployments, policies } = manifests();
    policy(policies, 'backend').spec!.ingress![0]!.from!.push({ ipBlock: { cidr: '10.0.0.0/8' } });
    expect(networkPolicyViolations(deployments, policies, portAccess)).toEqual([
      expect.stringContaining('admits {"ipBlock":{"cidr":"10.0.0.0/8"}}'),
    ]);
  });

  it('reports an admin port opened by a rule without ports', () => {
    const { deployments, policies } = manifests();
    delete policy(policies, 'gateway').spec!.ingress![0]!.ports;
    expect(networkPolicyViolations(deployments, policies, portAccess)).toEqual([
      `Deployment/gateway port 9464: NetworkPolicy/gateway admits ` +
        `{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"${INGRESS_NAMESPACE}"}}}, not only ` +
        `${PROMETHEUS}`,
    ]);
  });

  it("reports the gateway's API open to every source, and to another namespace than the ingress controller's", () => {
    const { deployments, policies } = manifests();
    delete policy(policies, 'gateway').spec!.ingress![0]!.from;
    expect(networkPolicyViolations(deployments, policies, portAccess)).toEqual([
      `Deployment/gateway port 8080: NetworkPolicy/gateway admits every source, not only the namespace ` +
        `${INGRESS_NAMESPACE}`,
    ]);
    policy(policies, 'gateway').spec!.ingress![0]!.from = [
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'default' } } },
    ];
    expect(networkPolicyViolations(deployments, policies, portAccess)).toEqual([
      `Deployment/gateway port 8080: NetworkPolicy/gateway admits ` +
        `{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"default"}}}, not only the namespace ` +
        `${INGRESS_NAMESPACE}`,
    ]);
  });

  it('reports an admin port admitted from every pod of the monitoring namespace', () => {
    const { deployments, policies } = manifests();
    delete policy(policies, 'backend').spec!.ingress![1]!.from![0]!.podSelector;
    expect(networkPolicyViolations(deployments, policies, portAccess)).toEqual([
      `Deployment/backend port 9465: NetworkPolicy/backend admits ` +
        `{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"monitoring"}}}, not only ${PROMETHEUS}`,
    ]);
  });

  it("reports an admin port admitted from Prometheus's label in every namespace", () => {
    const { deployments, policies } = manifests();
    delete policy(policies, 'gateway').spec!.ingress![1]!.from![0]!.namespaceSelector;
    expect(networkPolicyViolations(deployments, policies, portAccess)).toEqual([
      `Deployment/gateway port 9464: NetworkPolicy/gateway admits ` +
        `{"podSelector":{"matchLabels":{"app.kubernetes.io/name":"prometheus"}}}, not only ${PROMETHEUS}`,
    ]);
  });

  it('reports an admin port admitted from another namespace', () => {
    const { deployments, policies } = manifests();
    policy(policies, 'backend').spec!.ingress![1]!.from![0]!.namespaceSelector = {
      matchLabels: { 'kubernetes.io/metadata.name': 'default' },
    };
    expect(networkPolicyViolations(deployments, policies, portAccess)).toEqual([
      expect.stringContaining('Deployment/backend port 9465: NetworkPolicy/backend admits'),
    ]);
  });

  it('reports a port admitted from no one', () => {
    const { deployments, policies } = manifests();
    policy(policies, 'gateway').spec!.ingress!.pop();
    expect(networkPolicyViolations(deployments, policies, portAccess)).toEqual([
      `Deployment/gateway port 9464: not admitted at all (${PROMETHEUS} must reach it)`,
    ]);
  });
});

describe('egress', () => {
  const inMemory = egressAllowances({ postgres: false });
  const onPostgres = egressAllowances({ postgres: true });
  const withPostgres = (policies: INetworkPolicy[]): INetworkPolicy[] => [
    ...policies,
    ...(objectsIn('overlays/postgres/postgres-egress.yaml') as INetworkPolicy[]),
  ];

  it('of the base reaches DNS, and the backend from the gateway, only', () => {
    const { deployments, policies } = manifests();
    expect(egressViolations(deployments, policies, inMemory)).toEqual([]);
  });

  it('of overlays/postgres reaches PostgreSQL from the backend and the gateway too', () => {
    const { deployments, policies } = manifests();
    expect(egressViolations(deployments, withPostgres(policies), onPostgres)).toEqual([]);
    const database = 'one named server (an ipBlock of one address, or pods by namespace and labels)';
    expect(egressViolations(deployments, policies, onPostgres)).toEqual([
      `Deployment/gateway: cannot reach PostgreSQL (${database} on TCP 5432)`,
      `Deployment/backend: cannot reach PostgreSQL (${database} on TCP 5432)`,
    ]);
  });

  it('reports PostgreSQL reachable at any address, or a whole range, rather than at the database', () => {
    const { deployments, policies } = manifests();
    const [postgres] = objectsIn('overlays/postgres/postgres-egress.yaml') as INetworkPolicy[];
    const rule = postgres!.spec!.egress![0]!;
    delete rule.to;
    const database = 'one named server (an ipBlock of one address, or pods by namespace and labels)';
    expect(egressViolations(deployments, [...policies, postgres!], onPostgres)).toEqual([
      'Deployment/gateway: NetworkPolicy/postgres admits egress to anyone on TCP 5432, which it needs not reach',
      `Deployment/gateway: cannot reach PostgreSQL (${database} on TCP 5432)`,
      'Deployment/backend: NetworkPolicy/postgres admits egress to anyone on TCP 5432, which it needs not reach',
      `Deployment/backend: cannot reach PostgreSQL (${database} on TCP 5432)`,
    ]);
    rule.to = [{ ipBlock: { cidr: '10.0.0.0/8' } }];
    expect(egressViolations(deployments, [...policies, postgres!], onPostgres)).toContain(
      'Deployment/backend: NetworkPolicy/postgres admits egress to {"ipBlock":{"cidr":"10.0.0.0/8"}} on TCP 5432, ' +
        'which it needs not reach',
    );
    rule.to = [
      {
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'databases' } },
        podSelector: { matchLabels: { 'cnpg.io/cluster': 'router' } },
      },
    ];
    expect(egressViolations(deployments, [...policies, postgres!], onPostgres)).toEqual([]);
  });

  it("reports the gateway's notices shut in: no SMTP port, and webhooks that may reach private addresses", () => {
    const { deployments, policies } = manifests();
    const notices = policy(policies, 'gateway-notices').spec!.egress!;
    notices[0]!.ports = [{ port: 25, protocol: 'TCP' }];
    notices[1]!.to![0]!.ipBlock!.except = ['10.0.0.0/8'];
    expect(egressViolations(deployments, policies, inMemory)).toEqual([
      'Deployment/gateway: NetworkPolicy/gateway-notices admits egress to anyone on TCP 25, which it needs not reach',
      'Deployment/gateway: NetworkPolicy/gateway-notices admits egress to ' +
        '{"ipBlock":{"cidr":"0.0.0.0/0","except":["10.0.0.0/8"]}} on TCP 443, which it needs not reach',
      `Deployment/gateway: cannot reach the SMTP relay (anyone on TCP ${SMTP_PORT})`,
    ]);
  });

  it('reports pods whose egress no policy limits', () => {
    const { deployments, policies } = manifests();
    const unlimited = policies.filter((candidate) => candidate.metadata?.name !== 'allow-dns');
    for (const candidate of unlimited) candidate.spec!.policyTypes = ['Ingress'];
    expect(egressViolations(deployments, unlimited, inMemory)).toEqual([
      'Deployment/gateway: no NetworkPolicy limits its egress, so its pods reach everything',
      'Deployment/backend: no NetworkPolicy limits its egress, so its pods reach everything',
    ]);
  });

  it('reports DNS no rule admits', () => {
    const { deployments, policies } = manifests();
    expect(
      egressViolations(
        deployments,
        policies.filter((candidate) => candidate.metadata?.name !== 'allow-dns'),
        inMemory,
      ),
    ).toEqual([
      'Deployment/gateway: cannot reach DNS (pods selected by {"k8s-app":"kube-dns"} in the namespace kube-system ' +
        'on UDP 53, TCP 53)',
      'Deployment/backend: cannot reach DNS (pods selected by {"k8s-app":"kube-dns"} in the namespace kube-system ' +
        'on UDP 53, TCP 53)',
    ]);
  });

  it('reports a rule without ports, and one to anyone', () => {
    const { deployments, policies } = manifests();
    delete policy(policies, 'gateway').spec!.egress![0]!.ports;
    policy(policies, 'backend').spec!.egress = [{ ports: [{ port: 443 }] }];
    expect(egressViolations(deployments, policies, inMemory)).toEqual([
      'Deployment/gateway: NetworkPolicy/gateway admits egress on every port',
      'Deployment/gateway: cannot reach the backend (pods selected by {"app.kubernetes.io/name":"backend"} in the ' +
        'same namespace on TCP 8081)',
      'Deployment/backend: NetworkPolicy/backend admits egress to anyone on TCP 443, which it needs not reach',
    ]);
  });

  it('reports DNS opened to every namespace', () => {
    const { deployments, policies } = manifests();
    delete policy(policies, 'allow-dns').spec!.egress![0]!.to![0]!.namespaceSelector;
    const violations = egressViolations(deployments, policies, inMemory);
    expect(violations).toContain(
      'Deployment/gateway: NetworkPolicy/allow-dns admits egress to ' +
        '{"podSelector":{"matchLabels":{"k8s-app":"kube-dns"}}} on UDP 53, which it needs not reach',
    );
    expect(violations).toContain(
      'Deployment/backend: cannot reach DNS (pods selected by {"k8s-app":"kube-dns"} in the namespace kube-system ' +
        'on UDP 53, TCP 53)',
    );
  });
});

describe("the migration Job's pods", () => {
  const job = (): IJob =>
    objectsIn('overlays/postgres/migrations.yaml').find((object) => object.kind === 'Job') as IJob;
  const own = (): INetworkPolicy[] =>
    objectsIn('overlays/postgres/migrations.yaml').filter(
      (object) => object.kind === 'NetworkPolicy',
    ) as INetworkPolicy[];

  it('admit no one', () => {
    expect(closedToIngressViolations([job()], own())).toEqual([]);
  });

  it('are reported open without their policy, or with a rule that admits someone', () => {
    expect(closedToIngressViolations([job()], [])).toEqual([
      'Job/migrations: no NetworkPolicy isolates its pods for ingress',
    ]);
    const [policy] = own();
    policy!.spec!.ingress = [{ from: [{ podSelector: {} }] }];
    expect(closedToIngressViolations([job()], [policy!])).toEqual([
      'Job/migrations: NetworkPolicy/migrations admits ingress',
    ]);
  });
});
