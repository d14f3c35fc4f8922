/**
 * Each rule of test/kubernetes/operator-rules.ts, seen failing: the manifests' own objects
 * (test/kubernetes/fixtures.ts) and files pass it, and the same broken one way each make it report that.
 */
import type { IHTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute';
import type { IDeployment } from 'kubernetes-models/apps/v1';
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1';
import type { IConfigMap } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { IMAGES, container, imageSettings, manifests, objectsIn, setEnv } from './fixtures.js';
import {
  autoscalingViolations,
  builtImageNames,
  dashboardViolations,
  exposureViolations,
  imageNamingViolations,
  mebibytes,
  millicores,
  memoryViolations,
  secretViolations,
  startupBudgetViolations,
  type MeasuredMemory,
} from './operator-rules.js';
import { measuredMemory, measuredMillicoresPer1000Rps, packageVersion } from './measured.js';
import { readRepoFile } from '../support/repo-file.js';

describe('image names', () => {
  const built = (): Map<string, string> => builtImageNames(readRepoFile('Dockerfile'));

  it("are the Dockerfile's documented build names, tagged in the images component's images: alone", () => {
    expect([...built().entries()]).toEqual([
      ['gateway', 'version-router-gateway'],
      ['backend', 'version-router-backend'],
    ]);
    expect(imageNamingViolations(manifests().rawDeployments, built(), imageSettings(IMAGES), packageVersion())).toEqual(
      [],
    );
  });

  it('report a name no documented build gives, and a tag in the Deployment', () => {
    const { rawDeployments } = manifests();
    const [gateway, backend] = rawDeployments;
    container(gateway!).image = 'version-router/gateway:0.1.0';
    container(backend!).image = 'version-router-backend:0.1.0';
    const violations = imageNamingViolations(rawDeployments, built(), imageSettings(IMAGES), packageVersion());
    expect(violations).toEqual([
      'Deployment/gateway container gateway: image "version-router/gateway:0.1.0", not version-router-gateway as ' +
        '`docker build --target gateway -t version-router-gateway` names it (tag, registry and digest go in the ' +
        "kustomization's images:)",
      "Deployment/gateway container gateway: 0 entries for version-router/gateway:0.1.0 in the kustomization's " +
        'images:, not 1',
      'Deployment/backend container backend: image "version-router-backend:0.1.0", not version-router-backend as ' +
        '`docker build --target backend -t version-router-backend` names it (tag, registry and digest go in the ' +
        "kustomization's images:)",
      "Deployment/backend container backend: 0 entries for version-router-backend:0.1.0 in the kustomization's " +
        'images:, not 1',
    ]);
  });

  it("report a tag other than package.json's version, and a second place setting the image", () => {
    const { rawDeployments } = manifests();
    const images = [
      ...imageSettings(IMAGES),
      { name: 'version-router-backend', newName: 'registry.example.com/backend' },
    ];
    images[0] = { ...images[0]!, newTag: 'latest' };
    expect(imageNamingViolations(rawDeployments, built(), images, packageVersion())).toEqual([
      `Deployment/gateway container gateway: the kustomization's images: sets ` +
        `{"name":"version-router-gateway","newTag":"latest"}, not newTag ${packageVersion()} alone`,
      "Deployment/backend container backend: 2 entries for version-router-backend in the kustomization's images:, " +
        'not 1',
    ]);
  });

  it('ignore a tag on the build command line', () => {
    expect([
      ...builtImageNames('#   docker build --target gateway -t version-router-gateway:0.1.0 .\n').entries(),
    ]).toEqual([['gateway', 'version-router-gateway']]);
  });
});

describe('memory', () => {
  it.each([
    ['160Mi', 160],
    ['1Gi', 1024],
    ['128M', 128e6 / 1024 / 1024],
    ['134217728', 128],
    ['lots', undefined],
  ])('reads the quantity %s as %s MiB', (quantity, expected) => {
    expect(mebibytes(quantity)).toBe(expected);
  });

  it('of the manifests is requested at the measured peak at least, with a heap cap that fits the limit', () => {
    expect(
      manifests().deployments.flatMap((deployment) => memoryViolations(deployment, measuredMemory('embedded'))),
    ).toEqual([]);
  });

  it('reports a request below the measured peak (128Mi for a gateway that peaked at 152 MiB)', () => {
    const { gateway } = manifests();
    const measured: Record<string, MeasuredMemory> = { gateway: { peakMiB: 152, outsideOldSpaceMiB: 90 } };
    container(gateway).resources!.requests!.memory = '128Mi';
    expect(memoryViolations(gateway, measured)).toEqual([
      'Deployment/gateway container gateway: memory request 128Mi is below the measured peak of 152 MiB',
    ]);
  });

  it('reports no heap cap, and a cap the limit cannot hold', () => {
    const { gateway, backend } = manifests();
    setEnv(gateway, 'NODE_OPTIONS', undefined);
    container(backend).resources!.limits!.memory = '300Mi';
    expect([
      ...memoryViolations(gateway, measuredMemory('embedded')),
      ...memoryViolations(backend, measuredMemory('embedded')),
    ]).toEqual([
      'Deployment/gateway container gateway: NODE_OPTIONS sets no --max-old-space-size',
      `Deployment/backend container backend: --max-old-space-size=256 plus the measured ` +
        `${measuredMemory('embedded').backend!.outsideOldSpaceMiB} MiB outside the old space exceeds the memory ` +
        `limit 300Mi`,
    ]);
  });

  it('reports a process nobody measured', () => {
    const { gateway } = manifests();
    expect(memoryViolations(gateway, {})).toEqual([
      'Deployment/gateway container gateway: no measurement of its memory',
    ]);
  });
});

describe('CPU and autoscaling', () => {
  it.each([
    ['500m', 500],
    ['1', 1000],
    ['0.25', 250],
    ['lots', undefined],
  ])('reads the quantity %s as %s millicores', (quantity, expected) => {
    expect(millicores(quantity)).toBe(expected);
  });

  it('hold the gateway to a measured target with room to its limit', () => {
    const { gateway, autoscalers } = manifests();
    for (const configuration of ['embedded', 'postgres'] as const) {
      expect(measuredMillicoresPer1000Rps(configuration).gateway).toBeGreaterThan(0);
      expect(
        autoscalingViolations(gateway, autoscalers[0]!, measuredMillicoresPer1000Rps(configuration).gateway),
      ).toEqual([]);
    }
  });

  it('report a target too close to the limit, no measurement, and no target at all', () => {
    const { gateway, autoscalers } = manifests();
    const [autoscaler] = autoscalers;
    autoscaler!.spec.metrics![0]!.resource!.target.averageUtilization = 150;
    expect(autoscalingViolations(gateway, autoscaler!, undefined)).toEqual([
      'Deployment/gateway container gateway: no measurement of its CPU per request',
      "Deployment/gateway container gateway: the autoscaler's target of 750m per replica leaves less than twice " +
        'that below the CPU limit of 1000m',
    ]);
    delete container(gateway).resources!.requests!.cpu;
    expect(autoscalingViolations(gateway, autoscaler!, 500)).toEqual([
      'Deployment/gateway container gateway: no CPU request, limit or autoscaling target on CPU utilization',
    ]);
  });
});

describe('Secrets', () => {
  const adminToken = { variable: 'ADMIN_TOKEN', secret: 'version-router-admin', key: 'token', optional: false };

  it('give both processes ADMIN_TOKEN, required', () => {
    expect(manifests().deployments.flatMap((deployment) => secretViolations(deployment, [adminToken]))).toEqual([]);
  });

  it.each(['backend', 'gateway'])('give the PostgreSQL overlay its DATABASE_URL for the %s, required', (name) => {
    const patch = objectsIn(`overlays/postgres/${name}-database.yaml`)[0] as unknown as IDeployment;
    const databaseUrl = { variable: 'DATABASE_URL', secret: 'version-router-database', key: 'url', optional: false };
    expect(secretViolations(patch, [databaseUrl])).toEqual([]);
  });

  it('report a literal value, another Secret, and an optional one that would let pods start without it', () => {
    const { gateway, backend } = manifests();
    setEnv(gateway, 'ADMIN_TOKEN', 'hunter2');
    container(backend).env!.find((variable) => variable.name === 'ADMIN_TOKEN')!.valueFrom!.secretKeyRef!.optional =
      true;
    const found = [
      ...secretViolations(gateway, [adminToken]),
      ...secretViolations(backend, [adminToken, { ...adminToken, key: 'admin-token' }]),
    ];
    expect(found).toEqual([
      'Deployment/gateway container gateway: ADMIN_TOKEN is not taken from a Secret',
      'Deployment/backend container backend: ADMIN_TOKEN: optional is true, not false',
      'Deployment/backend container backend: ADMIN_TOKEN comes from Secret version-router-admin key token, not ' +
        'version-router-admin key admin-token',
    ]);
  });
});

describe('the startup probe', () => {
  it("reports one that gives up before a start-up's bound (the base's 60 s against a 10-minute migration)", () => {
    const { backend } = manifests();
    expect(startupBudgetViolations(backend, 30_000)).toEqual([]);
    expect(startupBudgetViolations(backend, 615_000)).toEqual([
      'Deployment/backend container backend: the startup probe gives up after 60 s, not more than the 615 s ' +
        'start-up may take',
    ]);
  });

  it('counts the defaults (10 s × 3) and the initial delay', () => {
    const { backend } = manifests();
    container(backend).startupProbe = { httpGet: { path: '/healthz', port: 'admin' }, initialDelaySeconds: 5 };
    expect(startupBudgetViolations(backend, 35_000)).toEqual([
      'Deployment/backend container backend: the startup probe gives up after 35 s, not more than the 35 s start-up ' +
        'may take',
    ]);
  });
});

describe('the Grafana dashboard', () => {
  const source = (): string => readRepoFile('ops/grafana/dashboards/api-versions.json');
  const configMap = (dashboard: string, labels: Record<string, string> = { grafana_dashboard: '1' }): IConfigMap => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'version-router-dashboard', labels },
    data: { 'api-versions.json': dashboard },
  });

  it('is found in a ConfigMap the sidecar loads', () => {
    expect(dashboardViolations([configMap(source())], 'api-versions.json', source())).toEqual([]);
  });

  it('reports one without the label, or with other content', () => {
    expect(
      dashboardViolations([configMap(source(), { grafana_dashboard: 'true' })], 'api-versions.json', source()),
    ).toEqual([
      'no ConfigMap labelled grafana_dashboard: "1" holds api-versions.json as its source has it (labelled: none)',
    ]);
    expect(dashboardViolations([configMap('{}')], 'api-versions.json', source())).toEqual([
      'no ConfigMap labelled grafana_dashboard: "1" holds api-versions.json as its source has it (labelled: ' +
        'version-router-dashboard)',
    ]);
  });

  it('reports one too large for kubectl apply', () => {
    const large = ' '.repeat(300_000);
    expect(dashboardViolations([configMap(large)], 'api-versions.json', large)).toEqual([
      "ConfigMap/version-router-dashboard is too large for kubectl apply's annotation (262144 bytes)",
    ]);
  });
});

describe('exposure', () => {
  const ingresses = (): IIngress[] => objectsIn('exposure/ingress/ingress.yaml') as IIngress[];
  const routes = (): IHTTPRoute[] => objectsIn('exposure/gateway-api/http-route.yaml') as unknown as IHTTPRoute[];

  it("of the examples leads to the gateway's API port", () => {
    expect(exposureViolations(ingresses(), routes(), manifests().services)).toEqual([]);
  });

  it('reports the admin port, another Service, and no host', () => {
    const [ingress] = ingresses();
    const [route] = routes();
    ingress!.spec!.rules![0]!.http!.paths[0]!.backend.service!.port = { name: 'admin' };
    delete ingress!.spec!.rules![0]!.host;
    route!.spec.rules![0]!.backendRefs![0]!.name = 'backend';
    route!.spec.hostnames = [];
    expect(exposureViolations([ingress!], [route!], manifests().services)).toEqual([
      'Ingress/version-router: a rule without a host',
      "Ingress/version-router path /: leads to Service gateway port admin, not gateway's API port 8080 (http)",
      'HTTPRoute/version-router: no hostnames',
      "HTTPRoute/version-router backendRef: leads to Service backend port 8080, not gateway's API port 8080 (http)",
    ]);
  });

  it('reports a route attached to no Gateway', () => {
    const [route] = routes();
    route!.spec.parentRefs = [];
    expect(exposureViolations([], [route!], manifests().services)).toEqual([
      'HTTPRoute/version-router: no parentRefs (attached to no Gateway)',
    ]);
  });

  it('reports a route on every listener of its Gateway', () => {
    const [route] = routes();
    delete route!.spec.parentRefs![0]!.sectionName;
    expect(exposureViolations([], [route!], manifests().services)).toEqual([
      'HTTPRoute/version-router: parentRef public names no listener (sectionName)',
    ]);
  });
});
