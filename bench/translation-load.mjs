// How much translated request bodies delay everyone else: four concurrent 1 MiB POSTs to /v1/orders/ord-1001
// (declared as changes in ops/versions.json, so each body is read whole, translated forward and sent on) while
// another client sends GET /v2/orders/ord-1001 (untranslated) one after another. The delay of a round is the
// slowest GET during the burst minus the median GET alone just before it. The same burst to /v2 (streamed
// through, never buffered) is the control.
//
//   node bench/translation-load.mjs
//
// One built gateway (its own core, embedded consumer store) in front of one built backend (the other core, with
// this script), as bench/translation-cost.mjs runs them; the bodies are exactly TRANSLATION_MAX_BYTES (1 MiB).
// Then 100 concurrent 750 KB translated POSTs: how many the held-bytes budget lets through, and the gateway's peak
// RSS (VmHWM) before and after them.
// Environment: BENCH_ROUNDS (default 10), BENCH_NODE (as bench/ab.mjs: a major, "path" or a binary; default the
// image's). Needs `npm run build`, 2 cores and taskset (apt-get install -y util-linux).
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { withGatewayOnItsOwnCore } from './alternating-phases.mjs';
import { cpuMicros, median, nodeBinary, nodeVersion } from './harness.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const BODY_BYTES = 1024 * 1024;
const CONCURRENT = 4;
const node = nodeBinary(process.env.BENCH_NODE);

/** A v1 order of exactly BODY_BYTES: SPEC's fields and enough lines to weigh a mebibyte. */
function orderBody() {
  const lines = [];
  const body = () => `{"user_id":"user-1","total":19.99,"lines":[${lines.join(',')}],"note":"`;
  for (let i = 0; body().length < BODY_BYTES - 200; i++) lines.push(`{"sku":"sku-${i}","qty":${i % 7},"price":${i}.5}`);
  const head = body();
  return Buffer.from(`${head}${'n'.repeat(BODY_BYTES - head.length - 2)}"}`);
}

const agent = new Agent({ keepAlive: true, maxSockets: 8 });

/** One request; resolves with its status and how long it took (ms). */
function send(url, { method = 'GET', body } = {}) {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method,
      agent,
      headers: body === undefined ? {} : { 'content-type': 'application/json', 'content-length': body.length },
    });
    req.once('error', reject);
    req.once('response', (res) => {
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode, ms: performance.now() - started }));
    });
    req.end(body);
  });
}

async function burst(gateway, version, body) {
  const gatewayUrl = gateway.url;
  const get = `${gatewayUrl}/v2/orders/ord-1001`;
  const alone = [];
  for (let i = 0; i < 20; i++) alone.push((await send(get)).ms);
  const cpuBefore = cpuMicros(gateway.child.pid);
  let pending = CONCURRENT;
  const posts = Array.from({ length: CONCURRENT }, () =>
    send(`${gatewayUrl}/v${version}/orders/ord-1001`, { method: 'POST', body }).finally(() => pending--),
  );
  const during = [];
  while (pending > 0) during.push((await send(get)).ms);
  const statuses = (await Promise.all(posts)).map(({ status }) => status);
  // The gateway's CPU for the burst, per POST (the GETs during it included: a few hundred µs).
  const cpuMsPerPost = (cpuMicros(gateway.child.pid) - cpuBefore) / 1000 / CONCURRENT;
  return {
    delayMs: Math.max(...during) - median(alone),
    gets: during.length,
    alone: median(alone),
    statuses,
    cpuMsPerPost,
  };
}

/** Peak resident memory of a process so far (VmHWM), in MiB. */
const peakRssMiB = (pid) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

/**
 * 100 concurrent translated POSTs of 750 KB (what once took the gateway's memory past its pod's limit): how many
 * are translated and how many find TRANSLATION_MAX_INFLIGHT_BYTES held (503), and the gateway's peak RSS.
 */
async function flood(gateway) {
  const size = 750 * 1000;
  const body = Buffer.from(`{"user_id":"u","total":1.5,"note":"${'n'.repeat(size - 40)}"}`);
  const before = peakRssMiB(gateway.child.pid);
  const results = await Promise.all(
    Array.from({ length: 100 }, () =>
      send(`${gateway.url}/v1/orders/ord-1001`, { method: 'POST', body }).catch(() => ({ status: 'error' })),
    ),
  );
  const counts = {};
  for (const { status } of results) counts[status] = (counts[status] ?? 0) + 1;
  process.stdout.write(
    `100 concurrent POST /v1 of ${body.length} bytes: ${JSON.stringify(counts)}; gateway peak RSS ` +
      `${before.toFixed(0)} MiB before, ${peakRssMiB(gateway.child.pid).toFixed(0)} MiB after\n`,
  );
}

await withGatewayOnItsOwnCore('bench/translation-load.mjs', { node }, async ({ gateway }) => {
  const body = orderBody();
  process.stdout.write(
    `${CONCURRENT} concurrent POSTs of ${body.length} bytes against GET /v2/orders/ord-1001, ${ROUNDS} rounds, ` +
      `Node ${nodeVersion(node)}\n`,
  );
  await burst(gateway, 1, body);
  const delays = { 1: [], 2: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    for (const version of round % 2 === 1 ? [1, 2] : [2, 1]) {
      const result = await burst(gateway, version, body);
      delays[version].push(result.delayMs);
      process.stdout.write(
        `round ${round} POST /v${version}: GET alone ${result.alone.toFixed(1)} ms, ${result.gets} GETs during the ` +
          `burst, slowest +${result.delayMs.toFixed(1)} ms; gateway CPU ${result.cpuMsPerPost.toFixed(1)} ms per POST; ` +
          `POST statuses ${result.statuses.join(' ')}\n`,
      );
    }
  }
  await flood(gateway);
  for (const version of [1, 2]) {
    const sorted = [...delays[version]].sort((a, b) => a - b);
    process.stdout.write(
      `POST /v${version} (${version === 1 ? 'translated' : 'untranslated'}): GET delayed by median ` +
        `${median(sorted).toFixed(1)} ms, most ${sorted.at(-1).toFixed(1)} ms\n`,
    );
  }
  agent.destroy();
});
