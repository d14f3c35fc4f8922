// The Node the Docker image ships, for running the end-to-end suite and the bench on it outside the image.
// Its major is read from the Dockerfile, so the two never drift; the binary comes from the npm package
// `node@<major>` through `npm exec`, into npm's cache, not node_modules: a `node` devDependency would put
// its bin first on PATH and make every other npm script run on that Node too.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './paths.mjs';

/**
 * The Node major of the Docker image, from its base image (`ARG NODE_IMAGE=node:<major>-…` or
 * `FROM node:<major>-…`).
 */
export function imageNodeMajor() {
  const dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8');
  const image = /^ARG\s+NODE_IMAGE=(\S+)/m.exec(dockerfile)?.[1] ?? /^FROM\s+(node:\S+)/m.exec(dockerfile)?.[1];
  const major = /^(?:docker\.io\/)?(?:library\/)?node:(\d+)/.exec(image ?? '')?.[1];
  if (major === undefined)
    throw new Error(`cannot read the image's Node major from the Dockerfile (base image: ${image ?? 'none found'})`);
  return major;
}

/** A node binary of this major and its version; `--prefer-offline` reuses npm's cached copy once fetched. */
export function nodeOfMajor(major) {
  const found = execFileSync(
    'npm',
    [
      'exec',
      '--yes',
      '--prefer-offline',
      `--package=node@${major}`,
      '--',
      'node',
      '-p',
      'process.execPath + " " + process.version',
    ],
    {
      cwd: repoRoot,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  ).trim();
  const [binary, version] = found.split(' ');
  if (binary === undefined || version === undefined || !version.startsWith(`v${major}.`))
    throw new Error(`could not get Node ${major} from the npm package node@${major} (got "${found}")`);
  return { binary, version };
}
