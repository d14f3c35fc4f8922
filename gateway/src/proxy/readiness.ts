import { connect } from 'node:net';

const PROBE_TIMEOUT_MS = 1_000;

/**
 * Readiness: the gateway can serve when the backend answers. A TCP connect to the backend's API port
 * proves its listener accepts, and it stops accepting as soon as it starts draining; unlike an HTTP
 * probe it adds no request lines or metrics to the backend for every orchestrator poll. Only the
 * backend's API address is configured (BACKEND_URL), so its admin /healthz is out of reach.
 */
export function backendAccepts(backendUrl: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<boolean> {
  const url = new URL(backendUrl);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const port = Number(url.port === '' ? 80 : url.port);
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: timeoutMs });
    const settle = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => settle(true));
    socket.once('timeout', () => settle(false));
    socket.once('error', () => settle(false));
  });
}
