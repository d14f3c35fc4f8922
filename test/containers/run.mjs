// `npm run test:containers`: the container suite needs a Docker engine (and Compose v2).
// Without one it prints a single line saying so and exits 0, before vitest starts, so no test
// is reported at all, let alone as passed. With one it runs the suite (vitest.config.ts here).
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
    `container suite SKIPPED, no test run: no Docker engine reachable (${err instanceof Error ? err.message : String(err)})\n`,
  );
  process.exit(0);
}

process.stdout.write(`container suite: Docker engine at ${engine}; building and starting the compose stack\n`);
const result = spawnSync(
  process.execPath,
  [fileURLToPath(new URL('../../node_modules/vitest/vitest.mjs', import.meta.url)), 'run', '--config', 'test/containers/vitest.config.ts', ...process.argv.slice(2)],
  { cwd: repoRoot, stdio: 'inherit' },
);
process.exit(result.status ?? 1);
