import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the stub saw of one proxied request. */
interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A request whose head reached the stub, and how far its body got. */
export interface Arrival {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  receivedBytes: number;
  /** The whole body arrived. */
  complete: boolean;
  /** performance.now() when the connection or request went away before the body was complete. */
  abortedAt?: number;
}

/** Under this path the stub starts its answer at once and never finishes it: a response in progress. */
export const EARLY_ANSWER_PATH = '/api/users/early-answer';

export interface StubBackend {
  url: string;
  /** Each request whose body arrived whole, once it had. */
  seen: SeenRequest[];
  /** Each request whose head has arrived, its body not yet necessarily. */
  arrived: Arrival[];
  /** Delay before answering, to provoke the gateway's 504. */
  delayMs: number;
  close(): Promise<void>;
}

/** What the stub serves at every `/openapi.json`: one path item with two operations and a non-operation key. */
export const STUB_OPENAPI = {
  openapi: '3.1.0',
  info: { title: 'stub', version: '1' },
  paths: {
    '/v1/orders/{id}': {
      summary: 'an order',
      get: { responses: { 200: { description: 'ok' } } },
      delete: { deprecated: false, responses: {} },
    },
    '/api/users': { get: { responses: { 200: { description: 'users' } } } },
  },
};

/** What the stub serves at every `/orders/accented`: a small JSON body that is not ASCII. */
export const ACCENTED_BODY = '{"customer":"Zoë Ünal","city":"Zürich","note":"日本語 ✓"}';

function answer(req: SeenRequest): { status: number; headers: Record<string, string>; body: string } {
  const path = req.url.split('?', 1)[0] ?? '';
  if (path.endsWith('/orders/missing')) {
    // Mirrors the backend's two not-found forms: text/plain under /api, the JSON ErrorResponse bare.
    return path.startsWith('/api/')
      ? { status: 404, headers: { 'content-type': 'text/plain' }, body: 'order not found' }
      : {
          status: 404,
          headers: { 'content-type': 'application/json' },
          body: '{"error":"order not found","code":404}',
        };
  }
  if (path.endsWith('/orders/unavailable'))
    return { status: 503, headers: { 'content-type': 'application/json' }, body: '{}' };
  if (path.endsWith('/orders/varied')) {
    // Headers the gateway's version policy owns, sent by a backend that should not: they must not reach the client.
    const owned = {
      deprecation: 'false',
      sunset: 'never',
      link: '</elsewhere>; rel="next"',
      'api-version': '99',
      'api-supported-versions': '99',
      'api-deprecated-versions': '98',
    };
    return {
      status: 200,
      headers: { 'content-type': 'application/json', vary: 'Accept-Encoding', 'retry-after': '120', ...owned },
      body: '{}',
    };
  }
  if (path.endsWith('/hop-by-hop')) {
    // Hop-by-hop headers, one of them (x-hop) only because Connection names it, beside an end-to-end one.
    const hopByHop = {
      connection: 'keep-alive, X-Hop',
      'keep-alive': 'timeout=5',
      'x-hop': '1',
      'proxy-connection': 'keep-alive',
      upgrade: 'h2c',
    };
    return {
      status: 200,
      headers: { 'content-type': 'application/json', ...hopByHop, 'x-end-to-end': 'kept' },
      body: '{}',
    };
  }
  if (path.endsWith('/orders/typed')) {
    // Answers with the Content-Type its `type` query parameter names, to show the gateway passes it on as it came.
    const type = new URLSearchParams(req.url.slice(path.length)).get('type') ?? 'application/json';
    return { status: 200, headers: { 'content-type': type }, body: '{"typed":true}' };
  }
  if (path.endsWith('/orders/accented'))
    return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: ACCENTED_BODY };
  if (path.endsWith('/openapi.json'))
    return {
      status: 200,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify(STUB_OPENAPI),
    };
  if (/^(\/api)?\/v\d+\/orders$/.test(path))
    return { status: 404, headers: { 'content-type': 'application/json' }, body: '{"error":"not found","code":404}' };
  if (/\/orders\/[^/]+$/.test(path) && req.method !== 'GET' && req.method !== 'HEAD') {
    return {
      status: 405,
      headers: { 'content-type': 'application/json', allow: 'GET, HEAD' },
      body: '{"error":"method not allowed","code":405}',
    };
  }
  if (path.startsWith('/api/users') && req.method === 'PATCH') {
    return {
      status: 405,
      headers: { 'content-type': 'application/json', allow: 'GET, HEAD, POST' },
      body: '{"error":"method not allowed","code":405}',
    };
  }
  const echo = {
    method: req.method,
    url: req.url,
    contentType: req.headers['content-type'] ?? null,
    bodyBytes: req.body.length,
  };
  return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(echo) };
}

/** A stand-in for the users-orders backend on an ephemeral loopback port: echoes what it received. */
export async function startStubBackend(): Promise<StubBackend> {
  const seen: SeenRequest[] = [];
  const arrived: Arrival[] = [];
  const stub = { seen, arrived, delayMs: 0 } as StubBackend;
  const server: Server = createServer((req, res) => {
    const arrival: Arrival = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      receivedBytes: 0,
      complete: false,
    };
    arrived.push(arrival);
    if (arrival.url.startsWith(EARLY_ANSWER_PATH)) {
      res.writeHead(200, { 'content-type': 'text/plain' }).write('partial');
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      arrival.receivedBytes += chunk.length;
    });
    req.on('close', () => {
      if (!arrival.complete) arrival.abortedAt = performance.now();
    });
    req.on('end', () => {
      arrival.complete = true;
      const request = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      seen.push(request);
      if (res.headersSent) return;
      const cut = /[?&]cut=(\d+)/.exec(request.url);
      if (cut !== null) {
        // Promises a 50-byte body, sends `cut` bytes of it, then drops the connection.
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '50' });
        res.flushHeaders();
        if (Number(cut[1]) > 0) res.write('x'.repeat(Number(cut[1])));
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      const { status, headers, body } = answer(request);
      setTimeout(() => {
        if (res.destroyed) return;
        // With its length, as the backend (Fastify) answers: the gateway sends such small answers whole.
        res.writeHead(status, { 'content-length': String(Buffer.byteLength(body)), ...headers }).end(body);
      }, stub.delayMs);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  stub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  stub.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return stub;
}
