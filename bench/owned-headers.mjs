// What the gateway's header and query-key rules add to every request, in isolation: too little for bench/ab.mjs's
// side-by-side pairs to resolve on a shared host.
//
// node bench/owned-headers.mjs <build-a root> <build-b root>
//
// For each build, `backendReplyOptions.rewriteRequestHeaders` on the headers of a plain request and of one that
// sends its own Forwarded; for build B also the refusal of a key in the query (the onRequest hook) and the log line's
// URL redaction, on a URL without a query and on one with a listed parameter. 2 million calls per row and round,
// three rounds, builds in turns. Prints nanoseconds per call. Run it on the image's Node (e.g.
// `npm exec --yes --package=node@24 -- node bench/owned-headers.mjs …`), `npm run build` first in both roots.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const roots = process.argv.slice(2).map((root) => resolve(root));
if (roots.length !== 2) {
  process.stderr.write('usage: node bench/owned-headers.mjs <build-a root> <build-b root>\n');
  process.exit(2);
}
const load = (root, file) => import(pathToFileURL(join(root, file)).href);
const builds = await Promise.all(
  roots.map(async (root, index) => ({
    name: index === 0 ? 'A' : 'B',
    backend: await load(root, 'gateway/dist/src/proxy/backend.js'),
    queryKeys: existsSync(join(root, 'gateway/dist/src/consumers/query-keys.js'))
      ? {
          hook: await load(root, 'gateway/dist/src/consumers/query-keys.js'),
          platform: await load(root, 'platform/dist/query-keys.js'),
        }
      : undefined,
  })),
);

/** What curl sends, as Node parses it. */
const plain = { host: 'localhost:8080', 'user-agent': 'curl/8.14.1', accept: '*/*' };
const withForwarded = { ...plain, forwarded: 'for=198.51.100.7;proto=https', 'x-real-ip': '198.51.100.7' };

/** A request as rewriteRequestHeaders reads it: reply-from hands it a copy of the client's headers. */
const requestOf = (headers) => ({
  raw: { headers, socket: {} },
  headers,
  ip: '127.0.0.1',
  id: 'r-1',
  consumer: null,
});

const ROUNDS = 3;
const RUNS = 2_000_000;

function time(run) {
  for (let i = 0; i < 100_000; i++) run();
  const started = process.hrtime.bigint();
  let sink = 0;
  for (let i = 0; i < RUNS; i++) sink += run();
  const ns = Number(process.hrtime.bigint() - started) / RUNS;
  if (sink === -1) process.stdout.write('');
  return ns;
}

const rows = new Map();
const note = (row, ns) => rows.set(row, [...(rows.get(row) ?? []), ns]);
for (let round = 0; round < ROUNDS; round++) {
  for (const { name, backend, queryKeys } of round % 2 === 0 ? builds : [...builds].reverse()) {
    const rewrite = backend.backendReplyOptions.rewriteRequestHeaders;
    for (const [label, headers] of [
      ['plain request', plain],
      ['request with its own Forwarded, X-Real-IP', withForwarded],
    ]) {
      const request = requestOf(headers);
      note(
        `${name} rewriteRequestHeaders, ${label}`,
        time(() => Object.keys(rewrite(request, { ...headers })).length),
      );
    }
    if (queryKeys === undefined) continue;
    const names = queryKeys.platform.queryKeyNames(queryKeys.platform.DEFAULT_QUERY_KEY_PARAMETERS);
    const hook = queryKeys.hook.refuseKeysInQuery(names);
    for (const url of ['/v2/orders/ord-1001', '/api/users/page?limit=1&token=abc']) {
      let passed = 0;
      const request = { url };
      const done = () => passed++;
      note(
        `${name} key-in-query check, ${url}`,
        time(() => (hook(request, undefined, done), passed)),
      );
      note(
        `${name} log URL redaction, ${url}`,
        time(() => queryKeys.platform.redactQueryKeys(url, names).length),
      );
    }
  }
}
process.stdout.write(`Node ${process.version}, ${RUNS} calls per row and round, ${ROUNDS} rounds\n`);
for (const [row, samples] of rows) {
  const sorted = [...samples].sort((x, y) => x - y);
  const shown = samples.map((ns) => ns.toFixed(0)).join(' / ');
  process.stdout.write(`${row}: median ${sorted[Math.floor(sorted.length / 2)].toFixed(0)} ns (${shown})\n`);
}
