// The request's log line of two builds in isolation: what one `request completed` line costs, from the logger
// call to its bytes on stdout, too little for bench/ab.mjs's side-by-side pairs to resolve on a busy host.
//
//   node bench/log-lines.mjs <build-a>/platform/dist/logger.js <build-b>/platform/dist/logger.js [rounds]
//
// Each round runs each build in a process of its own (builds in turns, A first in odd rounds), its stdout on
// /dev/null as a file descriptor, as a container's log would take it: the build's createLogger (JSON, batched
// stdout), a child logger per line with the request id, as Fastify makes one per request, and the gateway's
// completion line on it, 300,000 times after 50,000 to warm up. Prints the CPU ns per line of each (utime +
// stime of the process around the loop) and the median B/A over the rounds (default 8). Run it on the image's
// Node (e.g. `npm exec --yes --package=node@24 -- node bench/log-lines.mjs …`).
import { spawnSync } from 'node:child_process';
import { openSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [fileA, fileB, roundsArg] = process.argv.slice(2);
if (fileA === undefined || fileB === undefined) {
  process.stderr.write('usage: node bench/log-lines.mjs <logger.js of build A> <logger.js of build B> [rounds]\n');
  process.exit(2);
}
const rounds = Number(roundsArg ?? 8);

const script = (file) => `
import { createLogger } from ${JSON.stringify(pathToFileURL(resolve(file)).href)};
const log = createLogger('info', 'gateway', { pretty: false });
const line = { method: 'GET', url: '/v2/orders/ord-1001', route: '/v2/orders/:id', statusCode: 200, responseTimeMs: 0.42 };
const ids = Array.from({ length: 1024 }, () => crypto.randomUUID());
const lines = (n) => { for (let i = 0; i < n; i++) log.child({ reqId: ids[i & 1023] }, {}).info(line, 'request completed'); };
lines(50_000);
const before = process.cpuUsage();
lines(300_000);
const used = process.cpuUsage(before);
process.stderr.write(String(((used.user + used.system) * 1000) / 300_000));
`;

const devNull = openSync('/dev/null', 'w');
const nsPerLine = (file) => {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script(file)], {
    stdio: ['ignore', devNull, 'pipe'],
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`${file}: ${run.stderr}`);
  return Number(run.stderr);
};

process.stdout.write(`A ${fileA}\nB ${fileB}\nNode ${process.version}, ${rounds} rounds\n`);
const ratios = [];
for (let round = 0; round < rounds; round++) {
  const figures = {};
  for (const [name, file] of round % 2 === 0
    ? [
        ['a', fileA],
        ['b', fileB],
      ]
    : [
        ['b', fileB],
        ['a', fileA],
      ]) {
    figures[name] = nsPerLine(file);
  }
  ratios.push(figures.b / figures.a);
  process.stdout.write(
    `round ${round + 1}: A ${figures.a.toFixed(0)} ns/line | B ${figures.b.toFixed(0)} ns/line | B/A ${(figures.b / figures.a).toFixed(3)}\n`,
  );
}
const sorted = [...ratios].sort((x, y) => x - y);
const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(3);
process.stdout.write(
  `median B/A ${at(0.5)} (quartiles ${at(0.25)}–${at(0.75)}), B lower in ${ratios.filter((r) => r < 1).length} of ${ratios.length}\n`,
);
