import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from './process-stack.js';
import { startService, type ServiceProcess } from '../../platform/test/support/service-process.js';

/**
 * The admin listeners are unauthenticated (metrics, consumers, reload), so by default they bind
 * 127.0.0.1 even when the API listens on every interface. Shown on the built processes with a second
 * loopback address, 127.0.0.2: a socket bound to 0.0.0.0 accepts there, one bound to 127.0.0.1 does
 * not, the same as for the machine's network addresses, without sending traffic off loopback.
 */
const OTHER_ADDRESS = '127.0.0.2';

/** 'open' when a TCP connection to host:port is accepted, else the error code (ECONNREFUSED). */
function tryConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.setTimeout(3_000, () => {
      socket.destroy();
      resolve('timeout');
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve('open');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
  });
}

const portOf = (url: string): number => Number(new URL(url).port);

describe('admin listeners bind loopback unless told otherwise', () => {
  let backend: ServiceProcess;
  let gateway: ServiceProcess;
  let exposedGateway: ServiceProcess;

  beforeAll(async () => {
    // APIs on every interface, admin hosts left at their defaults.
    backend = await startService('backend', { BACKEND_HOST: '0.0.0.0', BACKEND_PORT: '0', BACKEND_ADMIN_PORT: '0' });
    gateway = await startGateway(`http://127.0.0.1:${portOf(backend.apiUrl)}`, { GATEWAY_HOST: '0.0.0.0' });
    exposedGateway = await startGateway(`http://127.0.0.1:${portOf(backend.apiUrl)}`, {
      GATEWAY_HOST: '0.0.0.0',
      GATEWAY_ADMIN_HOST: '0.0.0.0',
    });
  });
  afterAll(async () => {
    await Promise.all([gateway?.stop(), exposedGateway?.stop()]);
    await backend?.stop();
  });

  it('logs the admin listener on 127.0.0.1 and the API on 0.0.0.0', () => {
    expect(new URL(gateway.adminUrl).hostname).toBe('127.0.0.1');
    expect(new URL(gateway.apiUrl).hostname).toBe('0.0.0.0');
    expect(new URL(backend.adminUrl).hostname).toBe('127.0.0.1');
  });

  it(
    "refuses connections to the gateway's and the backend's admin ports on another address, where their APIs " +
      'accept',
    async () => {
      expect(await tryConnect(OTHER_ADDRESS, portOf(gateway.apiUrl))).toBe('open');
      expect(await tryConnect(OTHER_ADDRESS, portOf(gateway.adminUrl))).toBe('ECONNREFUSED');
      expect(await tryConnect(OTHER_ADDRESS, portOf(backend.apiUrl))).toBe('open');
      expect(await tryConnect(OTHER_ADDRESS, portOf(backend.adminUrl))).toBe('ECONNREFUSED');
    },
  );

  it('serves the status page and the consumers on 127.0.0.1', async () => {
    expect((await fetch(`${gateway.adminUrl}/`)).status).toBe(200);
    expect(await (await fetch(`${gateway.adminUrl}/consumers`)).json()).toEqual({
      versions: [{ version: 1, consumers: [] }],
    });
  });

  it('listens on every interface with GATEWAY_ADMIN_HOST=0.0.0.0 (what the containers set)', async () => {
    expect(new URL(exposedGateway.adminUrl).hostname).toBe('0.0.0.0');
    const res = await fetch(`http://${OTHER_ADDRESS}:${portOf(exposedGateway.adminUrl)}/healthz`);
    expect(res.status).toBe(200);
  });
});
