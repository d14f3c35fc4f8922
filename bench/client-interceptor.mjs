// What @version-router/client adds to each response a consumer receives: createFetch around a fetch, and
// deprecationInterceptor around an undici dispatch. The transport is a stand-in that answers at once with a
// prepared response, so the figure is the kit's own work (headers set and read, the operation's shape, the
// once-per-operation lookup), not the network's. Each case runs against the same stand-in without the kit;
// the difference per call is the cost. Results: bench/README.md "Consumer kit".
//
//   npm run build && node bench/client-interceptor.mjs [calls per round, default 200000] [rounds, default 7]
import { createFetch } from '../client/dist/index.js';
import { deprecationInterceptor } from '../client/dist/undici.js';

const CALLS = Number(process.argv[2] ?? 200_000);
const ROUNDS = Number(process.argv[3] ?? 7);
const BASE = 'http://127.0.0.1:8080';
const DEPRECATED = {
  deprecation: 'true',
  sunset: 'Fri, 01 Jan 2027 00:00:00 GMT',
  link: '</v2/orders/ord-1>; rel="successor-version"',
  'api-version': '1',
};
const CURRENT = { 'api-version': '2', 'content-type': 'application/json' };

// The guide lookup is answered by a stand-in too (GET /versions, once).
const versions = () => Response.json({ versions: [{ version: 1, changes: '/versions/1/changes' }] });
const quiet = () => {};

/** Nanoseconds per call of `call(i)`, awaited one after the other. */
async function timeAsync(call) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i += 1) await call(i);
  return Number(process.hrtime.bigint() - start) / CALLS;
}

function timeSync(call) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i += 1) call(i);
  return Number(process.hrtime.bigint() - start) / CALLS;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function fetchCase(name, headers, options) {
  const answer = new Response(null, { headers });
  const transport = async (input) => (String(input).endsWith('/versions') ? versions() : answer);
  const kit = createFetch({ ...options, fetch: transport, onDeprecation: quiet });
  return {
    name,
    bare: () => timeAsync((i) => transport(`${BASE}/v1/orders/ord-${i}`)),
    kit: () => timeAsync((i) => kit(`${BASE}/v1/orders/ord-${i}`)),
  };
}

function interceptorCase(name, headers) {
  // A dispatch that answers at once: what undici's Agent does after the socket, minus the socket.
  const dispatch = (opts, handler) => {
    handler.onRequestStart?.({}, {});
    handler.onResponseStart?.({}, 200, headers, 'OK');
    handler.onResponseEnd?.({}, {});
    return true;
  };
  const handler = { onRequestStart() {}, onResponseStart() {}, onResponseEnd() {} };
  const intercepted = deprecationInterceptor({ fetch: versions, onDeprecation: quiet })(dispatch);
  const opts = (i) => ({ origin: BASE, path: `/v1/orders/ord-${i}`, method: 'GET', headers: { 'api-key': 'k' } });
  return {
    name,
    bare: () => timeSync((i) => dispatch(opts(i), handler)),
    kit: () => timeSync((i) => intercepted(opts(i), handler)),
  };
}

const cases = [
  fetchCase('createFetch, current version', CURRENT, {}),
  fetchCase('createFetch, current version, API-Key and API-Version set', CURRENT, { apiKey: 'vr_key', apiVersion: 2 }),
  fetchCase('createFetch, deprecated version (a new id each call)', DEPRECATED, {}),
  interceptorCase('interceptor, current version', CURRENT),
  interceptorCase('interceptor, deprecated version (a new id each call)', DEPRECATED),
];

console.log(`node ${process.version}, ${CALLS} calls per round, ${ROUNDS} rounds; median of the rounds`);
for (const { name, bare, kit } of cases) {
  await kit(); // warm-up, and the one report of the deprecated operation
  const costs = [];
  const bares = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const without = await bare();
    const withKit = await kit();
    bares.push(without);
    costs.push(withKit - without);
  }
  console.log(
    `${name}: ${(median(costs) / 1000).toFixed(2)} µs per response added (stand-in alone ` +
      `${(median(bares) / 1000).toFixed(2)} µs)`,
  );
}
