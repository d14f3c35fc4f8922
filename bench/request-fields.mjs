// What recording an authenticated request's field paths costs on a translated route: the time of one
// `sent(request, body)` (gateway/src/consumers/request-fields.ts) for bodies of a few sizes, once the consumer's
// field tree knows them (every request after its first), against a translated request's gateway CPU per request
// (130–176 µs on a busy host: bench/README.md "Translation that fails closed").
//
//   npm run build && node bench/request-fields.mjs
//
// Untranslated routes record only bodies the gateway already holds whole; streamed ones are never read.
import { performance } from 'node:perf_hooks';
import { createRequestFields } from '../gateway/dist/src/consumers/request-fields.js';

const noStore = { addRequestFields: async () => undefined };
const fields = createRequestFields({
  store: noStore,
  // Nothing is logged unless the store fails, which this one never does.
  logger: { warn: () => undefined, info: () => undefined },
  clock: () => Date.now(),
  countDropped: () => undefined,
  flushIntervalMs: 3_600_000,
});
const request = {
  consumer: 'acme',
  method: 'POST',
  routeOptions: { url: '/v1/orders/:id' },
  // v1 has a successor (v2): only such a version's requests are recorded.
  apiVersion: { version: 1, selectedBy: 'path', successor: 2 },
};
const bodies = {
  'an order (4 fields)': { user_id: 'user-1', total: 19.99, status: 'paid', note: 'leave at the door' },
  'an order with 3 lines (4 + 3 × 3 fields)': {
    user_id: 'user-1',
    total: 19.99,
    customer: { id: 'c-1', email: 'a@example.com' },
    lines: [1, 2, 3].map((n) => ({ sku: `sku-${n}`, qty: n, price: 1.5 })),
  },
  'a list of 100 lines': { lines: Array.from({ length: 100 }, (_, n) => ({ sku: `sku-${n}`, qty: n, price: 1.5 })) },
};
process.stdout.write(`Node ${process.version}\n`);
for (const [name, body] of Object.entries(bodies)) {
  for (let i = 0; i < 10_000; i++) fields.sent(request, body);
  const runs = 200_000;
  const started = performance.now();
  for (let i = 0; i < runs; i++) fields.sent(request, body);
  const us = ((performance.now() - started) * 1000) / runs;
  process.stdout.write(`${name}: ${us.toFixed(3)} µs per request\n`);
}
await fields.close();
