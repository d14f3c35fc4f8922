import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createFetch, describeDeprecation, type DeprecationReport } from '../src/index.js';
import { requestsTo, startLiveGateway, type LiveGateway } from './live-gateway.js';

let live: LiveGateway;
beforeAll(async () => {
  live = await startLiveGateway();
});
afterAll(async () => {
  await live.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** The reports a client makes, and a way to wait until the ones due have arrived. */
function collect(): { reports: DeprecationReport[]; onDeprecation: (report: DeprecationReport) => void } {
  const reports: DeprecationReport[] = [];
  return { reports, onDeprecation: (report) => reports.push(report) };
}

describe('createFetch against the gateway', () => {
  it('reports a deprecated operation once for many ids, with its sunset, successor and migration guide', async () => {
    const { reports, onDeprecation } = collect();
    const versionsBefore = requestsTo(live, '/versions');
    const client = createFetch({ apiKey: live.key, onDeprecation });
    for (let id = 1000; id < 1040; id += 1) {
      const res = await client(`${live.url}/v1/orders/ord-${id}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('deprecation')).toBe('true');
      await res.arrayBuffer();
    }
    await vi.waitFor(() => expect(reports).toHaveLength(1));
    expect(reports[0]).toEqual({
      method: 'GET',
      url: `${live.url}/v1/orders/ord-1000`,
      operation: 'GET /v1/orders/{id}',
      version: 1,
      sunset: new Date('2027-01-01T00:00:00.000Z'),
      successor: `${live.url}/v2/orders/ord-1000`,
      changes: `${live.url}/versions/1/changes`,
      removed: false,
    });
    // The guide's URL was read once, not per request.
    expect(requestsTo(live, '/versions') - versionsBefore).toBe(1);
    // The current version is not reported.
    await (await client(`${live.url}/v2/orders/ord-1`)).arrayBuffer();
    expect(reports).toHaveLength(1);
  });

  it(
    'sends API-Key and API-Version: the header form is served the version asked, and the backend learns the ' +
      'consumer',
    async () => {
      const { reports, onDeprecation } = collect();
      const client = createFetch({ apiKey: live.key, apiVersion: 1, onDeprecation });
      const seenBefore = live.backend.seen.length;
      const res = await client(`${live.url}/orders/ord-7`);
      expect(res.status).toBe(200);
      expect(res.headers.get('api-version')).toBe('1');
      expect(live.backend.seen.slice(seenBefore).map((request) => request.headers['api-consumer'])).toEqual(['acme']);
      await vi.waitFor(() => expect(reports).toHaveLength(1));
      expect(reports[0]).toMatchObject({
        operation: 'GET /orders/{id}',
        version: 1,
        successor: `${live.url}/v2/orders/ord-7`,
      });
      // A request's own header wins over the client's.
      const v2 = await client(`${live.url}/orders/ord-7`, { headers: { 'API-Version': '2' } });
      expect(v2.headers.get('api-version')).toBe('2');
      expect(v2.headers.get('deprecation')).toBeNull();
    },
  );

  it(
    'reports each method, path shape and version apart: the /api form and a Request input are operations of their ' +
      'own',
    async () => {
      const { reports, onDeprecation } = collect();
      const client = createFetch({ onDeprecation });
      for (const url of ['/v1/orders/ord-1', '/api/v1/orders/ord-1', '/api/v1/orders/ord-2', '/v1/orders/ord-3'])
        await (await client(`${live.url}${url}`)).arrayBuffer();
      await (await client(new Request(`${live.url}/v1/orders/ord-4`, { method: 'HEAD' }))).arrayBuffer();
      await vi.waitFor(() => expect(reports).toHaveLength(3));
      expect(reports.map((report) => report.operation).sort()).toEqual([
        'GET /api/v1/orders/{id}',
        'GET /v1/orders/{id}',
        'HEAD /v1/orders/{id}',
      ]);
    },
  );

  it("reports a brownout's 410, the gateway's own answer, with the version the path names", async () => {
    const { lifecyclePolicyFile, BROWNOUT_START } = await import('../../gateway/test/support/helpers.js');
    const brownout = await startLiveGateway({ policy: lifecyclePolicyFile, now: BROWNOUT_START });
    try {
      const { reports, onDeprecation } = collect();
      const res = await createFetch({ onDeprecation })(`${brownout.url}/v1/orders/ord-1`);
      expect(res.status).toBe(410);
      expect(res.headers.get('api-version')).toBeNull();
      await vi.waitFor(() => expect(reports).toHaveLength(1));
      expect(reports[0]).toMatchObject({
        version: 1,
        changes: `${brownout.url}/versions/1/changes`,
        sunset: new Date('2027-01-01T00:00:00Z'),
      });
    } finally {
      await brownout.close();
    }
  });

  it('still reports when GET /versions fails, without a guide, and asks again with the next operation', async () => {
    const { reports, onDeprecation } = collect();
    const asked: string[] = [];
    const failingVersions: typeof fetch = async (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      asked.push(new URL(url).pathname);
      if (url.endsWith('/versions')) throw new TypeError('fetch failed');
      return fetch(input, init);
    };
    const client = createFetch({ onDeprecation, fetch: failingVersions });
    await (await client(`${live.url}/v1/orders/ord-1`)).arrayBuffer();
    await (await client(`${live.url}/v1/orders/ord-2`)).arrayBuffer();
    await vi.waitFor(() => expect(reports).toHaveLength(1));
    expect(reports[0]).toMatchObject({
      operation: 'GET /v1/orders/{id}',
      changes: null,
      successor: `${live.url}/v2/orders/ord-1`,
    });
    await (await client(`${live.url}/api/v1/orders/ord-1`)).arrayBuffer();
    await vi.waitFor(() => expect(reports).toHaveLength(2));
    expect(asked.filter((path) => path === '/versions')).toHaveLength(2);
  });

  it('warns in one console line by default', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const client = createFetch();
    for (const id of [1, 2, 3]) await (await client(`${live.url}/v1/orders/ord-${id}`)).arrayBuffer();
    await vi.waitFor(() => expect(warn).toHaveBeenCalledTimes(1));
    expect(warn.mock.calls[0]).toEqual([
      `version-router: GET /v1/orders/{id} calls deprecated API version 1 (${live.url}/v1/orders/ord-1); sunset ` +
        `2027-01-01T00:00:00.000Z; ` +
        `successor ${live.url}/v2/orders/ord-1; migration guide ${live.url}/versions/1/changes`,
    ]);
  });

  it('passes a failing onDeprecation on as a process warning, and the request still succeeds', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const client = createFetch({
        onDeprecation: () => {
          throw new Error('the callback broke');
        },
      });
      const res = await client(`${live.url}/v1/orders/ord-1`);
      expect(res.status).toBe(200);
      await vi.waitFor(() => expect(warnings.map((warning) => warning.message)).toEqual(['the callback broke']));
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe('createFetch and a removed version', () => {
  it('reports the 410 of a removed version, which carries Sunset but no Deprecation, as removed, once', async () => {
    const { designPolicyFile, V1_SUNSET } = await import('../../gateway/test/support/helpers.js');
    const removed = await startLiveGateway({ policy: designPolicyFile, now: V1_SUNSET });
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const client = createFetch({ apiKey: removed.key });
      for (const id of [1, 2, 3]) {
        const res = await client(`${removed.url}/v1/orders/ord-${id}`);
        expect(res.status).toBe(410);
        expect(res.headers.get('deprecation')).toBeNull();
        await res.arrayBuffer();
      }
      await vi.waitFor(() => expect(warn).toHaveBeenCalledTimes(1));
      expect(warn.mock.calls[0]).toEqual([
        `version-router: GET /v1/orders/{id} calls removed API version 1 (${removed.url}/v1/orders/ord-1); answered ` +
          `410 Gone; sunset 2027-01-01T00:00:00.000Z; successor ${removed.url}/v2/orders/ord-1; migration guide ` +
          `${removed.url}/versions/1/changes`,
      ]);
    } finally {
      await removed.close();
    }
  });
});

describe('createFetch and redirects', () => {
  /** The live gateway in front of a backend that answers a redirect where the query asks for one. */
  interface Redirecting {
    gatewayUrl: string;
    /** The gateway's backend, and another origin. */
    backend: Recorder;
    elsewhere: Recorder;
    key: string;
    close(): Promise<void>;
  }
  interface Recorder {
    url: string;
    seen: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[];
    close(): Promise<void>;
  }

  /** A loopback server that records each request; under `/api/users/to`, it answers the redirect its query asks. */
  async function startRecorder(): Promise<Recorder> {
    const seen: Recorder['seen'] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
        const location = query.get('location');
        if (location !== null) res.writeHead(Number(query.get('status') ?? 302), { location }).end();
        else res.writeHead(200, { 'content-type': 'application/json' }).end('{"landed":true}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      seen,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  }

  let setup: Redirecting;
  beforeAll(async () => {
    const { buildTestGateway } = await import('../../gateway/test/support/helpers.js');
    const { consumerWithKey, createMemoryConsumerStore } = await import('../../gateway/test/support/memory-store.js');
    const [backend, elsewhere] = [await startRecorder(), await startRecorder()];
    const store = createMemoryConsumerStore();
    const { key } = await consumerWithKey(store, 'acme');
    const gateway = await buildTestGateway(backend.url, { consumerStore: store });
    const url = await gateway.app.listen({ host: '127.0.0.1', port: 0 });
    setup = {
      gatewayUrl: url,
      elsewhere,
      backend,
      key,
      close: async () => {
        await gateway.app.close();
        await backend.close();
        await elsewhere.close();
      },
    };
  });
  afterAll(async () => {
    await setup.close();
  });

  const redirect = (location: string, status = 302): string =>
    `${setup.gatewayUrl}/api/users/to?status=${status}&location=${encodeURIComponent(location)}`;

  it('follows a redirect to another origin (another loopback port) without API-Key', async () => {
    const client = createFetch({ apiKey: setup.key, apiVersion: 2 });
    const res = await client(redirect(`${setup.elsewhere.url}/landing`));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ landed: true });
    expect(res.url).toBe(`${setup.elsewhere.url}/landing`);
    const landed = setup.elsewhere.seen.at(-1);
    expect(landed?.url).toBe('/landing');
    expect(landed?.headers).not.toHaveProperty('api-key');
    expect(landed?.headers['api-version']).toBe('2');
    // The gateway had the key: it told its backend the consumer.
    expect(setup.backend.seen.at(-1)?.headers['api-consumer']).toBe('acme');
  });

  it("keeps the key on the gateway's own origin, and does not bring it back once it left", async () => {
    const client = createFetch({ apiKey: setup.key });
    const home = await client(redirect('/api/users/home'));
    expect(home.status).toBe(200);
    expect(setup.backend.seen.at(-1)).toMatchObject({ url: '/api/users/home' });
    expect(setup.backend.seen.at(-1)?.headers['api-consumer']).toBe('acme');
    const back = await client(
      redirect(`${setup.elsewhere.url}/api/users/to?location=${encodeURIComponent(redirect('/api/users/back'))}`),
    );
    expect(back.status).toBe(200);
    expect(setup.backend.seen.at(-1)?.url).toBe('/api/users/back');
    expect(setup.backend.seen.at(-1)?.headers).not.toHaveProperty('api-consumer');
  });

  it('keeps method and body on a 307 (the key dropped), and turns a POST into a GET on a 303', async () => {
    const client = createFetch({ apiKey: setup.key });
    const body = '{"name":"ada"}';
    const kept = await client(redirect(`${setup.elsewhere.url}/kept`, 307), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(kept.status).toBe(200);
    expect(setup.elsewhere.seen.at(-1)).toMatchObject({ method: 'POST', url: '/kept', body });
    expect(setup.elsewhere.seen.at(-1)?.headers).not.toHaveProperty('api-key');
    const seeOther = await client(redirect(`${setup.elsewhere.url}/other`, 303), { method: 'POST', body });
    expect(seeOther.status).toBe(200);
    expect(setup.elsewhere.seen.at(-1)).toMatchObject({ method: 'GET', url: '/other', body: '' });
    expect(setup.elsewhere.seen.at(-1)?.headers).not.toHaveProperty('content-type');
  });

  it('leaves a request with redirect: manual alone, and one without a key to fetch', async () => {
    const manual = await createFetch({ apiKey: setup.key })(redirect(`${setup.elsewhere.url}/x`), {
      redirect: 'manual',
    });
    expect(manual.status).toBe(302);
    expect(manual.headers.get('location')).toBe(`${setup.elsewhere.url}/x`);
    const keyless = await createFetch()(redirect(`${setup.elsewhere.url}/keyless`));
    expect(keyless.status).toBe(200);
    expect(keyless.redirected).toBe(true);
  });
});

describe('describeDeprecation', () => {
  it('leaves out what is unknown', () => {
    const line = describeDeprecation({
      method: 'GET',
      url: 'http://x/y/1',
      operation: 'GET /y/{id}',
      version: null,
      sunset: null,
      successor: null,
      changes: null,
      removed: false,
    });
    expect(line).toBe('version-router: GET /y/{id} calls a deprecated API version (http://x/y/1)');
  });
});
