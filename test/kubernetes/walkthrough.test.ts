/**
 * docs/deployment.md#kubernetes-on-kind runs as written, as far as that can be known without a cluster: its
 * shell blocks parse, and they build, load and apply what the manifests name and create the Secrets the
 * pods read (test/kubernetes/walkthrough.ts). Every Secret command of the Kubernetes section keeps its value
 * out of the shell's history.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/paths.mjs';
import { manifests, objectsIn } from './fixtures.js';
import { SMTP_PORT } from './network-access.js';
import { podSpec } from './pod-rules.js';
import { describeWithTool } from '../../platform/test/support/tools.js';
import { render } from './kubectl.js';
import {
  commandsOf,
  shellBlocks,
  upgradeViolations,
  walkthroughViolations,
  type Named,
  type UpgradeTarget,
} from './walkthrough.js';

const DOC = 'docs/deployment.md';
const KIND = '### Kubernetes on kind';
const document = (): string => readFileSync(join(repoRoot, DOC), 'utf8');

/** What the base manifests name (images as the kustomization tags them, the Secrets the pods read). */
function named(): Named {
  const { deployments } = manifests();
  const containers = deployments.flatMap((deployment) => podSpec(deployment).containers);
  const secrets = containers.flatMap((container) =>
    (container.env ?? []).flatMap((variable) => variable.valueFrom?.secretKeyRef ?? []),
  );
  const namespace = objectsIn('base/namespace.yaml')[0]?.metadata.name ?? '';
  return {
    images: new Map(containers.map((container) => [container.name, container.image ?? ''])),
    secrets: [
      ...new Map(
        secrets.map((reference) => [
          `${reference.name}/${reference.key}`,
          { name: reference.name ?? '', key: reference.key },
        ]),
      ).values(),
    ],
    namespace,
    kustomizations: [
      'deploy/kubernetes/base',
      'deploy/kubernetes/overlays/postgres',
      'deploy/kubernetes/overlays/production',
      'deploy/kubernetes/monitoring',
      'deploy/kubernetes/exposure/ingress',
      'deploy/kubernetes/exposure/gateway-api',
    ],
  };
}

describe(`the kind walkthrough (${DOC})`, () => {
  it('has shell blocks that bash parses', () => {
    const blocks = shellBlocks(document(), KIND);
    expect(blocks.length).toBeGreaterThan(0);
    for (const block of blocks) {
      const result = spawnSync('bash', ['-n'], { input: block, encoding: 'utf8' });
      expect(result.stderr, block).toBe('');
      expect(result.status, block).toBe(0);
    }
  });

  it(
    'builds, loads and applies what the manifests name, creates their Secrets from files, and installs ' +
      'metrics-server',
    () => {
      const { images, secrets } = named();
      expect([...images.values()].sort()).toEqual(['version-router-backend:0.1.0', 'version-router-gateway:0.1.0']);
      expect(secrets).toEqual([
        { name: 'version-router-admin', key: 'token' },
        { name: 'version-router-notices', key: 'smtp-url' },
      ]);
      expect(walkthroughViolations(commandsOf(shellBlocks(document(), KIND)), named())).toEqual([]);
    },
  );

  it("writes an SMTP_URL whose port the gateway's egress lets out", () => {
    const urls = shellBlocks(document(), KIND).flatMap((block) =>
      [...block.matchAll(/'(smtps?:\/\/[^']+)'/g)].map((match) => match[1]!),
    );
    expect(urls).toHaveLength(1);
    expect(new URL(urls[0]!.replace('%s', 'password')).port).toBe(String(SMTP_PORT));
  });

  it('keeps every Secret of the Kubernetes section out of the shell history', () => {
    const section = commandsOf(shellBlocks(document(), '## Kubernetes'));
    const creating = section.filter((command) => command.includes('secret'));
    expect(creating.length).toBeGreaterThanOrEqual(2);
    expect(creating.filter((command) => command.some((word) => word.startsWith('--from-literal')))).toEqual([]);
  });
});

describe('walkthrough rules', () => {
  const walkthrough = `
\`\`\`sh
kind create cluster --name demo
docker build --target gateway -t version-router/gateway:0.1.0 .
docker build --target backend -t version-router-backend:latest .
kind load docker-image version-router-gateway:0.1.0   # into the default cluster
kubectl -n default create secret generic version-router-admin \\
  --from-literal=token=hunter2
kubectl apply -k deploy/kubernetes/staging
\`\`\`
`;

  it('report the wrong images, cluster, Secret, kustomization, and no metrics-server', () => {
    const commands = commandsOf(shellBlocks(`### Kubernetes on kind\n${walkthrough}`, KIND));
    expect(walkthroughViolations(commands, named())).toEqual([
      'builds gateway as version-router/gateway:0.1.0, not version-router-gateway:0.1.0',
      'builds backend as version-router-backend:latest, not version-router-backend:0.1.0',
      'loads version-router-gateway:0.1.0, not version-router-backend:0.1.0, version-router-gateway:0.1.0',
      'loads into the cluster kind, which it did not create',
      'creates the Secret version-router-admin outside the namespace version-router',
      'creates the Secret version-router-admin without its key token from a file',
      'creates no Secret version-router-notices',
      'kubectl -n default create secret generic version-router-admin --from-literal=token=hunter2: --from-literal ' +
        "leaves the value in the shell's history",
      'applies deploy/kubernetes/staging, which no test renders',
      'installs no metrics-server, which the HorizontalPodAutoscaler needs',
    ]);
  });

  it('end the section at the next heading of its level, not at a comment in another fence', () => {
    const markdown =
      '### Kubernetes on kind\n```yaml\n# a comment\n```\n```sh\necho in\n```\n### Next\n```sh\necho out\n```\n';
    expect(shellBlocks(markdown, KIND)).toEqual(['echo in']);
  });
});

const UPGRADE = '### Upgrading on Kubernetes';
const POSTGRES = 'deploy/kubernetes/overlays/postgres';

describeWithTool('kubectl', `the upgrade path (${DOC}, "${UPGRADE.slice(4)}")`, () => {
  const target = (): UpgradeTarget => ({
    kustomization: POSTGRES,
    namespace: 'version-router',
    objects: render(POSTGRES),
  });

  it('has shell blocks that bash parses', () => {
    const blocks = shellBlocks(document(), UPGRADE);
    expect(blocks.length).toBeGreaterThan(0);
    for (const block of blocks) {
      const result = spawnSync('bash', ['-n'], { input: block, encoding: 'utf8' });
      expect(result.stderr, block).toBe('');
    }
  });

  it(
    'deletes the last migration Job, applies the new one alone and waits for it, then rolls out and watches both ' +
      'Deployments, and rolls them back with kubectl rollout undo, on the rendered overlay',
    () => {
      expect(upgradeViolations(commandsOf(shellBlocks(document(), UPGRADE)), target())).toEqual([]);
    },
  );

  it('reports a Job applied with the rollout, waited for too briefly, and a rollback of what does not exist', () => {
    const commands = commandsOf([
      [
        'kubectl apply -k deploy/kubernetes/overlays/postgres -l app.kubernetes.io/part-of=version-router',
        'kubectl -n version-router wait --for=condition=complete job/migrations --timeout=5m',
        'kubectl apply -k deploy/kubernetes/overlays/postgres',
        'kubectl -n version-router rollout status deployment/backend --timeout=10m',
        'kubectl -n default rollout undo deployment/backends',
      ].join('\n'),
    ]);
    expect(upgradeViolations(commands, target())).toEqual([
      'kubectl -n default rollout undo deployment/backends: in the namespace default, not version-router',
      'never deletes the last Job migrations (its pod template cannot change)',
      '-l app.kubernetes.io/part-of=version-router selects Deployment/backend, which rolls out with the rest',
      '-l app.kubernetes.io/part-of=version-router selects Deployment/gateway, which rolls out with the rest',
      '-l app.kubernetes.io/part-of=version-router selects HorizontalPodAutoscaler/backend, which rolls out with the rest',
      '-l app.kubernetes.io/part-of=version-router selects HorizontalPodAutoscaler/gateway, which rolls out with the rest',
      'waits 5m for the Job, less than its activeDeadlineSeconds 1800',
      'never shows the rollback of deployment/backend (kubectl rollout undo)',
      'never watches deployment/gateway roll out after the apply',
      'never shows the rollback of deployment/gateway (kubectl rollout undo)',
      'kubectl -n default rollout undo deployment/backends: no Deployment backends',
    ]);
  });
});
