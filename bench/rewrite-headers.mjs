// The response-header rewrite of two gateway builds in isolation: what one proxied answer's rewrite costs,
// too little for bench/ab.mjs's side-by-side pairs to resolve on this host.
//
// node bench/rewrite-headers.mjs <build-a>/gateway/dist/src/proxy/backend.js
// <build-b>/gateway/dist/src/proxy/backend.js
//
// Each build's `backendReplyOptions.rewriteHeaders` gets the headers a users-orders answer carries, and every
// header of its result is read once, as reply-from's copy into the reply does; 2 million times per round, three
// rounds, builds in turns, beside the same loop without a rewrite. Prints nanoseconds per answer. Run it on the
// image's Node (e.g. `npm exec --yes --package=node@24 -- node bench/rewrite-headers.mjs …`).
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const files = process.argv.slice(2);
if (files.length !== 2) {
  process.stderr.write('usage: node bench/rewrite-headers.mjs <backend.js of build A> <backend.js of build B>\n');
  process.exit(2);
}
const [a, b] = await Promise.all(files.map((file) => import(pathToFileURL(resolve(file)).href)));

/** What the backend (Fastify behind Node's HTTP server) answers a GET of one order with, as undici parses it. */
const answerHeaders = () => ({
  'content-type': 'application/json; charset=utf-8',
  'x-request-id': '3f0c6a8e-4b7d-4c1e-9a51-2d6f0b8e7c11',
  'content-length': '120',
  date: 'Thu, 26 Nov 2026 03:56:37 GMT',
  connection: 'keep-alive',
  'keep-alive': 'timeout=72',
});

/** Reads every header as reply-from's copyHeaders does; the sum keeps the reads from being optimised away. */
function readAll(headers) {
  let length = 0;
  for (const name of Object.keys(headers)) if (name.charCodeAt(0) !== 58) length += String(headers[name]).length;
  return length;
}

const ROUNDS = 3;
const RUNS = 2_000_000;
const candidates = [
  ['no rewrite', (headers) => headers],
  ['A', (headers) => a.backendReplyOptions.rewriteHeaders(headers)],
  ['B', (headers) => b.backendReplyOptions.rewriteHeaders(headers)],
];
process.stdout.write(`Node ${process.version}; A ${files[0]}; B ${files[1]}\n`);
for (let round = 1; round <= ROUNDS; round++) {
  const line = candidates.map(([name, rewrite]) => {
    let sink = 0;
    const start = process.hrtime.bigint();
    for (let run = 0; run < RUNS; run++) sink += readAll(rewrite(answerHeaders()));
    const ns = Number(process.hrtime.bigint() - start) / RUNS;
    return `${name} ${ns.toFixed(0)} ns${sink === 0 ? '!' : ''}`;
  });
  process.stdout.write(`round ${round}: ${line.join(', ')}\n`);
}
