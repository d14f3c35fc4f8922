// An OTLP/HTTP trace sink for the benchmarks that run the processes with tracing on (bench/ab.mjs BENCH_TRACING_*):
// it reads and discards every export and answers success, so what is measured is the processes' cost of tracing,
// not a collector's. Logs its address as the services do ("listening"), which bench/harness.mjs startNode reads.
import { createServer } from 'node:http';

let spansBytes = 0;
const server = createServer((req, res) => {
  req.on('data', (chunk) => {
    spansBytes += chunk.length;
  });
  req.on('end', () => {
    const json = String(req.headers['content-type']).startsWith('application/json');
    res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const url = `http://127.0.0.1:${server.address().port}`;
  process.stdout.write(`${JSON.stringify({ msg: 'listening', api: url, admin: url })}\n`);
});
const stop = () => {
  process.stdout.write(`${JSON.stringify({ msg: 'stopped', receivedBytes: spansBytes })}\n`);
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
