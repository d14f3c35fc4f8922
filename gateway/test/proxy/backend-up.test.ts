import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { buildTestGateway } from '../support/helpers.js';
import { startStubBackend } from '../support/stub-backend.js';

const backendUp = async (registry: { metrics(): Promise<string> }): Promise<string | undefined> =>
  /^backend_up (\S+)$/m.exec(await registry.metrics())?.[1];

/** A backend stand-in that answers every request with `status`, as a load balancer with no server left answers 503. */
async function answeringWith(status: number): Promise<string> {
  const server = createServer((_req, res) => res.writeHead(status, { 'content-type': 'application/json' }).end('{}'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('backend_up and readiness', () => {
  it('backend_up is 1 while the backend answers and 0 once it stopped; /readyz answers 200 either way', async () => {
    const stub = await startStubBackend();
    const gateway = await buildTestGateway(stub.url);
    onTestFinished(() => gateway.app.close());
    const admin = await gateway.admin();

    expect(await backendUp(gateway.registry)).toBe('1');
    expect(stub.seen.map(({ method, url }) => `${method} ${url}`)).toEqual(['HEAD /']);
    expect((await admin.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready' });

    await stub.close();
    expect(await backendUp(gateway.registry)).toBe('0');
    const ready = await admin.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready' });
    // The API still answers what needs no backend.
    expect((await gateway.app.inject({ method: 'GET', url: '/versions' })).statusCode).toBe(200);
  });

  it.each([
    [503, '0'],
    [502, '0'],
    [404, '1'],
  ])('backend_up counts a %i answer as %s', async (status, expected) => {
    const gateway = await buildTestGateway(await answeringWith(status));
    onTestFinished(() => gateway.app.close());
    expect(await backendUp(gateway.registry)).toBe(expected);
  });

  it('backend_up is 0 when the backend does not answer within a second', async () => {
    const stub = await startStubBackend();
    onTestFinished(() => stub.close());
    stub.delayMs = 3_000;
    const gateway = await buildTestGateway(stub.url);
    onTestFinished(() => gateway.app.close());
    const started = Date.now();
    expect(await backendUp(gateway.registry)).toBe('0');
    expect(Date.now() - started).toBeLessThan(2_500);
  });

  it('/readyz answers 503 not ready once the gateway is leaving (SIGTERM)', async () => {
    const stub = await startStubBackend();
    onTestFinished(() => stub.close());
    const gateway = await buildTestGateway(stub.url);
    onTestFinished(() => gateway.app.close());
    const admin = await gateway.admin();
    gateway.app.lifecycle.leaving = true;
    const res = await admin.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ error: 'not ready', code: 503 });
  });
});
