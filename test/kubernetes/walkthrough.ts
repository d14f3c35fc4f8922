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
