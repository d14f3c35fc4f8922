import { connect, type AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildTestGateway, type TestGateway } from './helpers.js';
import { startStubBackend, type StubBackend } from './stub-backend.js';

let stub: StubBackend;
let gateway: TestGateway;
let port: number;

beforeEach(async () => {
  stub = await startStubBackend();
  gateway = await buildTestGateway(stub.url);
  await gateway.app.listen({ host: '127.0.0.1', port: 0 });
  port = (gateway.app.server.address() as AddressInfo).port;
});
afterEach(async () => {
  await gateway.app.close();
  await stub.close();
});

/** The series of a metric, sorted: the three requests may arrive in any order. */
const counted = async (name: string) => (await gateway.registry.metrics()).split('\n').filter((line) => line.startsWith(`${name}{`)).sort();
const total = (lines: string[]) => lines.reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);

describe('a client that hangs up while the backend is slow', () => {
  it('is counted as 499 in both request counters, so the gateway counts what it forwarded', async () => {
    stub.delayMs = 1_000;
    const sockets = [1, 2, 3].map(() => connect(port, '127.0.0.1').on('error', () => undefined));
    sockets[0]?.write('GET /v1/orders/ord-1001 HTTP/1.1\r\nHost: test\r\nX-Client-Id: quitter\r\n\r\n');
    sockets[1]?.write('GET /orders/ord-1001 HTTP/1.1\r\nHost: test\r\nAPI-Version: 2\r\n\r\n');
    sockets[2]?.write('GET /v2/orders/ord-1001 HTTP/1.1\r\nHost: test\r\n\r\n');
    // The backend has every request, and no answer has left yet: the clients go away.
    await expect.poll(() => stub.seen.length).toBe(3);
    for (const socket of sockets.slice(0, 2)) socket.destroy();

    await expect.poll(() => counted('api_version_requests_total'), { timeout: 5_000 }).toEqual([
      'api_version_requests_total{version="1",deprecated="true",selected_by="path",status_code="499"} 1',
      'api_version_requests_total{version="2",deprecated="false",selected_by="header",status_code="499"} 1',
      'api_version_requests_total{version="2",deprecated="false",selected_by="path",status_code="200"} 1',
    ]);
    expect(await counted('http_requests_total')).toEqual([
      'http_requests_total{method="GET",route="/orders/:id",status_code="499"} 1',
      'http_requests_total{method="GET",route="/v1/orders/:id",status_code="499"} 1',
      'http_requests_total{method="GET",route="/v2/orders/:id",status_code="200"} 1',
    ]);
    // Forwarded requests only: each scrape also probes the backend (backend_up, a HEAD /).
    expect(total(await counted('api_version_requests_total'))).toBe(stub.seen.filter(({ url }) => url !== '/').length);
    expect(gateway.app.versionUsage.consumers.report([1])).toEqual([
      { version: 1, consumers: [expect.objectContaining({ consumer: 'quitter', requests: 1 })] },
    ]);
    sockets[2]?.destroy();
  });

  it('counts an answer whose backend body failed half-way as 502, not as the client\'s 499', async () => {
    const socket = connect(port, '127.0.0.1').on('error', () => undefined);
    socket.write('GET /v2/orders/ord-1001?cut=10 HTTP/1.1\r\nHost: test\r\n\r\n');
    await expect.poll(() => counted('api_version_requests_total'), { timeout: 5_000 }).toEqual([
      'api_version_requests_total{version="2",deprecated="false",selected_by="path",status_code="502"} 1',
    ]);
    expect(await counted('http_requests_total')).toEqual(['http_requests_total{method="GET",route="/v2/orders/:id",status_code="502"} 1']);
    socket.destroy();
  });
});
