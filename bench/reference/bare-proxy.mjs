// Reference for bench/README.md "What limits it": the least a Node proxy does per request — node:http
// in, one undici Pool to the backend, body buffered and passed on. No framework, logging or metrics.
// Run by bench/ab.mjs with GATEWAY_PORT and BACKEND_URL set.
import { createServer } from 'node:http';
import { Pool } from 'undici';

const pool = new Pool(process.env.BACKEND_URL, { connections: 128 });

const server = createServer(async (req, res) => {
  try {
    const upstream = await pool.request({ method: req.method, path: req.url, headers: { 'x-request-id': 'bench' } });
    const body = Buffer.from(await upstream.body.arrayBuffer());
    res.writeHead(upstream.statusCode, { 'content-type': upstream.headers['content-type'], vary: 'API-Version' });
    res.end(body);
  } catch {
    res.writeHead(502).end();
  }
});
server.listen(Number(process.env.GATEWAY_PORT), '127.0.0.1', () => {
  // The line bench/harness.mjs waits for, shaped like the services' own.
  process.stdout.write(`${JSON.stringify({ msg: 'listening', api: `http://127.0.0.1:${server.address().port}` })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
