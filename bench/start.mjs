// How long `npm start` takes from the command to its banner ("Press Ctrl-C to stop."): a first start on a tree
// without any build output (as after `npm ci` on a fresh clone) and a new embedded consumer store, then a
// second start with nothing changed. Each line `npm start` prints is shown with the seconds since the command.
//
//   node bench/start.mjs
//
// Deletes every package's dist/ first, so the first start builds everything; the store is a new directory
// under the system's temporary one, kept across both starts. Free loopback ports, so it runs beside a stack
// already on the default ones. Results: bench/README.md "npm start".
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../scripts/paths.mjs';

const PACKAGES = ['platform', 'gateway', 'services/users-orders', 'client'];
const BANNER = 'Press Ctrl-C to stop.';
const GIVE_UP_MS = 600_000;

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function logMessage(line) {
  try {
    const { service, msg } = JSON.parse(line);
    return `${service}: ${msg}`;
  } catch {
    return line;
  }
}

/** One `npm start` until its banner, then SIGINT to its process group and the wait for it to end. */
async function timeStart(label, env) {
  console.log(`\n${label}`);
  const started = performance.now();
  const seconds = () => ((performance.now() - started) / 1000).toFixed(1).padStart(6);
  const npm = spawn('npm', ['start', '--silent'], { cwd: repoRoot, env, detached: true, stdio: 'pipe' });
  const ended = new Promise((resolve) => npm.once('close', resolve));
  let pending = '';
  const banner = new Promise((resolve, reject) => {
    const onData = (chunk) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        // The services log JSON lines here (no terminal): their message is enough to see where the time goes.
        const shown = line.startsWith('{') ? logMessage(line) : line;
        console.log(`${seconds()} s  ${shown}`);
        if (line.includes(BANNER)) resolve((performance.now() - started) / 1000);
      }
    };
    npm.stdout.on('data', onData);
    npm.stderr.on('data', onData);
    void ended.then((code) => reject(new Error(`npm start ended (${code}) before its banner`)));
    setTimeout(() => reject(new Error(`no banner within ${GIVE_UP_MS / 1000} s`)), GIVE_UP_MS).unref();
  });
  try {
    return await banner;
  } finally {
    process.kill(-npm.pid, 'SIGINT');
    await ended;
  }
}

const dataDir = mkdtempSync(join(tmpdir(), 'bench-start-store-'));
const env = {
  ...process.env,
  GATEWAY_PORT: String(await freePort()),
  GATEWAY_ADMIN_PORT: String(await freePort()),
  BACKEND_PORT: String(await freePort()),
  BACKEND_ADMIN_PORT: String(await freePort()),
  GATEWAY_DATA_DIR: dataDir,
};
env.BACKEND_URL = `http://127.0.0.1:${env.BACKEND_PORT}`;
try {
  for (const dir of PACKAGES) rmSync(join(repoRoot, dir, 'dist'), { recursive: true, force: true });
  const first = await timeStart('first start: no build output, a new consumer store', env);
  const second = await timeStart('second start: nothing changed', env);
  console.log(`\nnpm start to its banner: first ${first.toFixed(1)} s, second ${second.toFixed(1)} s`);
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
