import { afterAll, beforeAll } from 'vitest';
import { startGateway, startProcessStack, type ProcessStack } from '../e2e/process-stack.js';
import { type ServiceProcess } from '../../platform/test/support/service-process.js';
import { Received, open, type RawResponse } from '../../platform/test/support/raw-http.js';
import { startStubBackend, type StubBackend } from '../../gateway/test/support/stub-backend.js';

/** Sends `request` on a fresh connection and returns the answers and when the server closed it. */
export async function exchange(
  url: string,
  request: string | Buffer,
  limitMs = 5_000,
): Promise<{ responses: RawResponse[]; closedAfterMs: number }> {
  const received = new Received(await open(url));
  received.socket.write(request);
  const closedAfterMs = await received.closed(limitMs);
  return { responses: received.responses, closedAfterMs };
}

/** A normal request still gets its normal answer: the service survived what came before. */
export async function expectServes(baseUrl: string, path = '/api/users/page?limit=1'): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${baseUrl}${path}`);
  await res.text();
  if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}, expected 200`);
  return performance.now() - started;
}

/**
 * Log lines at warn level or above: what an attack must not produce in numbers. The shipped policy's own warning
 * at start (its default_version is deprecated: the line carries `defaultVersion`) is no attack's.
 */
export function warnings(service: ServiceProcess): Record<string, unknown>[] {
  return service.logs.filter((line) => Number(line.level) >= 40 && line.defaultVersion === undefined);
}

/** The real stack, and a second built gateway in front of a stub backend that records what reaches it. */
export interface HostileTargets {
  stack: ProcessStack;
  stub: StubBackend;
  stubGateway: ServiceProcess;
  stop(): Promise<void>;
}

async function startTargets(): Promise<HostileTargets> {
  const [stack, stub] = await Promise.all([startProcessStack(), startStubBackend()]);
  const stubGateway = await startGateway(stub.url);
  return {
    stack,
    stub,
    stubGateway,
    async stop() {
      await Promise.all([stack.stop(), stubGateway.stop()]);
      await stub.close();
    },
  };
}

/**
 * Starts the targets before the calling suite's tests and stops them after it (hooks are registered by
 * this call, not by importing the module). Read the parts inside tests, once started.
 */
export function useTargets(): Omit<HostileTargets, 'stop'> {
  let targets: HostileTargets | undefined;
  beforeAll(async () => {
    targets = await startTargets();
  });
  afterAll(async () => {
    await targets?.stop();
  });
  const started = (): HostileTargets => {
    if (targets === undefined) throw new Error('the hostile targets are read before their suite started them');
    return targets;
  };
  return {
    get stack() {
      return started().stack;
    },
    get stub() {
      return started().stub;
    },
    get stubGateway() {
      return started().stubGateway;
    },
  };
}
