// What translating one body costs the gateway: an order answer of a version declared as ten changes, read back
// from its serving version (backward, as every translated 2xx answer is) and a request body forward, at 16 KiB and
// at 1 MiB. Times the whole added work per body (reading the text: depth, exact numbers, key order; the changes;
// writing it) against JSON.parse + JSON.stringify of the same text, and the changes alone. At 1 MiB also a body
// whose numbers need their source text (64-bit ids: the reviver's slower parse).
//
// Each row is timed in BENCH_ROUNDS rounds (default 15) of a batch of bodies, the rows in a rotating order, and
// reports the median over the rounds of the process's CPU time per body (user + system, all its threads: the
// garbage collector's too) and of the wall time per body; the ratio is the median of each round's CPU ratio to
// JSON.parse + JSON.stringify. CPU time is what a busy host disturbs least. Runs the built JavaScript
// (`npm run build` first).
//
// Environment: BENCH_ROUNDS; BENCH_BATCH (16 KiB bodies per batch, default 500; 1 MiB batches are a fiftieth).
import { compileTranslations } from '../gateway/dist/src/translation/compile.js';
import { readJson, writeJson } from '../gateway/dist/src/translation/json-text.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const BATCH = Number(process.env.BENCH_BATCH ?? 500);
const ORDER = '/orders/:id';
const MAX_DEPTH = 64;

/** Ten changes of every kind, top level and inside array items. */
const changes = [
  { resource: ORDER, op: 'rename', field: 'user_id', to: 'customer_id' },
  { resource: ORDER, op: 'scale', field: 'total', to: 'total_cents', factor: 100 },
  { resource: ORDER, op: 'add', field: 'currency', default: 'EUR' },
  { resource: ORDER, op: 'remove', field: 'legacy', value: false },
  { resource: ORDER, op: 'map', field: 'status', values: { active: 'enabled', closed: 'archived' } },
  { resource: ORDER, op: 'rename', field: 'lines[].sku', to: 'lines[].article' },
  { resource: ORDER, op: 'scale', field: 'lines[].price', to: 'lines[].price_cents', factor: 100 },
  { resource: ORDER, op: 'map', field: 'lines[].state', values: { open: 'pending', done: 'shipped' } },
  { resource: ORDER, op: 'add', field: 'lines[].warehouse', default: 'main' },
  { resource: ORDER, op: 'remove', field: 'lines[].gift', value: false },
];

/** The serving version's answer: an order with enough lines to weigh `bytes`; `id(i)` is each line's id. */
function servedBody(bytes, id = (i) => `"line-${i}"`) {
  const head =
    '{"id":"ord-1001","customer_id":"user-1","total_cents":1999,"currency":"EUR","status":"enabled","lines":[';
  const lines = [];
  let length = head.length;
  for (let i = 0; length < bytes; i++) {
    const state = i % 2 ? 'pending' : 'shipped';
    const line =
      `{"id":${id(i)},"article":"sku-${i}","price_cents":${100 + i},"state":"${state}",` +
      `"warehouse":"main","qty":${i % 5}}`;
    lines.push(line);
    length += line.length + 1;
  }
  return `${head}${lines.join(',')}]}`;
}

const route = compileTranslations({
  versions: [{ version: 1, successor: 2, changes }, { version: 2 }],
  resources: [{ path: ORDER, versions: undefined }],
})
  .versions.get(1)
  .routes.get(ORDER);
const forward = route.requestBody;
const backward = route.answer(200).body;

const translateBack = (text) => writeJson(backward(readJson(text, MAX_DEPTH).value));
const translateForward = (text) => writeJson(forward(readJson(text, MAX_DEPTH).value));
const plain = (text) => JSON.stringify(JSON.parse(text));

const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];

/** CPU and wall ms per body of `work` over a batch. */
function batch(work, size) {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (let i = 0; i < size; i++) work();
  const wall = Number(process.hrtime.bigint() - start) / 1e6 / size;
  const used = process.cpuUsage(cpu);
  return { cpu: (used.user + used.system) / 1000 / size, wall };
}

/** Rows (name → work) timed in rotating order; the first is the baseline of the ratios. */
function measure(label, bytes, rows, size) {
  const names = Object.keys(rows);
  for (const name of names) batch(rows[name], Math.max(5, size / 5));
  const figures = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + round) % names.length];
      figures[name].push(batch(rows[name], size));
    }
  }
  const baseline = figures[names[0]];
  for (const name of names) {
    const cpu = median(figures[name].map(({ cpu }) => cpu));
    const wall = median(figures[name].map(({ wall }) => wall));
    const ratio = median(figures[name].map(({ cpu }, round) => cpu / baseline[round].cpu));
    console.log(`| ${label} (${bytes} B) | ${name} | ${cpu.toFixed(3)} | ${wall.toFixed(3)} | ${ratio.toFixed(2)}× |`);
  }
}

console.log(`Node ${process.version}; ${changes.length} changes; ${ROUNDS} rounds; medians over the rounds`);
console.log('| body | row | CPU ms per body | wall ms per body | CPU ratio to parse + stringify |');
console.log('|---|---|---:|---:|---:|');
for (const [label, bytes, size] of [
  ['16 KiB', 16 * 1024, BATCH],
  ['1 MiB', 1024 * 1024, Math.max(2, Math.round(BATCH / 50))],
]) {
  const served = servedBody(bytes);
  const requested = translateBack(served);
  const parsed = readJson(served, MAX_DEPTH).value;
  const rows = {
    'JSON.parse + JSON.stringify alone': () => plain(served),
    'answer backward: read + changes + write': () => translateBack(served),
    'answer backward: the changes alone': () => backward(parsed),
    'request forward: read + changes + write': () => translateForward(requested),
  };
  if (bytes > 16 * 1024) {
    const wideIds = servedBody(bytes, (i) => String(123456789012345678n + BigInt(i)));
    rows['answer backward, 64-bit ids (numbers kept as text)'] = () => translateBack(wideIds);
  }
  measure(label, served.length, rows, size);
}
