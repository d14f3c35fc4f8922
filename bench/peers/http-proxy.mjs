// Node peer in bench/http.mjs: http-proxy (node-http-proxy), the most used Node reverse-proxy package,
// on node:http with a keep-alive agent (128 sockets, as the gateway's pool), X-Forwarded-* by its `xfwd`
// option, and the version headers of bench/peers/versioning.mjs. No logging or metrics.
// Run with GATEWAY_PORT and BACKEND_URL set.
import { Agent, createServer } from 'node:http';
import httpProxy from 'http-proxy';
import { announce, requestId, route } from './versioning.mjs';

const agent = new Agent({ keepAlive: true, maxSockets: 128 });
const proxy = httpProxy.createProxyServer({ target: process.env.BACKEND_URL, agent, xfwd: true });
proxy.on('error', (_error, _req, res) => {
  if (!res.headersSent) res.writeHead(502);
  res.end();
});

const server = createServer((req, res) => {
  const id = requestId(req.headers['x-request-id']);
  res.setHeader('x-request-id', id);
  const target = route(req.url, req.headers['api-version']);
  if (target.status !== undefined) {
    res.writeHead(target.status).end();
    return;
  }
  for (const [name, value] of Object.entries(target.headers)) res.setHeader(name, value);
  req.url = target.path;
  req.headers['x-request-id'] = id;
  proxy.web(req, res);
});
server.listen(Number(process.env.GATEWAY_PORT), '127.0.0.1', () => announce(server));
process.on('SIGTERM', () => process.exit(0));
