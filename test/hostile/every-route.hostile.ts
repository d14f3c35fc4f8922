import { randomUUID } from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startGateway } from '../e2e/process-stack.js';
import { startService, type ServiceProcess } from '../../platform/test/support/service-process.js';
import { open } from '../../platform/test/support/raw-http.js';
import { expectServes, useTargets, warnings } from './raw.js';

/**
 * What a client may not do on any route, against the built processes over TCP (npm run build first): claim a version
 * or a consumer to the backend, forge the hop it came from, have a key in its URL served, logged or forwarded, or
 * slow the consumer store for everyone by flipping its pin; and what a fatal error does to the exit code.
 */
const targets = useTargets();

/** A consumer registered on a gateway's admin port (loopback: no token needed) and a key of it. */
async function registerConsumer(gateway: ServiceProcess, name: string): Promise<{ id: string; key: string }> {
  const id = `${name}-${randomUUID().slice(0, 8)}`;
  const created = await fetch(`${gateway.adminUrl}/consumers`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: id, id, version: 2 }),
  });
  expect(created.status).toBe(201);
  const issued = await fetch(`${gateway.adminUrl}/consumers/${id}/keys`, { method: 'POST' });
  expect(issued.status).toBe(201);
  return { id, key: ((await issued.json()) as { key: string }).key };
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

describe('headers the gateway owns, from a client', () => {
  it.each([
    ['v2', '/v2/orders/ord-1001', {}],
    ['the /api form of v2', '/api/v2/orders/ord-1001', {}],
    ['the header form', '/orders/ord-1001', { 'api-version': '2' }],
    ['the users', '/api/users', {}],
    ['a user', '/api/users/user-1', {}],
  ])(
    'API-Version-Requested and API-Consumer never reach the backend on %s, whatever the method',
    async (_what, path, headers) => {
      const { stub, stubGateway } = targets;
      for (const method of METHODS) {
        const before = stub.arrived.length;
        const body = method === 'POST' || method === 'PUT' || method === 'PATCH' ? '{}' : undefined;
        const res = await fetch(`${stubGateway.apiUrl}${path}`, {
          method,
          headers: {
            ...headers,
            'API-Version-Requested': '1',
            'API-Consumer': 'someone-else',
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          body,
        });
        await res.arrayBuffer();
        const arrived = stub.arrived.slice(before);
        expect(
          arrived.map((seen) => seen.method),
          `${method} ${path}`,
        ).toEqual([method]);
        expect(arrived[0]?.headers, `${method} ${path}`).not.toHaveProperty('api-version-requested');
        expect(arrived[0]?.headers, `${method} ${path}`).not.toHaveProperty('api-consumer');
      }
      await expectServes(stubGateway.apiUrl, '/api/users');
    },
  );

  it('Forwarded gets the hop the gateway saw appended, X-Real-IP is replaced, a forged one goes nowhere', async () => {
    const { stub, stubGateway } = targets;
    const port = new URL(stubGateway.apiUrl).port;
    const cases: [Record<string, string>, string][] = [
      [
        { forwarded: 'for=198.51.100.7;proto=https', 'x-real-ip': '198.51.100.7' },
        `for=198.51.100.7;proto=https, for=127.0.0.1;proto=http;host="127.0.0.1:${port}"`,
      ],
      // An unclosed quote would swallow the appended element: such a value is dropped, not appended to.
      [
        { forwarded: 'for="198.51.100.7', 'x-real-ip': '10.0.0.1' },
        `for=127.0.0.1;proto=http;host="127.0.0.1:${port}"`,
      ],
      [{}, `for=127.0.0.1;proto=http;host="127.0.0.1:${port}"`],
    ];
    for (const path of ['/v2/orders/ord-1001', '/api/users']) {
      for (const [sent, forwarded] of cases) {
        await (await fetch(`${stubGateway.apiUrl}${path}`, { headers: sent })).arrayBuffer();
        const seen = stub.arrived.at(-1)?.headers;
        expect(seen?.forwarded, JSON.stringify(sent)).toBe(forwarded);
        expect(seen?.['x-real-ip']).toBe('127.0.0.1');
        expect(seen?.['x-forwarded-for']).toBe('127.0.0.1');
      }
    }
    await expectServes(stubGateway.apiUrl, '/api/users');
  });
});

describe('an API key in the query string', () => {
  it('is answered 400 naming API-Key, never forwarded, and never written to the log', async () => {
    const { stub, stubGateway, stack } = targets;
    const { key } = await registerConsumer(stubGateway, 'query-key');
    const before = stub.arrived.length;
    for (const [base, path] of [
      [stubGateway.apiUrl, `/api/users?api_key=${key}`],
      [stubGateway.apiUrl, `/v2/orders/ord-1001?limit=1&apiKey=${key}`],
      [stubGateway.apiUrl, `/orders/ord-1001?token=${encodeURIComponent(key)}`],
      [stack.gatewayUrl, `/v1/orders/ord-1001?api_key=${key}`],
      [stack.gatewayUrl, `/deprecations?key=${key}`],
    ] as const) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(400);
      const body = (await res.json()) as { error: string; details: string };
      expect(body.error).toBe('API key belongs in the API-Key header');
    }
    expect(stub.arrived.length).toBe(before);
    // The same key in its header is served.
    expect((await fetch(`${stubGateway.apiUrl}/api/users`, { headers: { 'api-key': key } })).status).toBe(200);
    for (const gateway of [stubGateway, stack.gateway]) {
      // The request lines are logged in batches within 100 ms.
      await expect.poll(() => gateway.output().includes('[redacted]'), { timeout: 2_000 }).toBe(true);
      expect(gateway.output()).not.toContain(key);
      expect(gateway.output()).not.toContain(key.slice(16));
      expect(warnings(gateway)).toEqual([]);
    }
    await expectServes(stubGateway.apiUrl, '/api/users');
    await expectServes(stack.gatewayUrl);
  });
});

describe('the upgrade preview and the comparison, from a client over TCP', () => {
  it('answer malformed, repeated and oversized queries with their exact errors, and keep serving', async () => {
    const { stack } = targets;
    const { id, key } = await registerConsumer(stack.gateway, 'previewer');
    const toError = { error: 'bad request', code: 400, details: 'to must be a version number: ?to=2' };
    for (const query of [
      '',
      '?to=%00',
      '?to=1e3',
      '?to=2&to=2',
      '?to=-1',
      `?to=${'9'.repeat(5_000)}`,
      '?to=%E0%A4%A',
    ]) {
      for (const [url, headers] of [
        [`${stack.gatewayUrl}/consumer/upgrade-preview${query}`, { 'api-key': key }],
        [`${stack.gateway.adminUrl}/consumers/${id}/upgrade-preview${query}`, {}],
      ] as const) {
        const res = await fetch(url, { headers });
        expect(res.status, `${url}`).toBe(400);
        expect(await res.json()).toEqual(toError);
      }
    }
    const keyless = await fetch(`${stack.gatewayUrl}/consumer/upgrade-preview?to=2`);
    expect(keyless.status).toBe(401);
    await keyless.arrayBuffer();
    const inQuery = await fetch(`${stack.gatewayUrl}/consumer/upgrade-preview?to=2&api_key=${key}`);
    expect(inQuery.status).toBe(400);
    expect(((await inQuery.json()) as { error: string }).error).toBe('API key belongs in the API-Key header');
    const unknown = await fetch(`${stack.gateway.adminUrl}/consumers/nobody-${id}/upgrade-preview?to=2`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: 'consumer not found', code: 404 });
    // A path parameter longer than the router takes is the platform's plain 400, as on every admin route.
    const long = await fetch(`${stack.gateway.adminUrl}/consumers/${'x'.repeat(300)}/upgrade-preview?to=2`);
    expect(long.status).toBe(400);
    expect(await long.json()).toEqual({ error: 'bad request', code: 400 });
    for (const path of ['/versions/1/comparison', '/versions/9/comparison', '/versions/%00/comparison']) {
      const res = await fetch(`${stack.gateway.adminUrl}${path}`);
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as { error: string }).error).toBe('not found');
    }
    const previewed = await fetch(`${stack.gatewayUrl}/consumer/upgrade-preview?to=2`, { headers: { 'api-key': key } });
    expect(previewed.status).toBe(200);
    expect(((await previewed.json()) as { verdict: string }).verdict).toBe('safe');
    expect(warnings(stack.gateway)).toEqual([]);
    await expectServes(stack.gatewayUrl);
  });
});

describe('a consumer flipping its pin in a loop', () => {
  it('gets 429 with Retry-After past 10 changes a minute, while other consumers are served', async () => {
    const { stubGateway } = targets;
    const [flipper, other] = [
      await registerConsumer(stubGateway, 'flipper'),
      await registerConsumer(stubGateway, 'bystander'),
    ];
    const pin = (key: string, version: number) =>
      fetch(`${stubGateway.apiUrl}/consumer/version`, {
        method: 'PUT',
        headers: { 'api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ version }),
      });
    // 20 loops of 3 changes each, at once; the bystander's calls go on meanwhile. Each names the current version (v1
    // is removed on its sunset, and a test must not depend on the day it runs): a move to where the pin already is
    // still takes a store transaction.
    const loops = Array.from({ length: 20 }, async () => {
      const answers: { status: number; retryAfter: string | null; body: unknown }[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await pin(flipper.key, 2);
        answers.push({ status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() });
      }
      return answers;
    });
    const bystander = (async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        statuses.push((await pin(other.key, 2)).status);
        const read = await fetch(`${stubGateway.apiUrl}/consumer`, { headers: { 'api-key': other.key } });
        statuses.push(read.status);
        await read.arrayBuffer();
        const order = await fetch(`${stubGateway.apiUrl}/orders/ord-1001`, { headers: { 'api-key': other.key } });
        statuses.push(order.status);
        await order.arrayBuffer();
      }
      return statuses;
    })();
    const answers = (await Promise.all(loops)).flat();
    expect(answers.filter(({ status }) => status === 200)).toHaveLength(10);
    const refused = answers.filter(({ status }) => status !== 200);
    expect(refused).toHaveLength(50);
    for (const { status, retryAfter, body } of refused) {
      expect(status).toBe(429);
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(retryAfter)).toBeLessThanOrEqual(60);
      expect(body).toEqual({
        error: 'too many requests',
        code: 429,
        details: `at most 10 pin changes a minute per consumer; try again in ${retryAfter} s`,
      });
    }
    expect(await bystander).toEqual(Array.from({ length: 15 }, () => 200));
    await expectServes(stubGateway.apiUrl, '/api/users');
  });
});

describe('a fatal error', () => {
  const faultInjection = pathToFileURL(fileURLToPath(new URL('../support/fault-injection.mjs', import.meta.url))).href;
  const withFault = { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${faultInjection}`.trim() };

  /** Sends a request the fault injection holds and throws on; resolves with the exit code. */
  async function fault(service: ServiceProcess): Promise<number | string> {
    const socket = await open(service.apiUrl);
    socket.on('error', () => undefined);
    socket.write('GET /api/users HTTP/1.1\r\nHost: test\r\nX-Test-Fault: uncaught\r\n\r\n');
    return service.exited;
  }

  it('stops the gateway and the backend with exit code 1, after the drain that cannot finish', async () => {
    const [gateway, backend] = await Promise.all([
      startGateway(targets.stub.url, withFault),
      startService('backend', { BACKEND_HOST: '127.0.0.1', BACKEND_PORT: '0', BACKEND_ADMIN_PORT: '0', ...withFault }),
    ]);
    try {
      // Served until the fault: the injection touches nothing else.
      await expectServes(gateway.apiUrl, '/api/users');
      await expectServes(backend.apiUrl);
      expect(await Promise.all([fault(gateway), fault(backend)])).toEqual([1, 1]);
      for (const service of [gateway, backend]) {
        const messages = service.logs.map(({ msg }) => msg);
        expect(messages).toContain('fatal error, shutting down');
        expect(messages).toContain('in-flight requests still running after the grace period; exiting');
        const fatal = service.logs.find(({ msg }) => msg === 'fatal error, shutting down');
        expect((fatal?.err as { message?: string } | undefined)?.message).toBe(
          'a fault injected by the test (X-Test-Fault: uncaught)',
        );
      }
    } finally {
      await Promise.all([gateway.stop(), backend.stop()]);
    }
  });
});
