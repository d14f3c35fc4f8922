// `npm start`: runs the backend and the gateway as two processes with the defaults of
// docs/configuration.md#environment-variables; `node scripts/start.mjs backend` (npm run start:backend)
// runs one of them. Signals (docs/http.md#signals-to-npm-start): SIGINT and SIGTERM stop them front to
// back, the gateway with its drain first and the backend once the gateway has exited, so a request the gateway
// is still draining (an upload still arriving) reaches a backend that still serves; SIGHUP makes the gateway
// re-read its version policy while the backend keeps running.
// Children get their own process group, so a Ctrl-C sent to the terminal's group reaches them only through this
// launcher, in that order (a second signal would make them skip the graceful drain). Each has an IPC channel to
// the launcher, which closes when the launcher dies however it dies: the services then stop by themselves
// (platform/src/run-process.ts), so a SIGKILLed launcher leaves nothing running.
import { spawn } from 'node:child_process';
import { entries, nodeFlags, repoRoot } from './paths.mjs';

const names = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(entries);
const unknown = names.filter((name) => !(name in entries));
if (unknown.length > 0) {
  console.error(`unknown service ${unknown.join(', ')}; choose from ${Object.keys(entries).join(', ')}`);
  process.exit(2);
}
const services = names.map((name) => ({ name, entry: entries[name], flags: nodeFlags[name] }));

/** What a service sends over its IPC channel once a signal to it no longer ends it mid-start. */
const SIGNALS_HELD = 'signals held';

// The build before this said what it compiled; from here until the banner each service's own lines follow.
console.log(`starting the ${names.join(' and the ')}…`);

let stopping = false;
let exitCode = 0;
const children = services.map(({ name, entry, flags }) => {
  const child = spawn(process.execPath, [...flags, entry], {
    cwd: repoRoot,
    env: process.env,
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    detached: true,
  });
  child.name = name;
  // Until a service says it holds its signals (platform/src/run-process.ts), one would end it outright, before
  // it could stop what it starts: signals to it wait for that message.
  child.signalsHeld = new Promise((resolve) => {
    child.on('message', (message) => message === SIGNALS_HELD && resolve());
    child.once('exit', resolve);
  });
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
const gateway = children.find((child) => child.name === 'gateway');

/** Front to back: the gateway first, each next service once the one before it has exited. */
const stopOrder = ['gateway', 'backend'];

function stopAll(signal) {
  stopping = true;
  stopNext(signal);
}

async function deliver(child, signal) {
  await child.signalsHeld;
  if (!child.exited) child.kill(signal);
}

function stopNext(signal) {
  const running = stopOrder.map((name) => children.find((child) => child.name === name && !child.exited));
  const next = running.find((child) => child !== undefined);
  if (next === undefined) return;
  void deliver(next, signal);
  next.once('exit', () => stopNext(signal));
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (!stopping) stopAll(signal);
  });
}

let lastHangup = 0;
/**
 * SIGHUP: the gateway re-reads its policy; without a gateway (start:backend) it stops, as the backend itself does on
 * SIGHUP.
 */
function hangUp() {
  lastHangup = Date.now();
  if (stopping) return;
  if (gateway === undefined) {
    stopAll('SIGTERM');
    return;
  }
  if (!gateway.exited) {
    console.log(`SIGHUP: the gateway (pid ${gateway.pid}) re-reads its version policy; the backend keeps running`);
    void deliver(gateway, 'SIGHUP');
  }
}
process.on('SIGHUP', hangUp);

// npm passes SIGINT and SIGTERM on to this launcher but dies of a SIGHUP, which it does not pass on, whether
// it was sent to npm alone or to the whole process group. Either way the launcher outlives the process that
// started it (its parent pid changes), and takes that as the hang-up it was meant to get.
const parentPid = process.ppid;
const parentWatch = setInterval(() => {
  if (process.ppid === parentPid) return;
  clearInterval(parentWatch);
  if (stopping) return;
  if (Date.now() - lastHangup > 1_000) hangUp();
  if (!stopping)
    console.log(
      `the process that started this launcher (pid ${parentPid}) is gone, as npm goes on SIGHUP; stop the stack ` +
        `with: kill ${process.pid}`,
    );
}, 250);
parentWatch.unref();

const gatewayPort = process.env.GATEWAY_PORT ?? '8080';
const adminPort = process.env.GATEWAY_ADMIN_PORT ?? '9464';
// Every service started here, not the gateway alone: a gateway is ready without its backend (readiness is
// each process's own), and a signal that reaches a backend still starting would end it uncleanly.
const adminPorts = { gateway: adminPort, backend: process.env.BACKEND_ADMIN_PORT ?? '9465' };
// A service is asked until it first answers ready, then no more: each answer is a request line in its log, and the
// backend, ready in a second, would otherwise log ten a second until the gateway is.
const notReady = new Set(services.map(({ name }) => `http://127.0.0.1:${adminPorts[name]}/readyz`));
// The gateway's first start on a new embedded consumer store (.data/gateway) creates its database: tens of
// seconds on a busy machine, later starts a few.
const readyDeadline = Date.now() + 120_000;
while (Date.now() < readyDeadline && !stopping && gateway !== undefined && !gateway.exited) {
  await Promise.all(
    [...notReady].map((url) =>
      fetch(url).then(
        (res) => void (res.ok && notReady.delete(url)),
        () => undefined,
      ),
    ),
  );
  if (notReady.size === 0) {
    // The example order is our backend's: a gateway started alone is in front of another API.
    const example = services.some(({ name }) => name === 'backend')
      ? `  (try: curl -i localhost:${gatewayPort}/v1/orders/ord-1001)`
      : '';
    console.log(`\nAPI:         http://localhost:${gatewayPort}${example}`);
    console.log(`Metrics:     http://localhost:${adminPort}/metrics`);
    console.log(`Status page: http://localhost:${adminPort}/`);
    // npm exits of a SIGHUP (above): the banner names the signal that reloads and leaves npm running.
    console.log(
      `Gateway pid: ${gateway.pid}  (kill -HUP ${gateway.pid} re-reads the version policy; a SIGHUP to npm does too, ` +
        `but npm exits of it and the stack runs on without it)`,
    );
    console.log('Press Ctrl-C to stop.\n');
    break;
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
}
