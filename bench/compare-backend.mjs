// The backend of bench/compare-cost.mjs: an order as SPEC's v1 presenter serves it and as v2 does, as a backend
// still serving v1 itself answers both while its v1 is compared with the declarations. Prints the line
// bench/harness.mjs startNode waits for.
import { createServer } from 'node:http';

const v1 = JSON.stringify({ id: 'ord-1001', user_id: 'user-1', total: 19.99 });
const v2 = JSON.stringify({ id: 'ord-1001', customer_id: 'user-1', total_cents: 1999, currency: 'EUR' });
const server = createServer((req, res) => {
  const body = req.url?.startsWith('/v1/orders/') ? v1 : req.url?.startsWith('/v2/orders/') ? v2 : undefined;
  if (body === undefined) res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
  else res.writeHead(200, { 'content-type': 'application/json' }).end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const url = `http://127.0.0.1:${server.address().port}`;
  process.stdout.write(`${JSON.stringify({ msg: 'listening', api: url, admin: url })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
