// What each operation of the change language costs on one 10 KiB order (docs/behaviour.md "Versions declared as
// changes"): one declared change at a time, its answer translated back (the engine's own work on the parsed body,
// what a change adds to reading and writing it), against the first edition's five operations. Target: every
// operation ≤ 50 µs per change on a 10 KiB body, within the first five's cost.
//
//   npm run build && node bench/translation-operations.mjs
//
// Each row is timed in BENCH_ROUNDS rounds (default 15) of BENCH_BATCH bodies (default 2000), the rows in a rotating
// order; it reports the median over the rounds of the CPU time per body (user + system of the process) for one
// change at the top level and one inside each of the ~90 lines (`lines[]`), where the operation has both. Header,
// status and path changes translate no body: their rows time what they do per answer (rename the headers of an
// answer; a status's plan and an error envelope's code; a request's target path and a Location). Runs the built
// JavaScript.
import { fileURLToPath } from 'node:url';
import { compileTranslations } from '../gateway/dist/src/translation/compile.js';
import { readJson, writeJson } from '../gateway/dist/src/translation/json-text.js';
import { loadChangeModules } from '../gateway/dist/src/translation/modules.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const BATCH = Number(process.env.BENCH_BATCH ?? 2000);
const ORDER = '/orders/:id';
const LIMITS = { maxDepth: 64, maxBytes: 1024 * 1024 };

/** Version 2's answer: an order of about 10 KiB, its lines with a nested product and a link each. */
function servedBody(bytes = 10 * 1024) {
  const head =
    '{"id":"ord-1001","customer":{"id":"user-1"},"first_name":"Ada","last_name":"Lovelace","total_cents":1999,' +
    '"currency":"EUR","status":"enabled","next":"/v2/orders/ord-1002","lines":[';
  const lines = [];
  let length = head.length;
  for (let i = 0; length < bytes; i++) {
    const line =
      `{"id":"line-${i}","product":{"sku":"sku-${i}"},"price_cents":${100 + i},"state":"shipped",` +
      `"href":"/v2/orders/ord-1001/lines/${i}","qty":${i % 5}}`;
    lines.push(line);
    length += line.length + 1;
  }
  return `${head}${lines.join(',')}]}`;
}

const served = servedBody();
const enveloped = `{"data":${served},"meta":{"request_id":"r-1"}}`;
const errorEnvelope = '{"error":"forbidden","code":403,"message":"not yours"}';

const change = (op, rest) => ({ resource: ORDER, op, ...rest });
const modules = await loadChangeModules(
  [{ version: 1, changes: [change('module', { module: 'split-name.mjs' })] }],
  fileURLToPath(new URL('../gateway/test/translation/modules/versions.json', import.meta.url)),
  LIMITS,
);

/** Version 1's route of the orders, under `changes`. */
function routeOf(changes) {
  const compiled = compileTranslations(
    {
      versions: [{ version: 1, successor: 2, changes }, { version: 2 }],
      resources: [{ path: ORDER, versions: undefined }],
    },
    modules,
  );
  return compiled.versions.get(1).routes.get(ORDER);
}

/** A body row: the answer's plan for `status` applied to a parsed copy of `text` (parsed once, never changed). */
function bodyRow(changes, text = served, status = 200) {
  const route = routeOf(changes);
  const apply = route.answer(status).body;
  if (apply === undefined) throw new Error(`${JSON.stringify(changes)} changes no body`);
  const parsed = readJson(text, 64).value;
  // Checked once: the change does what it says on this body.
  writeJson(apply(parsed));
  return () => apply(parsed);
}

const rows = {
  'no change (the walk alone: nothing to do)': bodyRow([change('rename', { field: 'absent', to: 'gone' })]),
  'rename (top)': bodyRow([change('rename', { field: 'state', to: 'status' })]),
  'rename (each line)': bodyRow([change('rename', { field: 'lines[].state_v1', to: 'lines[].state' })]),
  'scale (top)': bodyRow([change('scale', { field: 'total', to: 'total_cents', factor: 100 })]),
  'scale (each line)': bodyRow([change('scale', { field: 'lines[].price', to: 'lines[].price_cents', factor: 100 })]),
  'add (top)': bodyRow([change('add', { field: 'currency' })]),
  'add (each line)': bodyRow([change('add', { field: 'lines[].qty' })]),
  'remove (top)': bodyRow([change('remove', { field: 'legacy', value: false })]),
  'remove (each line)': bodyRow([change('remove', { field: 'lines[].gift', value: false })]),
  'map (top)': bodyRow([change('map', { field: 'status', values: { active: 'enabled' } })]),
  'map (each line)': bodyRow([change('map', { field: 'lines[].state', values: { done: 'shipped' } })]),
  'move (top)': bodyRow([change('move', { field: 'customer_id', to: 'customer.id' })]),
  'move (each line)': bodyRow([change('move', { field: 'lines[].sku', to: 'lines[].product.sku' })]),
  envelope: bodyRow([change('envelope', { field: 'data' })], enveloped),
  'link (top)': bodyRow([change('link', { field: 'next' })]),
  'link (each line)': bodyRow([change('link', { field: 'lines[].href' })]),
  'on error (a rename of an error envelope)': bodyRow(
    [change('rename', { field: 'details', to: 'message', on: 'error' })],
    errorEnvelope,
    404,
  ),
  'module (split-name.mjs)': bodyRow([change('module', { module: 'split-name.mjs' })]),
};

{
  const route = routeOf([change('status', { from: 403, to: 401 })]);
  const parsed = readJson(errorEnvelope, 64).value;
  rows['status (plan and envelope code, per answer)'] = () => route.answer(403).body(parsed);
}
{
  const route = routeOf([change('header', { name: 'Total-Count', to: 'X-Total-Count' })]);
  const upstream = {
    'content-type': 'application/json',
    'content-length': '10240',
    etag: '"abc"',
    date: 'Sat, 28 Nov 2026 12:00:00 GMT',
    'total-count': '42',
  };
  rows['header (an answer’s headers renamed)'] = () => route.answerHeaders({ ...upstream });
}
{
  const compiled = compileTranslations({
    versions: [
      { version: 1, successor: 2, changes: [{ resource: '/clients/:id', op: 'path', to: '/users/:id' }] },
      { version: 2 },
    ],
    resources: [
      { path: '/clients/:id', versions: [1] },
      { path: '/users/:id', versions: [2] },
    ],
  });
  const route = compiled.versions.get(1).routes.get('/clients/:id');
  rows['path (a target and a Location)'] = () => route.location(`/v2${route.target('/clients/u-1')}`);
}

const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];

function batch(work, size) {
  const cpu = process.cpuUsage();
  for (let i = 0; i < size; i++) work();
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / size;
}

const names = Object.keys(rows);
for (const name of names) batch(rows[name], BATCH / 4);
const figures = Object.fromEntries(names.map((name) => [name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < names.length; i++) {
    const name = names[(i + round) % names.length];
    figures[name].push(batch(rows[name], BATCH));
  }
}
console.log(
  `Node ${process.version}; a ${served.length}-byte order (${(served.match(/"line-/g) ?? []).length} lines); ` +
    `${ROUNDS} rounds of ${BATCH}; CPU µs per body (or per answer), median over the rounds`,
);
console.log('| operation (one change) | CPU µs |');
console.log('|---|---:|');
for (const name of names) console.log(`| ${name} | ${median(figures[name]).toFixed(2)} |`);
