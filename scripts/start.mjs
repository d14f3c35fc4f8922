// `npm start`: runs the backend and the gateway as two processes with the defaults of README "Configuration";
// `node scripts/start.mjs backend` (npm run start:backend) runs one of them.
// Children get their own process group, so a Ctrl-C sent to the terminal's group reaches them once,
// through this launcher (a second signal would make them skip the graceful drain).
import { spawn } from 'node:child_process';
import { entries, repoRoot } from './paths.mjs';

const names = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(entries);
const unknown = names.filter((name) => !(name in entries));
if (unknown.length > 0) {
  console.error(`unknown service ${unknown.join(', ')}; choose from ${Object.keys(entries).join(', ')}`);
  process.exit(2);
}
const services = names.map((name) => ({ name, entry: entries[name] }));

let stopping = false;
let exitCode = 0;
const children = services.map(({ name, entry }) => {
  const child = spawn(process.execPath, [entry], { cwd: repoRoot, env: process.env, stdio: 'inherit', detached: true });
  child.on('exit', (code, signal) => {
    child.exited = true;
    if (!stopping) {
      console.error(`${name} stopped unexpectedly (${signal ?? `exit code ${code}`}); stopping the stack`);
      exitCode = 1;
      stopAll('SIGTERM');
    } else if (code !== 0) {
      exitCode = 1;
    }
    if (children.every((c) => c.exited)) process.exit(exitCode);
  });
  return child;
});

function stopAll(signal) {
  stopping = true;
  for (const child of children) if (!child.exited) child.kill(signal);
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (!stopping) stopAll(signal);
  });
}

const gatewayPort = process.env.GATEWAY_PORT ?? '8080';
const adminPort = process.env.GATEWAY_ADMIN_PORT ?? '9464';
const readyUrl = `http://127.0.0.1:${adminPort}/readyz`;
for (let attempt = 0; attempt < 100 && !stopping && names.includes('gateway'); attempt++) {
  const ready = await fetch(readyUrl).then((res) => res.ok, () => false);
  if (ready) {
    console.log(`\nAPI:     http://localhost:${gatewayPort}  (try: curl -i localhost:${gatewayPort}/v1/orders/ord-1001)`);
    console.log(`Metrics: http://localhost:${adminPort}/metrics\nPress Ctrl-C to stop.\n`);
    break;
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
}
