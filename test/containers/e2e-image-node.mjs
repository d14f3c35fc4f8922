// `npm run test:e2e:image-node`: the process-based end-to-end suite (test/e2e) a second time,
// under the Node major of the Docker image (scripts/image-node.mjs), so a difference between our
// machines' Node 20 and the image's Node is caught here, not in production.
import { spawnSync } from 'node:child_process';
import { delimiter, dirname } from 'node:path';
import { imageNodeMajor, nodeOfMajor } from '../../scripts/image-node.mjs';
import { repoRoot } from '../../scripts/paths.mjs';

let node;
try {
  node = nodeOfMajor(imageNodeMajor());
} catch (err) {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
}
process.stdout.write(`end-to-end suite under Node ${node.version} (the Docker image's major)\n`);

const args = process.argv.slice(2);
const result = spawnSync(
  node.binary,
  ['node_modules/vitest/vitest.mjs', 'run', ...(args.length > 0 ? args : ['test/e2e'])],
  {
    cwd: repoRoot,
    // First on PATH too, so what the suite runs by name (npm scripts, node) runs on the same Node.
    env: { ...process.env, PATH: `${dirname(node.binary)}${delimiter}${process.env.PATH ?? ''}` },
    stdio: 'inherit',
  },
);
process.exit(result.status ?? 1);
