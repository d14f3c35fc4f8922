import { afterAll, beforeAll } from 'vitest';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGateway, startProcessStack, type ProcessStack, type ServiceProcess } from '../e2e/process-stack.js';
import { Received, open, type RawResponse } from '../support/raw-http.js';

/** Sends `request` on a fresh connection and returns the answers and when the server closed it. */
export async function exchange(url: string, request: string | Buffer, limitMs = 5_000): Promise<{ responses: RawResponse[]; closedAfterMs: number }> {
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

/** Log lines at warn level or above: what an attack must not produce in numbers. */
export function warnings(service: ServiceProcess): Record<string, unknown>[] {
  return service.logs.filter((line) => Number(line.level) >= 40);
}

/** One request as a stub backend saw it. */
interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  receivedBytes: number;
  /** The whole body arrived. */
  complete: boolean;
  /** performance.now() when the connection or request went away before the body was complete. */
  abortedAt?: number;
}

/** Under this path the stub starts its answer at once and never finishes it. */
export const EARLY_ANSWER_PATH = '/api/users/early-answer';

/** A stand-in backend on loopback that records each request it sees and answers 200 JSON once the body is in. */
interface StubBackend {
  url: string;
  seen: SeenRequest[];
  close(): Promise<void>;
}

async function startStubBackend(): Promise<StubBackend> {
  const seen: SeenRequest[] = [];
  const server: Server = createServer((req, res) => {
    const entry: SeenRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, receivedBytes: 0, complete: false };
    seen.push(entry);
    if (entry.url.startsWith(EARLY_ANSWER_PATH)) {
      // Answers before the body is in, and keeps the response open: a response in progress.
      res.writeHead(200, { 'content-type': 'text/plain' }).write('partial');
    }
    req.on('data', (chunk: Buffer) => (entry.receivedBytes += chunk.length));
    req.on('end', () => {
      entry.complete = true;
      if (!res.headersSent) res.writeHead(200, { 'content-type': 'application/json' }).end('{"stub":true}');
    });
    req.on('close', () => {
      if (!entry.complete) entry.abortedAt = performance.now();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
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
