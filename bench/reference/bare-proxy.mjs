// Reference for bench/README.md, and a Node peer in bench/http.mjs: the least a Node proxy does per
// request — node:http in, one undici Pool to the backend (128 connections, as the gateway's), the body
// buffered and passed on, the request id, X-Forwarded-* and the version headers of
// bench/peers/versioning.mjs. No framework, logging or metrics.
// Run by bench/ab.mjs and bench/http.mjs with GATEWAY_PORT and BACKEND_URL set.
import { createServer } from 'node:http';
import { Pool } from 'undici';
import { announce, requestId, route } from '../peers/versioning.mjs';

const pool = new Pool(process.env.BACKEND_URL, { connections: 128 });

const server = createServer(async (req, res) => {
  const id = requestId(req.headers['x-request-id']);
  const target = route(req.url, req.headers['api-version']);
  if (target.status !== undefined) {
    res.writeHead(target.status, { 'x-request-id': id }).end();
    return;
  }
  try {
    const headers = {
      'x-request-id': id,
      'x-forwarded-for': req.socket.remoteAddress,
      'x-forwarded-proto': 'http',
      'x-forwarded-host': req.headers.host,
    };
    const type = req.headers['content-type'];
    if (type !== undefined) headers['content-type'] = type;
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const upstream = await pool.request({
      method: req.method,
      path: target.path,
      headers,
      body: hasBody ? req : undefined,
    });
    const body = Buffer.from(await upstream.body.arrayBuffer());
    res.writeHead(upstream.statusCode, {
      'content-type': upstream.headers['content-type'],
      'x-request-id': id,
      ...target.headers,
    });
    res.end(body);
  } catch {
    res.writeHead(502).end();
  }
});
server.listen(Number(process.env.GATEWAY_PORT), '127.0.0.1', () => announce(server));
process.on('SIGTERM', () => process.exit(0));
