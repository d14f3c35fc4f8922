import { Agent, createServer, get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../e2e/process-stack.js';
import { startService, type ServiceProcess } from '../../platform/test/support/service-process.js';
import { eventually } from '../../platform/test/support/eventually.mjs';
import { FAULT_POLL_MS } from './load.js';

/**
 * SHUTDOWN_DELAY_MS on the real built processes (`npm run build` first): after SIGTERM, /readyz answers
 * 503 at once while the API still answers, with Connection: close; once the delay is over the listener is
 * closed and a new connection is refused.
 */
/**
 * Long enough that what the test does inside the delay (wait for /readyz 503, one API request: a few ms on a
 * quiet machine) fits with seconds to spare on a loaded one.
 */
const DELAY_MS = 5_000;

interface Answer {
  status: number;
  connection: string | undefined;
}

/** One keep-alive GET on a fresh connection; an error (e.g. ECONNREFUSED) rejects with its code. */
function fetchOnce(url: string): Promise<Answer> {
  const agent = new Agent({ keepAlive: true });
  return new Promise<Answer>((resolve, reject) => {
    get(url, { agent }, (res) => {
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
    }).once('error', (err: NodeJS.ErrnoException) => reject(new Error(err.code ?? err.message)));
  }).finally(() => agent.destroy());
}

let stubBackend: Server;
let stubBackendUrl: string;
beforeAll(async () => {
  // What the gateway's readiness needs: a backend that accepts connections.
  stubBackend = createServer((_req, res) => res.end());
  await new Promise<void>((resolve) => stubBackend.listen(0, '127.0.0.1', resolve));
  stubBackendUrl = `http://127.0.0.1:${(stubBackend.address() as AddressInfo).port}`;
});
afterAll(async () => {
  stubBackend.closeAllConnections();
  await new Promise((resolve) => stubBackend.close(resolve));
});

const processes: [string, () => Promise<ServiceProcess>, string][] = [
  [
    'backend',
    () =>
      startService('backend', {
        BACKEND_HOST: '127.0.0.1',
        BACKEND_PORT: '0',
        BACKEND_ADMIN_PORT: '0',
        SHUTDOWN_DELAY_MS: String(DELAY_MS),
      }),
    '/api/users',
  ],
  ['gateway', () => startGateway(stubBackendUrl, { SHUTDOWN_DELAY_MS: String(DELAY_MS) }), '/versions'],
];

describe.each(processes)('SHUTDOWN_DELAY_MS on the %s', (_name, start, apiPath) => {
  let service: ServiceProcess;
  afterAll(async () => {
    await service?.stop();
  });

  it(
    'fails /readyz at once, serves the API with Connection: close for the delay, then refuses connections and ' +
      'exits 0',
    async () => {
      service = await start();
      expect((await fetchOnce(`${service.adminUrl}/readyz`)).status).toBe(200);
      expect(await fetchOnce(`${service.apiUrl}${apiPath}`)).toMatchObject({ status: 200, connection: 'keep-alive' });

      const signalAt = performance.now();
      service.child.kill('SIGTERM');
      await eventually(
        '/readyz answering 503',
        async () => (await fetchOnce(`${service.adminUrl}/readyz`)).status === 503,
        { timeoutMs: DELAY_MS / 2, intervalMs: FAULT_POLL_MS },
      );
      expect(await fetchOnce(`${service.apiUrl}${apiPath}`)).toEqual({ status: 200, connection: 'close' });
      expect(performance.now() - signalAt).toBeLessThan(DELAY_MS);
      // An info line leaves within 100 ms (docs/observability.md#logging).
      const notReady = () =>
        service.logs.find((line) => line.msg === 'not ready; serving on before closing the listener');
      await eventually('the not-ready log line', notReady, { timeoutMs: 2_000, intervalMs: FAULT_POLL_MS });
      expect(notReady()).toMatchObject({ shutdownDelayMs: DELAY_MS });

      const refused = async () => {
        try {
          await fetchOnce(`${service.apiUrl}${apiPath}`);
          return false;
        } catch (err) {
          return (err as Error).message === 'ECONNREFUSED';
        }
      };
      await eventually('the API refusing connections', refused, {
        timeoutMs: DELAY_MS + 10_000,
        intervalMs: FAULT_POLL_MS,
      });
      expect(performance.now() - signalAt).toBeGreaterThanOrEqual(DELAY_MS);
      expect(await service.exited).toBe(0);
    },
  );
});
