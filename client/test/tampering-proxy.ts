import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What happens to the answer to one path on its way from the gateway: its body stalls half-way (the connection stays
 * open, nothing more comes), breaks off half-way (the connection is reset), or is replaced by other bytes.
 */
export type Tampering = { stall: true } | { reset: true } | { body: string };

/** A loopback proxy in front of a real gateway that breaks the answers to some paths, as a broken network would. */
export interface TamperingProxy {
  url: string;
  /** By path and query as the client sends them; any other request passes through unchanged. */
  tamper: Map<string, Tampering>;
  close(): Promise<void>;
}

function forward(target: URL, method: string, path: string, headers: IncomingHttpHeaders) {
  return request({
    host: target.hostname,
    port: target.port,
    method,
    path,
    headers: { ...headers, host: target.host },
  });
}

export async function startTamperingProxy(gatewayUrl: string): Promise<TamperingProxy> {
  const target = new URL(gatewayUrl);
  const tamper = new Map<string, Tampering>();
  const server: Server = createServer((req, res) => {
    const upstream = forward(target, req.method ?? 'GET', req.url ?? '/', req.headers);
    req.pipe(upstream);
    upstream.once('error', () => res.destroy());
    upstream.once('response', (answer) => {
      // By path: the check asks GET /deprecations?since=….
      const tampering = tamper.get((req.url ?? '').split('?')[0] ?? '');
      if (tampering === undefined) {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.once('end', () => {
        const body = Buffer.concat(chunks);
        const headers = { 'content-type': answer.headers['content-type'] ?? 'application/json' };
        if ('body' in tampering) {
          res.writeHead(answer.statusCode ?? 200, { ...headers, 'content-length': Buffer.byteLength(tampering.body) });
          res.end(tampering.body);
          return;
        }
        res.writeHead(answer.statusCode ?? 200, { ...headers, 'content-length': body.length });
        res.write(body.subarray(0, Math.floor(body.length / 2)));
        if ('reset' in tampering) setTimeout(() => res.socket?.resetAndDestroy(), 20);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    tamper,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
