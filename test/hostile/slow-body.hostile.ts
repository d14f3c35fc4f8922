import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Received, open } from '../../platform/test/support/raw-http.js';
import { eventually } from '../../platform/test/support/eventually.mjs';
import { EARLY_ANSWER_PATH } from '../../gateway/test/support/stub-backend.js';
import { expectServes, warnings, useTargets } from './raw.js';

/**
 * Slow-POST clients against the built processes (npm run build first): the 5 s read timeout covers the body,
 * not only the headers, on both processes, and the gateway gives up its upstream request with the client.
 */
const READ_TIMEOUT_MS = 5_000;
/** The deadline is enforced within a second; the rest is room for a loaded machine. */
const CLOSED_BY_MS = 6_500;

const userJson = '{"name":"Ada","email":"ada@example.com"}';
/** 100 bytes: the user JSON padded with spaces, which JSON ignores. */
const paddedUser = userJson.padEnd(100, ' ');
const postHead = (length: number, path = '/api/users', requestId = 'hostile-slow') =>
  `POST ${path} HTTP/1.1\r\nHost: test\r\nX-Request-Id: ${requestId}\r\nContent-Type: ` +
  `application/json\r\nContent-Length: ${length}\r\n\r\n`;

/**
 * A declared body the gateway streams to the backend as it arrives; one of 16 KiB or less it reads whole
 * before forwarding (docs/routing.md#forwarding).
 */
const STREAMED_BODY_BYTES = 64 * 1024;

/**
 * Declares `declared` bytes of body (100 unless given), sends 8 and then nothing; returns what came back and
 * when the server hung up.
 */
async function stallBody(
  url: string,
  { path, requestId, declared = 100 }: { path?: string; requestId?: string; declared?: number } = {},
) {
  const received = new Received(await open(url));
  const firstByteAt = Date.now();
  received.socket.write(postHead(declared, path, requestId) + paddedUser.slice(0, 8));
  const closedAfterMs = await received.closed(15_000);
  return {
    responses: received.responses,
    bytes: received.bytes,
    closedAfterMs,
    firstByte: received.since,
    firstByteAt,
  };
}

function expectRequestTimeout({ responses, closedAfterMs }: Awaited<ReturnType<typeof stallBody>>, what: string): void {
  // The figures docs/testing.md#hostile-clients reports.
  process.stdout.write(`slow body, ${what}: closed after ${Math.round(closedAfterMs)} ms\n`);
  expect(closedAfterMs).toBeGreaterThanOrEqual(READ_TIMEOUT_MS);
  expect(closedAfterMs).toBeLessThanOrEqual(CLOSED_BY_MS);
  expect(responses).toHaveLength(1);
  const [answer] = responses;
  expect(answer?.status).toBe(408);
  expect(answer?.headers['content-type']).toBe('application/json');
  expect(answer?.headers.connection).toBe('close');
  expect(JSON.parse(answer?.body ?? '')).toEqual({ error: 'request timeout', code: 408 });
}

/** Sends the 100-byte body 10 bytes at a time over about 3.2 s: slow, steady, done well within 5 s. */
async function steadyUpload(url: string) {
  const received = new Received(await open(url));
  received.socket.write(postHead(100));
  for (let offset = 0; offset < 100; offset += 10) {
    await sleep(320);
    received.socket.write(paddedUser.slice(offset, offset + 10));
  }
  const responses = await received.responsesAtLeast(1, 5_000);
  received.socket.destroy();
  return responses;
}

describe.concurrent('a body that stops arriving', () => {
  const targets = useTargets();

  it('is answered 408 JSON with Connection: close and closed 5-6.5 s after its first byte by the backend', async () => {
    expectRequestTimeout(await stallBody(targets.stack.backend.apiUrl), 'backend');
    await expectServes(targets.stack.backend.apiUrl);
    expect(warnings(targets.stack.backend)).toEqual([]);
  });

  it('is answered 408 JSON with Connection: close and closed 5-6.5 s after its first byte by the gateway', async () => {
    const stalled = await stallBody(targets.stack.gatewayUrl, {
      requestId: 'slow-via-gateway',
      declared: STREAMED_BODY_BYTES,
    });
    expectRequestTimeout(stalled, 'gateway');
    await expectServes(targets.stack.gatewayUrl);
    // The backend let go of the half-received upload too (whichever of the two deadlines struck first).
    // Its request line counts the gateway's hang-up as 499 (docs/replicas.md#aborted-requests).
    // Info lines leave in batches, at least every 100 ms (docs/observability.md#logging).
    const backendLines = () => targets.stack.backend.logs.filter((line) => line.reqId === 'slow-via-gateway');
    await eventually('two backend lines about the request', () => backendLines().length >= 2, {
      timeoutMs: 2_000,
      intervalMs: 10,
    });
    const backendSide = backendLines();
    expect(backendSide.map((line) => `${String(line.msg)} ${String(line.statusCode)}`).sort()).toEqual([
      'client closed the connection before the request was complete undefined',
      'request completed 499',
    ]);
    const letGo = backendSide.find(
      (line) => line.msg === 'client closed the connection before the request was complete',
    );
    expect(Number(letGo?.time) - stalled.firstByteAt).toBeLessThanOrEqual(CLOSED_BY_MS);
    // Neither the gateway nor the backend whose upload it gave up logs the client's doing as a problem.
    expect([...warnings(targets.stack.gateway), ...warnings(targets.stack.backend)]).toEqual([]);
  });

  it('makes the gateway abort its upstream request, so the backend holds no half-received body', async () => {
    const stalled = await stallBody(targets.stubGateway.apiUrl, { declared: STREAMED_BODY_BYTES });
    expectRequestTimeout(stalled, 'gateway to a stub');
    const upstream = targets.stub.arrived.filter(({ method, url }) => method === 'POST' && url === '/api/users');
    expect(upstream).toHaveLength(1);
    // The upstream connection goes a moment after the client's (the abort crosses loopback).
    await eventually('the upstream request aborted', () => upstream[0]?.abortedAt !== undefined, {
      timeoutMs: 1_000,
      intervalMs: 10,
    });
    expect(upstream[0]?.complete).toBe(false);
    expect(upstream[0]?.receivedBytes).toBeLessThan(STREAMED_BODY_BYTES);
    // Gone upstream as soon as the client was answered, not when the backend's own timeout would strike.
    expect(upstream[0]?.abortedAt).toBeDefined();
    const abortedAfterMs = (upstream[0]?.abortedAt ?? Infinity) - stalled.firstByte;
    process.stdout.write(
      `slow body, upstream request aborted ${Math.round(abortedAfterMs)} ms after the client's first byte\n`,
    );
    expect(abortedAfterMs).toBeLessThanOrEqual(CLOSED_BY_MS);
    await expectServes(targets.stubGateway.apiUrl, '/api/users');
    expect(warnings(targets.stubGateway)).toEqual([]);
  });

  it('never forwards a small body that stops arriving: the backend sees no request of it', async () => {
    const stalled = await stallBody(targets.stubGateway.apiUrl, { path: '/api/users/small-stalled' });
    expectRequestTimeout(stalled, 'gateway to a stub, small body');
    expect(targets.stub.arrived.filter((request) => request.url === '/api/users/small-stalled')).toEqual([]);
    await expectServes(targets.stubGateway.apiUrl, '/api/users');
    expect(warnings(targets.stubGateway)).toEqual([]);
  });

  it('only closes the connection when a response has already started (no 408 bytes inside it)', async () => {
    const stalled = await stallBody(targets.stubGateway.apiUrl, {
      path: EARLY_ANSWER_PATH,
      declared: STREAMED_BODY_BYTES,
    });
    expect(stalled.closedAfterMs).toBeGreaterThanOrEqual(READ_TIMEOUT_MS);
    expect(stalled.closedAfterMs).toBeLessThanOrEqual(CLOSED_BY_MS);
    const text = stalled.bytes.toString('latin1');
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(text).toContain('partial');
    expect(text).not.toContain('HTTP/1.1 408');
    await expectServes(targets.stubGateway.apiUrl, '/api/users');
  });

  it.each([
    ['backend', () => targets.stack.backend.apiUrl],
    ['gateway', () => targets.stack.gatewayUrl],
  ])('leaves a slow but steady upload that completes within 5 s alone (%s: 201)', async (_name, url) => {
    const responses = await steadyUpload(url());
    expect(responses.map((res) => res.status)).toEqual([201]);
    expect(JSON.parse(responses[0]?.body ?? '')).toMatchObject({ name: 'Ada', email: 'ada@example.com' });
  });
});
