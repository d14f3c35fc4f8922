/**
 * The kind walkthrough of docs/deployment.md#kubernetes-on-kind, read as the shell commands it gives, against
 * what the manifests name: no cluster runs here, so what can be checked is that the commands build, load
 * and apply exactly the images, kustomizations and Secrets the manifests expect.
 */

/** The fenced `sh` blocks of the section under `heading` (up to the next heading of its level or above). */
export function shellBlocks(markdown: string, heading: string): string[] {
  const lines = markdown.split('\n');
  const start = lines.indexOf(heading);
  if (start === -1) return [];
  const level = /^#+/.exec(heading)?.[0].length ?? 1;
  const blocks: string[] = [];
  // The lines of the open fence (undefined outside one); only `sh` fences are kept.
  let fence: { sh: boolean; lines: string[] } | undefined;
  for (const line of lines.slice(start + 1)) {
    if (fence === undefined && new RegExp(`^#{1,${level}} `).test(line)) break;
    if (fence === undefined && line.startsWith('```')) fence = { sh: line === '```sh', lines: [] };
    else if (fence !== undefined && line === '```') {
      if (fence.sh) blocks.push(fence.lines.join('\n'));
      fence = undefined;
    } else fence?.lines.push(line);
  }
  return blocks;
}

/** The commands of shell blocks: comments dropped, continued lines joined, `( … )` subshells opened up. */
export function commandsOf(blocks: string[]): string[][] {
  return blocks
    .join('\n')
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((line) =>
      line
        .replace(/(^|\s)#.*$/, '')
        .replace(/^\s*\(\s*|\s*\)\s*$/g, '')
        .trim(),
    )
    .filter((line) => line !== '')
    .map((line) => line.split(/\s+/));
}

/** What the manifests name, which the walkthrough must build, load, create and apply. */
export interface Named {
  /** Container (and build target) name → image as the rendered manifests name it. */
  images: Map<string, string>;
  /** The Secrets the pods read: name and key. */
  secrets: { name: string; key: string }[];
  namespace: string;
  /** Kustomization directories the tests render. */
  kustomizations: string[];
}

const flag = (command: string[], name: string): string | undefined => {
  const index = command.indexOf(name);
  return index === -1
    ? command.find((word) => word.startsWith(`${name}=`))?.slice(name.length + 1)
    : command[index + 1];
};

/**
 * The walkthrough builds each target under the image the manifests name, loads exactly those images into
 * the cluster it creates, creates each Secret the pods read (from a file, in the manifests' namespace),
 * applies only kustomizations the tests render, and installs metrics-server for the HPA.
 */
export function walkthroughViolations(commands: string[][], named: Named): string[] {
  const found: string[] = [];
  const run = (...words: string[]): string[][] =>
    commands.filter((command) => words.every((word, index) => command[index] === word));
  const built = new Map(
    run('docker', 'build').map((command) => [flag(command, '--target') ?? '', flag(command, '-t') ?? '']),
  );
  for (const [target, image] of named.images) {
    if (built.get(target) !== image) found.push(`builds ${target} as ${built.get(target) ?? 'nothing'}, not ${image}`);
  }
  const clusters = run('kind', 'create', 'cluster').map((command) => flag(command, '--name') ?? 'kind');
  const loads = run('kind', 'load', 'docker-image');
  const loaded = loads.flatMap((command) =>
    command.slice(3).filter((word, index, words) => !word.startsWith('-') && words[index - 1] !== '--name'),
  );
  const expectedImages = [...named.images.values()].sort();
  if (JSON.stringify([...loaded].sort()) !== JSON.stringify(expectedImages))
    found.push(`loads ${loaded.join(', ') || 'nothing'}, not ${expectedImages.join(', ')}`);
  for (const command of loads) {
    const cluster = flag(command, '--name') ?? 'kind';
    if (!clusters.includes(cluster)) found.push(`loads into the cluster ${cluster}, which it did not create`);
  }
  const secrets = commands.filter(
    (command) => command[0] === 'kubectl' && command.includes('create') && command.includes('secret'),
  );
  for (const { name, key } of named.secrets) {
    const creating = secrets.find((command) => command.includes(name));
    if (creating === undefined) found.push(`creates no Secret ${name}`);
    else {
      if (flag(creating, '-n') !== named.namespace)
        found.push(`creates the Secret ${name} outside the namespace ${named.namespace}`);
      if (!creating.some((word) => word.startsWith(`--from-file=${key}=`)))
        found.push(`creates the Secret ${name} without its key ${key} from a file`);
    }
  }
  for (const command of secrets) {
    if (command.some((word) => word.startsWith('--from-literal')))
      found.push(`${command.join(' ')}: --from-literal leaves the value in the shell's history`);
  }
  for (const command of run('kubectl', 'apply')) {
    const directory = flag(command, '-k');
    if (directory !== undefined && !named.kustomizations.includes(directory))
      found.push(`applies ${directory}, which no test renders`);
  }
  if (!run('kubectl', 'apply').some((command) => (flag(command, '-f') ?? '').includes('metrics-server')))
    found.push('installs no metrics-server, which the HorizontalPodAutoscaler needs');
  return found;
}

/** What the upgrade path is walked against: the rendered kustomization it applies. */
export interface UpgradeTarget {
  /** The kustomization directory the upgrade applies. */
  kustomization: string;
  namespace: string;
  /** Every object of its rendering: kind, name, labels; a Job's activeDeadlineSeconds; a Deployment's deadline. */
  objects: {
    kind: string;
    metadata: { name: string; labels?: Record<string, string> };
    spec?: { activeDeadlineSeconds?: number; progressDeadlineSeconds?: number };
  }[];
}

/** `30m`, `600s`, `1h` in seconds (kubectl's durations). */
function seconds(duration: string | undefined): number {
  const match = /^(\d+)(s|m|h)$/.exec(duration ?? '');
  if (match === null) return 0;
  return Number(match[1]) * { s: 1, m: 60, h: 3600 }[match[2] as 's' | 'm' | 'h'];
}

/**
 * The upgrade path's commands, in order, against the rendered manifests: the last migration Job deleted, the new one
 * applied alone (by a label that selects it and what it needs, nothing of the rollout) and waited for as long as it
 * may run, then everything applied and each Deployment's rollout watched as long as it may take; a rollback undoes
 * Deployments that exist. Every command in the manifests' namespace.
 */
export function upgradeViolations(commands: string[][], target: UpgradeTarget): string[] {
  const found: string[] = [];
  const kubectl = commands.filter((command) => command[0] === 'kubectl');
  const at = (predicate: (command: string[]) => boolean): number => kubectl.findIndex(predicate);
  const has = (command: string[], ...words: string[]): boolean => words.every((word) => command.includes(word));
  const jobs = target.objects.filter((object) => object.kind === 'Job');
  const deployments = target.objects
    .filter((object) => object.kind === 'Deployment')
    .map((object) => object.metadata.name);
  const [job] = jobs;
  if (job === undefined || jobs.length > 1) return [`the manifests hold ${jobs.length} Jobs, not one migration Job`];
  for (const command of kubectl) {
    const namespace = flag(command, '-n');
    if (namespace !== undefined && namespace !== target.namespace)
      found.push(`${command.join(' ')}: in the namespace ${namespace}, not ${target.namespace}`);
    const directory = flag(command, '-k');
    if (directory !== undefined && directory !== target.kustomization)
      found.push(`${command.join(' ')}: applies ${directory}, not ${target.kustomization}`);
  }
  const deleting = at((command) => has(command, 'delete', 'job', job.metadata.name, '--ignore-not-found'));
  const applyingJob = at((command) => has(command, 'apply') && flag(command, '-l') !== undefined);
  const waiting = at(
    (command) => has(command, 'wait', `job/${job.metadata.name}`) && flag(command, '--for') === 'condition=complete',
  );
  const applyingAll = at(
    (command) => has(command, 'apply') && flag(command, '-k') !== undefined && flag(command, '-l') === undefined,
  );
  if (deleting === -1) found.push(`never deletes the last Job ${job.metadata.name} (its pod template cannot change)`);
  if (applyingJob === -1) found.push('never applies the migration Job alone (kubectl apply -k … -l …)');
  else {
    const [key, value] = (flag(kubectl[applyingJob]!, '-l') ?? '').split('=');
    const selected = target.objects
      .filter((object) => key !== undefined && object.metadata.labels?.[key] === value)
      .map((object) => `${object.kind}/${object.metadata.name}`);
    if (!selected.includes(`Job/${job.metadata.name}`))
      found.push(`-l ${key}=${value} does not select the Job ${job.metadata.name}`);
    for (const name of selected.filter((object) => /^(Deployment|HorizontalPodAutoscaler)\//.test(object)))
      found.push(`-l ${key}=${value} selects ${name}, which rolls out with the rest`);
  }
  if (waiting === -1) found.push(`never waits for job/${job.metadata.name} to complete`);
  else if (seconds(flag(kubectl[waiting]!, '--timeout')) < (job.spec?.activeDeadlineSeconds ?? Infinity))
    found.push(
      `waits ${flag(kubectl[waiting]!, '--timeout') ?? '30s (the default)'} for the Job, less than its ` +
        `activeDeadlineSeconds ${String(job.spec?.activeDeadlineSeconds)}`,
    );
  if (applyingAll === -1) found.push('never applies the rollout');
  const order = [deleting, applyingJob, waiting, applyingAll];
  if (!order.includes(-1) && order.some((index, position) => position > 0 && index <= order[position - 1]!))
    found.push('does not delete the last Job, apply the new one, wait for it and apply the rest, in that order');
  for (const name of deployments) {
    const status = at((command) => has(command, 'rollout', 'status', `deployment/${name}`));
    const deadline = target.objects.find((object) => object.kind === 'Deployment' && object.metadata.name === name)
      ?.spec?.progressDeadlineSeconds;
    if (status === -1 || status < applyingAll) found.push(`never watches deployment/${name} roll out after the apply`);
    else if (seconds(flag(kubectl[status]!, '--timeout')) < (deadline ?? 600))
      found.push(`watches deployment/${name} for less than its progressDeadlineSeconds ${deadline ?? 600}`);
    if (at((command) => has(command, 'rollout', 'undo', `deployment/${name}`)) === -1)
      found.push(`never shows the rollback of deployment/${name} (kubectl rollout undo)`);
  }
  for (const command of kubectl.filter((candidate) => has(candidate, 'rollout'))) {
    const name = command.find((word) => word.startsWith('deployment/'))?.slice('deployment/'.length);
    if (name !== undefined && !deployments.includes(name)) found.push(`${command.join(' ')}: no Deployment ${name}`);
  }
  return found;
}
