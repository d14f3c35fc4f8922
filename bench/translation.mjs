// What translating one body costs the gateway: a 16 KiB JSON answer of a version declared as ten changes, read
// back from its serving version (backward, as every translated 2xx answer is) and a request body forward. Times
// the whole added work per body (JSON.parse, the changes, JSON.stringify) and the changes alone, each as p50 and
// p99 over many bodies after a warm-up. Runs the built JavaScript (`npm run build` first).
//
// Environment: BENCH_ITERATIONS (timed bodies per row, default 20000).
import { compileTranslations } from '../gateway/dist/src/translation/engine.js';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 20_000);
const WARM_UP = 2_000;
const ORDER = '/orders/:id';

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

/** The serving version's answer: an order with enough lines to weigh 16 KiB. */
function servedBody() {
  const lines = [];
  const body = { id: 'ord-1001', customer_id: 'user-1', total_cents: 1999, currency: 'EUR', status: 'enabled', lines };
  for (let i = 0; JSON.stringify(body).length < 16 * 1024; i++) {
    const state = i % 2 ? 'pending' : 'shipped';
    lines.push({ article: `sku-${i}`, price_cents: 100 + i, state, warehouse: 'main', qty: i % 5 });
  }
  return JSON.stringify(body);
}

const translations = compileTranslations([{ version: 1, successor: 2, changes }, { version: 2 }]);
const { backward, forward } = translations.get(1).resources.get(ORDER);
const served = servedBody();
const requested = (() => {
  const body = JSON.parse(served);
  backward(body);
  return JSON.stringify(body);
})();

function percentiles(samples) {
  samples.sort((a, b) => a - b);
  const at = (p) => samples[Math.min(samples.length - 1, Math.floor(samples.length * p))];
  return { p50: at(0.5), p99: at(0.99) };
}

/** Times `work` per body; `prepare` (untimed) makes its argument. */
function time(label, work, prepare = () => undefined) {
  for (let i = 0; i < WARM_UP; i++) work(prepare());
  const samples = new Float64Array(ITERATIONS);
  for (let i = 0; i < ITERATIONS; i++) {
    const input = prepare();
    const start = process.hrtime.bigint();
    work(input);
    samples[i] = Number(process.hrtime.bigint() - start) / 1e6;
  }
  const { p50, p99 } = percentiles(Array.from(samples));
  console.log(`| ${label} | ${p50.toFixed(4)} | ${p99.toFixed(4)} |`);
}

const sizes = `body ${Buffer.byteLength(served)} bytes served, ${Buffer.byteLength(requested)} bytes as translated`;
console.log(`Node ${process.version}; ${sizes}; ${changes.length} changes; ${ITERATIONS} bodies per row`);
console.log('| row | p50 ms | p99 ms |');
console.log('|---|---:|---:|');
time('answer backward: parse + changes + stringify', () => {
  const body = JSON.parse(served);
  backward(body);
  return JSON.stringify(body);
});
time(
  'answer backward: the changes alone',
  (body) => backward(body),
  () => JSON.parse(served),
);
time('request forward: parse + changes + stringify', () => {
  const body = JSON.parse(requested);
  forward(body);
  return JSON.stringify(body);
});
time('parse + stringify alone (no changes)', () => JSON.stringify(JSON.parse(served)));
