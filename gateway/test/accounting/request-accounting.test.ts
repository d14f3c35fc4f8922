// The onResponse hook that counts every answer once it is complete: api_version_requests_total and the
// consumers of deprecated versions, the deprecated-use fields of the log line, and the status an answer is counted with
// when the client or the backend went away.
import { randomUUID } from 'node:crypto';
import { connect, type AddressInfo } from 'node:net';
import { beforeEach, describe, expect, it } from 'vitest';
import { TODAY, V1_SUNSET, stubbedGatewayPerTest } from '../support/helpers.js';

const fixture = stubbedGatewayPerTest();

const get = (url: string, headers: Record<string, string> = {}) =>
  fixture.gateway.app.inject({ method: 'GET', url, headers });
/** The series of a metric, sorted: the three requests may arrive in any order. */
const counted = async (name: string) => (await fixture.gateway.metricLines(name)).sort();
const total = (lines: string[]) => lines.reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);

describe('metrics and consumer log', () => {
  it('counts order requests per version, deprecation, selection and status', async () => {
    await get('/v1/orders/ord-1001');
    await get('/v1/orders/ord-1001');
    await get('/orders/ord-1001', { 'api-version': '2' });
    await get('/orders/ord-1001');
    await get('/orders/ord-1001', { 'api-version': 'abc' });
    await get('/v2/orders/ord-1001', { 'api-version': '1' });
    await get('/api/users');
    fixture.gateway.setNow(V1_SUNSET);
    await get('/api/v1/orders/ord-1001');
    expect((await fixture.gateway.metricLines('api_version_requests_total')).sort()).toEqual(
      [
        'api_version_requests_total{version="1",deprecated="true",selected_by="path",status_code="200"} 2',
        'api_version_requests_total{version="2",deprecated="false",selected_by="header",status_code="200"} 1',
        'api_version_requests_total{version="1",deprecated="true",selected_by="default",status_code="200"} 1',
        'api_version_requests_total{version="invalid",deprecated="false",selected_by="header",status_code="406"} 1',
        'api_version_requests_total{version="invalid",deprecated="false",selected_by="path",status_code="400"} 1',
        'api_version_requests_total{version="1",deprecated="true",selected_by="path",status_code="410"} 1',
      ].sort(),
    );
    expect(await fixture.gateway.metricLines('api_version_sunset_timestamp_seconds')).toEqual([
      `api_version_sunset_timestamp_seconds{version="1"} ${V1_SUNSET / 1000}`,
    ]);
    expect(await fixture.gateway.metricLines('http_requests_total')).toContain(
      'http_requests_total{method="GET",route="/v1/orders/:id",status_code="200"} 2',
    );
  });

  it('puts the version and the client on the one line of each request on a deprecated or removed version', async () => {
    await get('/v1/orders/ord-1001', { 'user-agent': 'shop-app/3.1', 'x-client-id': 'shop' });
    await get('/orders/ord-1001', { 'user-agent': 'curl/8' });
    await get('/v2/orders/ord-1001', { 'user-agent': 'new-app' });
    fixture.gateway.setNow(V1_SUNSET);
    await get('/api/v1/orders/x', { 'user-agent': 'late-app' });
    const requestLines = fixture.gateway.logs.filter((line) => 'reqId' in line);
    // One line per request, whatever it carries.
    expect(requestLines.map((line) => line.msg)).toEqual([
      'request completed',
      'request completed',
      'request completed',
      'request completed',
    ]);
    const lines = requestLines.filter((line) => line.deprecated === true);
    expect(
      lines.map(({ version, route, statusCode, userAgent, clientId, selectedBy }) => ({
        version,
        route,
        statusCode,
        userAgent,
        clientId,
        selectedBy,
      })),
    ).toEqual([
      {
        version: 1,
        route: '/v1/orders/:id',
        statusCode: 200,
        userAgent: 'shop-app/3.1',
        clientId: 'shop',
        selectedBy: 'path',
      },
      {
        version: 1,
        route: '/orders/:id',
        statusCode: 200,
        userAgent: 'curl/8',
        clientId: undefined,
        selectedBy: 'default',
      },
      {
        version: 1,
        route: '/api/v1/orders/:id',
        statusCode: 410,
        userAgent: 'late-app',
        clientId: undefined,
        selectedBy: 'path',
      },
    ]);
    expect(lines[1]).not.toHaveProperty('clientId');
    expect(lines[0]?.level).toBe(30);
    expect(requestLines[2]).toMatchObject({ route: '/v2/orders/:id', statusCode: 200 });
    expect(requestLines[2]).not.toHaveProperty('deprecated');
    expect(requestLines[2]).not.toHaveProperty('userAgent');
  });

  it('does not log consumers of a version before its announcement', async () => {
    fixture.gateway.setNow(Date.parse('2026-01-01T00:00:00Z'));
    await get('/v1/orders/ord-1001');
    expect(fixture.gateway.logs.filter((line) => 'reqId' in line)).toEqual([
      expect.objectContaining({ msg: 'request completed', route: '/v1/orders/:id' }),
    ]);
    expect(fixture.gateway.logs.filter((line) => 'deprecated' in line)).toHaveLength(0);
    fixture.gateway.setNow(TODAY);
  });
});

describe('api_version_consumer_requests_total on the gateway', () => {
  const consumerLines = () => fixture.gateway.metricLines('api_version_consumer_requests_total');

  it('exports the consumers of deprecated versions only, per version and consumer', async () => {
    for (let i = 0; i < 3; i++)
      await fixture.gateway.app.inject({ url: '/v1/orders/ord-1001', headers: { 'x-client-id': 'acme-billing' } });
    await fixture.gateway.app.inject({ url: '/orders/ord-1001', headers: { 'user-agent': 'curl/8.5' } });
    await fixture.gateway.app.inject({ url: '/v2/orders/ord-1001', headers: { 'x-client-id': 'modern-app' } });
    expect(await consumerLines()).toEqual([
      'api_version_consumer_requests_total{version="1",consumer="acme-billing"} 3',
      'api_version_consumer_requests_total{version="1",consumer="curl/8.5"} 1',
    ]);
  });

  it('stays within 21 series per version under 5,000 random client ids, and counts every request', async () => {
    // v1 removed: answered 410 by the gateway alone (and still counted), so 5,000 requests are quick.
    fixture.gateway.setNow(V1_SUNSET);
    for (let batch = 0; batch < 50; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 100 }, () =>
          fixture.gateway.app.inject({ url: '/v1/orders/ord-1001', headers: { 'x-client-id': randomUUID() } }),
        ),
      );
      expect(answers.map(({ statusCode }) => statusCode)).toEqual(Array.from({ length: 100 }, () => 410));
    }
    const lines = await consumerLines();
    expect(lines).toHaveLength(21);
    expect(lines.filter((line) => line.includes('consumer="other"'))).toEqual([
      'api_version_consumer_requests_total{version="1",consumer="other"} 4980',
    ]);
    expect(lines.reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0)).toBe(5_000);
  });
});

describe('a client that hangs up while the backend is slow', () => {
  let port: number;
  beforeEach(async () => {
    await fixture.gateway.app.listen({ host: '127.0.0.1', port: 0 });
    port = (fixture.gateway.app.server.address() as AddressInfo).port;
  });

  it('is counted as 499 in both request counters, so the gateway counts what it forwarded', async () => {
    fixture.stub.delayMs = 1_000;
    const sockets = [1, 2, 3].map(() => connect(port, '127.0.0.1').on('error', () => undefined));
    sockets[0]?.write('GET /v1/orders/ord-1001 HTTP/1.1\r\nHost: test\r\nX-Client-Id: quitter\r\n\r\n');
    sockets[1]?.write('GET /orders/ord-1001 HTTP/1.1\r\nHost: test\r\nAPI-Version: 2\r\n\r\n');
    sockets[2]?.write('GET /v2/orders/ord-1001 HTTP/1.1\r\nHost: test\r\n\r\n');
    // The backend has every request, and no answer has left yet: the clients go away.
    await expect.poll(() => fixture.stub.seen.length).toBe(3);
    for (const socket of sockets.slice(0, 2)) socket.destroy();

    await expect
      .poll(() => counted('api_version_requests_total'), { timeout: 5_000 })
      .toEqual([
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
    expect(total(await counted('api_version_requests_total'))).toBe(
      fixture.stub.seen.filter(({ url }) => url !== '/').length,
    );
    expect(fixture.gateway.app.versionUsage.consumers.report([1])).toEqual([
      { version: 1, consumers: [expect.objectContaining({ consumer: 'quitter', requests: 1 })] },
    ]);
    sockets[2]?.destroy();
  });

  it("counts an answer whose backend body failed half-way as 502, not as the client's 499", async () => {
    const socket = connect(port, '127.0.0.1').on('error', () => undefined);
    socket.write('GET /v2/orders/ord-1001?cut=10 HTTP/1.1\r\nHost: test\r\n\r\n');
    await expect
      .poll(() => counted('api_version_requests_total'), { timeout: 5_000 })
      .toEqual(['api_version_requests_total{version="2",deprecated="false",selected_by="path",status_code="502"} 1']);
    expect(await counted('http_requests_total')).toEqual([
      'http_requests_total{method="GET",route="/v2/orders/:id",status_code="502"} 1',
    ]);
    socket.destroy();
  });
});
