// `npm run test:e2e:image-node`: the process-based end-to-end suite (test/e2e) a second time,
// under the Node major of the Docker image, so a difference between our machines' Node 20 and
// the image's Node is caught here, not in production.
// The major is read from the Dockerfile (ARG NODE_IMAGE / FROM node:<major>-…), so the two never
// drift. The binary comes from the npm package `node@<major>` through `npm exec`, into npm's
// cache, not node_modules: a `node` devDependency would put its bin first on PATH and make every
// other npm script run on that Node too. `--prefer-offline` reuses the cached copy once fetched.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../scripts/paths.mjs';

const dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8');
const image = /^ARG\s+NODE_IMAGE=(\S+)/m.exec(dockerfile)?.[1] ?? /^FROM\s+(node:\S+)/m.exec(dockerfile)?.[1];
const major = /^(?:docker\.io\/)?(?:library\/)?node:(\d+)/.exec(image ?? '')?.[1];
if (major === undefined) {
  process.stderr.write(`cannot read the image's Node major from the Dockerfile (base image: ${image ?? 'none found'})\n`);
  process.exit(1);
}

const exec = ['exec', '--yes', '--prefer-offline', `--package=node@${major}`, '--'];
const version = spawnSync('npm', [...exec, 'node', '--version'], { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
const found = version.stdout?.trim() ?? '';
if (version.status !== 0 || !found.startsWith(`v${major}.`)) {
  process.stderr.write(`could not get Node ${major} from the npm package node@${major} (got "${found}")\n`);
  process.exit(1);
}
process.stdout.write(`end-to-end suite under Node ${found} (the Docker image's major, ${image})\n`);

const args = process.argv.slice(2);
const result = spawnSync('npm', [...exec, 'node', 'node_modules/vitest/vitest.mjs', 'run', ...(args.length > 0 ? args : ['test/e2e'])], {
  cwd: repoRoot,
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
