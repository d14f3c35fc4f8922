import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startGateway } from '../e2e/process-stack.js';
import { type ServiceProcess } from '../../platform/test/support/service-process.js';
import { eventually } from '../../platform/test/support/eventually.mjs';
import { FAULT_POLL_MS, startLoad } from './load.js';

/**
 * SIGTERM to the gateway under load (the real built gateway, `npm run build` first). The
 * backend here is a loopback stand-in that answers after 300 ms and notes when each request id arrived:
 * a request that reached it before the signal was certainly accepted by the gateway, and is still in
 * flight when the signal lands, which is what the drain must protect.
 */
const BACKEND_DELAY_MS = 300;
const WORKERS = 20;
const EXIT_WITHIN_MS = 10_000;
const ORDER = JSON.stringify({ id: 'ord-1001', customer_id: 'user-1', total_cents: 1999, currency: 'EUR' });
/** The same order as version 1 presents it: ops/versions.json declares v1 as changes to v2, the gateway translates. */
const ORDER_V1 = JSON.stringify({ id: 'ord-1001', user_id: 'user-1', total: 19.99 });

let backend: Server;
let backendUrl: string;
const arrivals = new Map<string, number>();
let gateway: ServiceProcess;

beforeAll(async () => {
  backend = createServer((req, res) => {
    arrivals.set(String(req.headers['x-request-id']), performance.now());
    req.resume();
    setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(ORDER), BACKEND_DELAY_MS);
  });
  await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
  backendUrl = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
  gateway = await startGateway(backendUrl);
});
afterAll(async () => {
  await gateway?.stop();
  backend.closeAllConnections();
  await new Promise((resolve) => backend.close(resolve));
});

const refusesConnections = (url: string): Promise<boolean> =>
  new Promise((resolve) => {
    const { hostname, port } = new URL(url);
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });

it('completes every request accepted before SIGTERM, refuses new connections, and exits 0 within 10 s', async () => {
  const load = startLoad(gateway.apiUrl, ['/v2/orders/ord-1001', '/v1/orders/ord-1001'], WORKERS);
  // Signal once most workers have a request waiting at the backend, however loaded the machine is.
  const waitingAtBackend = () => {
    const ended = new Set(load.outcomes.map((o) => o.requestId));
    return [...arrivals.keys()].filter((id) => !ended.has(id)).length;
  };
  await eventually('most workers waiting at the backend', () => waitingAtBackend() >= (WORKERS * 3) / 4, {
    timeoutMs: 10_000,
    intervalMs: FAULT_POLL_MS,
  });

  const signalAt = performance.now();
  gateway.child.kill('SIGTERM');
  // Without SHUTDOWN_DELAY_MS the listener closes at once (within ms on a quiet machine); 5 s leaves a loaded one
  // room and is still half the drain's 10 s bound.
  await eventually('new connections refused after SIGTERM', () => refusesConnections(gateway.apiUrl), {
    timeoutMs: EXIT_WITHIN_MS / 2,
    intervalMs: FAULT_POLL_MS,
  });
  const code = await gateway.exited;
  const exitedAfterMs = performance.now() - signalAt;
  const outcomes = await load.stop();

  expect(code).toBe(0);
  expect(exitedAfterMs).toBeLessThan(EXIT_WITHIN_MS);
  expect(gateway.logs.at(-1)?.msg).toBe('stopped');

  const accepted = outcomes.filter((o) => (arrivals.get(o.requestId) ?? Number.POSITIVE_INFINITY) < signalAt);
  const inFlightAtSignal = accepted.filter((o) => o.endedAt > signalAt);
  expect(inFlightAtSignal.length).toBeGreaterThanOrEqual(WORKERS / 2);
  for (const outcome of accepted) {
    expect(outcome.error).toBeUndefined();
    expect(outcome.status).toBe(200);
    expect(outcome.body).toBe(outcome.path.startsWith('/v1/') ? ORDER_V1 : ORDER);
  }
  // The rest arrived after the signal: our 503 while draining, or no connection at all.
  for (const outcome of outcomes.filter((o) => !accepted.includes(o))) {
    if (outcome.error === undefined) expect([200, 503]).toContain(outcome.status);
  }
});
