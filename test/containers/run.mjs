// `npm run test:containers`: the container suite needs a Docker engine (and Compose v2).
// Without one it prints a single line saying so and exits 0, before vitest starts, so no test
// is reported at all, let alone as passed. With one it runs the suite in two parts (below).
// The engine is looked up the way testcontainers looks it up (DOCKER_HOST,
// ~/.testcontainers.properties, the default sockets), so "reachable" means the same for both.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { repoRoot } from '../../scripts/paths.mjs';

// testcontainers reads this when it is imported. Its Ryuk reaper is an image from a registry,
// which not every machine reaches; the suite removes its compose project itself.
process.env.TESTCONTAINERS_RYUK_DISABLED ??= 'true';
// Debian's docker client (with the compose and buildx plugins that test/containers/engine.sh
// installs) ahead of a plugin-less client that may sit in /usr/local/bin.
if (existsSync('/usr/bin/docker')) process.env.PATH = `/usr/bin:${process.env.PATH ?? ''}`;

const { getContainerRuntimeClient } = await import('testcontainers');

let engine;
try {
  const client = await getContainerRuntimeClient();
  engine = `${client.info.containerRuntime.host} (${client.info.containerRuntime.operatingSystem})`;
} catch (err) {
  process.stdout.write(
    `container suite SKIPPED, no test run: no Docker engine reachable (` +
      `${err instanceof Error ? err.message : String(err)})\n`,
  );
  process.exit(0);
}

// Two runs, one after the other (never beside each other on a 2-core machine): the single-replica
// stacks (project `containers` of test/vitest.config.ts), then the fleet, which starts 9 containers of
// its own (project `fleet`). Arguments (a file filter…) go to both; a run they leave without a file
// passes. Each part prints its time; the exit code is the first failure's.
const vitest = fileURLToPath(new URL('../../node_modules/vitest/vitest.mjs', import.meta.url));
const parts = [
  ['single-replica stacks', 'containers'],
  ['fleet', 'fleet'],
];
process.stdout.write(`container suite: Docker engine at ${engine}\n`);
// The images: engine.sh leaves an engine that can get the official images as it is, and builds the
// stand-ins (once) where it cannot, e.g. an engine started by hand on a machine without a registry.
const images = spawnSync('bash', [fileURLToPath(new URL('engine.sh', import.meta.url))], {
  cwd: repoRoot,
  stdio: 'inherit',
});
if (images.status !== 0) {
  process.stdout.write('container suite FAILED: test/containers/engine.sh could not provide the images (see above)\n');
  process.exit(1);
}
let status = 0;
for (const [name, project] of parts) {
  process.stdout.write(`container suite: ${name}: building and starting its compose stack\n`);
  const started = Date.now();
  const result = spawnSync(
    process.execPath,
    [
      vitest,
      'run',
      '--config',
      'test/vitest.config.ts',
      '--project',
      project,
      '--passWithNoTests',
      ...process.argv.slice(2),
    ],
    { cwd: repoRoot, stdio: 'inherit' },
  );
  process.stdout.write(
    `container suite: ${name} took ${Math.round((Date.now() - started) / 1000)} s (exit ` +
      `${result.status ?? result.signal})\n`,
  );
  if (status === 0) status = result.status ?? 1;
}
process.exit(status);
