import { connect, type AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import type { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { capturedLog } from '../support/captured-log.js';
import { cutResponse } from '../../src/http-foundation.js';
import { createRegistry, httpMetrics } from '../../src/metrics.js';
import { buildFoundationApp } from '../helpers.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Listening {
  app: FastifyInstance;
  registry: Registry;
  lines: Record<string, unknown>[];
  /** Sends a GET on a raw connection and closes it after `closeAfterMs`. */
  hangUp(path: string, closeAfterMs: number): Promise<void>;
  requestLines(): Record<string, unknown>[];
}

/** A foundation app with the HTTP metrics on a real socket: routes that answer slowly or in two parts. */
async function listening(): Promise<Listening> {
  const { destination, lines } = capturedLog();
  const app = await buildFoundationApp(pino({ level: 'info' }, destination));
  const registry = createRegistry();
  await app.register(httpMetrics, { registry });
  app.get('/slow', async () => {
    await sleep(400);
    return { ok: true };
  });
  app.get('/half', (_request, reply) => {
    reply.raw.writeHead(200, { 'content-type': 'text/plain', 'content-length': '10' });
    reply.raw.write('half ');
    setTimeout(() => reply.raw.end('done!'), 400);
  });
  app.get('/cut', (_request, reply) => {
    reply.raw.writeHead(200, { 'content-type': 'text/plain', 'content-length': '10' });
    reply.raw.write('half ');
    setTimeout(() => cutResponse(reply, 502), 50);
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return {
    app,
    registry,
    lines,
    async hangUp(path, closeAfterMs) {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write(`GET ${path} HTTP/1.1\r\nHost: test\r\n\r\n`);
      await sleep(closeAfterMs);
      socket.destroy();
    },
    requestLines: () => lines.filter((line) => line.msg === 'request completed'),
  };
}

const countLines = async (registry: Registry) =>
  (await registry.metrics())
    .split('\n')
    .filter((line) => /^http_requests_total\{|^http_request_duration_seconds_count\{/.test(line));

describe('a client that goes away before its answer is complete (499)', () => {
  it('counts a request whose client left before any byte of the answer once, as 499, and logs it', async () => {
    const server = await listening();
    await server.hangUp('/slow', 100);
    await expect.poll(() => server.requestLines().length).toBe(1);
    // The handler's late answer counts nothing more.
    await sleep(500);
    expect(await countLines(server.registry)).toEqual([
      'http_requests_total{method="GET",route="/slow",status_code="499"} 1',
      'http_request_duration_seconds_count{method="GET",route="/slow",status_code="499"} 1',
    ]);
    expect(server.requestLines()).toEqual([expect.objectContaining({ route: '/slow', statusCode: 499 })]);
  });

  it('counts 499 when the client left half-way through the body', async () => {
    const server = await listening();
    await server.hangUp('/half', 100);
    await expect
      .poll(() => countLines(server.registry))
      .toContain('http_requests_total{method="GET",route="/half",status_code="499"} 1');
    await sleep(500);
    expect(await countLines(server.registry)).not.toContain(
      'http_requests_total{method="GET",route="/half",status_code="200"} 1',
    );
  });

  it(
    'counts a complete answer under its own status, and an answer the server cut under the status it ' + 'gave',
    async () => {
      const server = await listening();
      await server.hangUp('/half', 1_500);
      await server.hangUp('/cut', 1_000);
      expect(await countLines(server.registry)).toEqual([
        'http_requests_total{method="GET",route="/half",status_code="200"} 1',
        'http_requests_total{method="GET",route="/cut",status_code="502"} 1',
        'http_request_duration_seconds_count{method="GET",route="/half",status_code="200"} 1',
        'http_request_duration_seconds_count{method="GET",route="/cut",status_code="502"} 1',
      ]);
    },
  );
});
