// First step of `npm test`: the tools the tests need that npm cannot install (test/tools/tools.mjs). One line per
// tool: found; installed with Debian's apt-get when this runs as root where apt-get is; otherwise skipped,
// with the reason and the install command, so the checks that need it are skipped and everything else runs.
// With CI=true a tool that is still missing fails the run (exit 1) instead.
// TEST_TOOLS_ROOT=0 or 1 stands in for the user id (the script's own tests run both cases on any machine).
import { spawnSync } from 'node:child_process';
import { findOnPath, installCommand, toolStatus, tools } from './tools.mjs';

const ci = process.env.CI === 'true';
const root = process.env.TEST_TOOLS_ROOT === undefined ? process.getuid?.() === 0 : process.env.TEST_TOOLS_ROOT === '1';
const aptGet = findOnPath('apt-get');
let aptUpdated = false;
let failed = false;

/** Runs apt-get quietly; its output is shown only when it fails. */
function apt(args) {
  const result = spawnSync(aptGet, ['-qq', ...args], {
    encoding: 'utf8',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (result.status !== 0) process.stderr.write(`${result.stdout}${result.stderr}`);
  return result.status === 0;
}

/** A fresh machine may have no package lists yet: update them once, before the first install. */
function install(name) {
  if (!aptUpdated) {
    aptUpdated = true;
    if (!apt(['update'])) return false;
  }
  return apt(['install', '-y', '--no-install-recommends', tools[name].debianPackage]);
}

for (const name of Object.keys(tools)) {
  const label = `test tools: ${name} (${tools[name].binaries.join(', ')})`;
  let status = toolStatus(name);
  if (status.available) {
    console.log(`${label}: found`);
    continue;
  }
  const cannotInstall = !root ? 'not root' : aptGet === undefined ? 'no apt-get' : undefined;
  let installed = false;
  if (cannotInstall === undefined) {
    installed = install(name);
    status = toolStatus(name);
    if (installed && status.available) {
      console.log(`${label}: installed (${installCommand(name)})`);
      continue;
    }
  }
  // Debian 12's kubernetes-client installs, but its kubectl is too old for the checks (tools.mjs says why).
  const why = cannotInstall ?? (installed ? 'installed, not usable' : 'apt-get install failed');
  if (ci) {
    failed = true;
    console.error(`${label}: MISSING with CI=true (${why}): ${status.reason}`);
  } else {
    console.log(`${label}: skipped (${why}): ${status.reason}`);
  }
}
if (failed) process.exit(1);
