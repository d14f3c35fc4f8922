// Two phases of load on one gateway, in turns: what bench/keys-cost.mjs and bench/pins-cost.mjs share. Both
// phases of a round run against the same gateway process, with the same registry and JIT state, back to back,
// in alternating order, so neither a start order nor the host's drift over minutes favours one; what differs
// is the request each phase's wrk script sends.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { LOAD_CPU, cpuMicros, load, median, need, pinning, startGatewayStack } from './harness.mjs';

/** wrk's connections in every phase. */
export const CONNECTIONS = 50;

/**
 * Runs `measure({ gateway, dir })` against one built gateway and backend (the backend on the load core, so the
 * gateway has a core of its own) in a fresh temporary directory, and stops both and removes the directory after.
 * Exits first, with the reason, where the bench cannot be measured: fewer than 2 cores, no wrk or taskset.
 */
export async function withGatewayOnItsOwnCore(bench, { node, gatewayNodeOptions = '' }, measure) {
  if (!pinning) {
    process.stderr.write(`${bench} needs 2 cores: one for the gateway, one for the backend and wrk\n`);
    process.exit(1);
  }
  need('wrk', 'apt-get install -y wrk');
  need('taskset', 'apt-get install -y util-linux');
  const dir = mkdtempSync(join(tmpdir(), `bench-${basename(bench, '.mjs')}-`));
  const children = [];
  try {
    const { gateway } = await startGatewayStack(dir, children, { node, backendCpu: LOAD_CPU, gatewayNodeOptions });
    await measure({ gateway, dir });
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    await sleep(300);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `rounds` rounds of the two phases of `scripts` (phase name → wrk script), each loading the gateway for
 * `seconds`, after one warm-up run of each (JIT, pool connections, the consumer's first use). Odd rounds run
 * `order` as given, even rounds reversed; the gateway's CPU (utime + stime) is read around each phase. Prints
 * each round's req/s and CPU µs per request of both phases (in `order`) and their ratio `over`/`under`, then
 * the median ratios, and how many rounds `over` cost more CPU per request (`dearer`: "X dearer").
 */
export async function alternatePhases(gateway, scripts, { order, over, under, dearer, seconds, rounds }) {
  const phase = async (name) => {
    const before = cpuMicros(gateway.child.pid);
    const result = await load(gateway.url, scripts[name], CONNECTIONS, seconds);
    return { rps: result.rps, cpuUs: (cpuMicros(gateway.child.pid) - before) / result.requests, errors: result.errors };
  };
  for (const name of order) await phase(name);

  const cpuRatios = [];
  const rpsRatios = [];
  for (let round = 1; round <= rounds; round++) {
    const turn = round % 2 === 1 ? order : [...order].reverse();
    const figures = {};
    for (const name of turn) figures[name] = await phase(name);
    const cpuRatio = figures[over].cpuUs / figures[under].cpuUs;
    const rpsRatio = figures[over].rps / figures[under].rps;
    cpuRatios.push(cpuRatio);
    rpsRatios.push(rpsRatio);
    const show = (name) =>
      `${name} ${figures[name].rps.toFixed(0)} req/s ${figures[name].cpuUs.toFixed(0)} µs CPU/req errors ` +
      `${figures[name].errors}`;
    process.stdout.write(
      `round ${round} (${turn.join(' first, ')} second): ${order.map(show).join(' | ')} | CPU ${over}/${under} ` +
        `${cpuRatio.toFixed(3)}, req/s ${rpsRatio.toFixed(3)}\n`,
    );
  }
  const dearerRounds = cpuRatios.filter((ratio) => ratio > 1).length;
  process.stdout.write(
    `median ${over}/${under}: CPU per request ${median(cpuRatios).toFixed(3)} (${dearer} in ${dearerRounds} of ` +
      `${rounds} rounds), req/s ${median(rpsRatios).toFixed(3)}\n`,
  );
}
