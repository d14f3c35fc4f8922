// Node peer in bench/http.mjs: stock Fastify with @fastify/http-proxy (no logger, metrics or hooks of
// ours), adding the version headers of bench/peers/versioning.mjs through its documented options:
// `rewriteUrl` maps the header form to a path version, reply-from's rewriteHeaders adds the response
// headers, rewriteRequestHeaders the request id and X-Forwarded-*. Run with GATEWAY_PORT and BACKEND_URL set;
// PEER_LOGGER=true turns on Fastify's standard request logging (`logger: true`: pino to stdout, a line when
// a request comes in and one when it completes) with reply-from's own two lines per request off
// (`disableRequestLogging`), as an operator who wants an access log would run the stock proxy.
import Fastify from 'fastify';
import httpProxy from '@fastify/http-proxy';
import { announce, requestId, route } from './versioning.mjs';

/** The route of each request, found once in rewriteUrl (before Fastify routes) and read in the hooks. */
const routes = new WeakMap();

const app = Fastify({
  logger: process.env.PEER_LOGGER === 'true',
  rewriteUrl(req) {
    const target = route(req.url, req.headers['api-version']);
    routes.set(req, target);
    return target.status === undefined ? target.path : '/-/refused';
  },
});
app.get('/-/refused', (request, reply) => {
  void reply.code(routes.get(request.raw).status).send();
});
await app.register(httpProxy, {
  upstream: process.env.BACKEND_URL,
  undici: { connections: 128 },
  disableRequestLogging: true,
  replyOptions: {
    rewriteRequestHeaders(request, headers) {
      const id = requestId(request.headers['x-request-id']);
      request.raw.requestId = id;
      return {
        ...headers,
        'x-request-id': id,
        'x-forwarded-for': request.ip,
        'x-forwarded-proto': 'http',
        'x-forwarded-host': request.headers.host,
      };
    },
    rewriteHeaders(headers, request) {
      return { ...headers, 'x-request-id': request.raw.requestId, ...routes.get(request.raw).headers };
    },
  },
});
await app.listen({ port: Number(process.env.GATEWAY_PORT), host: '127.0.0.1' });
announce(app.server);
process.on('SIGTERM', () => process.exit(0));
