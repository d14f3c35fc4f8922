import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, startProcessStack, type ProcessStack } from '../e2e/process-stack.js';
import { type ServiceProcess } from '../../platform/test/support/service-process.js';
import { Received, open, type RawResponse } from '../../platform/test/support/raw-http.js';
import { metricValue, scrape } from '../support/metrics.js';
import { exchange, expectServes } from './raw.js';
import { repoRoot } from '../../scripts/paths.mjs';

/**
 * Translated routes against the built processes over TCP (npm run build first): hostile request bodies from a
 * client to the real stack (its shipped policy declares order v1 as changes to v2), and hostile answers from a
 * scripted backend to a gateway in front of it. After each, the gateway process is alive and serving.
 */

const ONE_MIB = 1024 * 1024;
/** 10,000 nested arrays: JSON.parse copes, JSON.stringify and any recursive walk do not. */
const deep = (inner = '1') => '['.repeat(10_000) + inner + ']'.repeat(10_000);

/** One request on its own connection, closed after the answer; chunked when its headers say so. */
function raw(method: string, path: string, headers: Record<string, string> = {}, body: string | Buffer = ''): Buffer {
  const lines = Object.entries({ host: 'test', connection: 'close', ...headers }).map(([k, v]) => `${k}: ${v}\r\n`);
  const length = headers['transfer-encoding'] === undefined ? `content-length: ${Buffer.byteLength(body)}\r\n` : '';
  return Buffer.concat([
    Buffer.from(`${method} ${path} HTTP/1.1\r\n${lines.join('')}${length}\r\n`),
    Buffer.from(body),
  ]);
}

async function only(url: string, request: Buffer): Promise<RawResponse> {
  const { responses } = await exchange(url, request, 15_000);
  expect(responses).toHaveLength(1);
  return responses[0] as RawResponse;
}

/** The gateway is still running and still answers a translated and an untranslated request. */
async function expectAlive(gateway: ServiceProcess, url: string): Promise<void> {
  expect(gateway.child.exitCode).toBeNull();
  await expectServes(url, '/v2/orders/ord-1001');
  await expectServes(url, '/v1/orders/ord-1001');
}

describe('hostile request bodies on translated routes (the shipped policy, the real backend)', () => {
  let stack: ProcessStack;
  beforeAll(async () => {
    stack = await startProcessStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it.each([
    [
      'PUT /orders/ord-1001 (no key, API-Version: 1)',
      'PUT',
      '/orders/ord-1001',
      { 'api-version': '1' },
      `{"user_id":${deep()}}`,
    ],
    ['POST /v1/orders/ord-1001, a bare array', 'POST', '/v1/orders/ord-1001', {}, deep()],
  ])('%s with 10,000 nested arrays is 400 invalid request body', async (_what, method, path, headers, body) => {
    const answer = await only(
      stack.gatewayUrl,
      raw(method, path, { 'content-type': 'application/json', ...headers }, body),
    );
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toEqual({
      error: 'invalid request body',
      code: 400,
      details: expect.stringMatching(/^nested deeper than 64 levels at position \d+$/) as string,
    });
    await expectAlive(stack.gateway, stack.gatewayUrl);
  });

  it('forwards PUT /orders/ord-1001 with no key and no version, 10,000 levels deep, untranslated to the default v2', async () => {
    // The shipped default is the current version, which no translation serves: the backend answers for itself.
    const answer = await only(
      stack.gatewayUrl,
      raw('PUT', '/orders/ord-1001', { 'content-type': 'application/json' }, `{"user_id":${deep()}}`),
    );
    expect([answer.status, answer.headers['api-version']]).toEqual([405, '2']);
    await expectAlive(stack.gateway, stack.gatewayUrl);
  });

  it('is 413 with the envelope on the socket for a body over TRANSLATION_MAX_BYTES, by Content-Length', async () => {
    const body = `{"note":"${'n'.repeat(ONE_MIB + ONE_MIB / 2)}"}`;
    const answer = await only(
      stack.gatewayUrl,
      raw('POST', '/v1/orders/ord-1001', { 'content-type': 'application/json' }, body),
    );
    expect([answer.status, JSON.parse(answer.body)]).toEqual([
      413,
      {
        error: 'payload too large',
        code: 413,
        details: 'a translated request body is read whole, up to 1048576 bytes',
      },
    ]);
    await expectAlive(stack.gateway, stack.gatewayUrl);
  });

  it('is 413 on the socket for a chunked body that grows past TRANSLATION_MAX_BYTES, sent while the client still sends', async () => {
    const received = new Received(await open(stack.gatewayUrl));
    received.socket.write(
      raw('POST', '/v1/orders/ord-1001', { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }),
    );
    const chunk = 'n'.repeat(64 * 1024);
    received.socket.write(`${(1 + 8).toString(16)}\r\n{"note":"\r\n`);
    for (let sent = 0; sent < 2 * ONE_MIB; sent += chunk.length) {
      received.socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    }
    received.socket.write('2\r\n"}\r\n0\r\n\r\n');
    await received.closed(15_000);
    expect(received.responses.map((res) => [res.status, JSON.parse(res.body) as unknown])).toEqual([
      [
        413,
        {
          error: 'payload too large',
          code: 413,
          details: 'a translated request body is read whole, up to 1048576 bytes',
        },
      ],
    ]);
    await expectAlive(stack.gateway, stack.gatewayUrl);
  });

  it.each([
    ['a form-typed body (curl -d)', { 'content-type': 'application/x-www-form-urlencoded' }, 'user_id=u'],
    ['a gzip-encoded JSON body', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, gzipSync('{}')],
  ])('is 415 for %s, never forwarded untranslated', async (_what, headers, body) => {
    const answer = await only(stack.gatewayUrl, raw('POST', '/v1/orders/ord-1001', headers, body));
    expect(answer.status).toBe(415);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'unsupported media type', code: 415 });
    await expectAlive(stack.gateway, stack.gatewayUrl);
  });
});

/** What the scripted backend answers at each path of its v2 orders (anything else: an ordinary v2 order). */
const V2_ORDER = '{"id":"ord-1001","customer_id":"user-1","total_cents":1999,"currency":"EUR"}';
const json = { 'content-type': 'application/json' };
const cached = {
  'content-type': 'application/json',
  'cache-control': 'public, max-age=600',
  'set-cookie': 'session=abc',
  'last-modified': 'Wed, 21 Oct 2026 07:28:00 GMT',
  etag: '"abc"',
};
interface Scripted {
  headers: Record<string, string>;
  body: string | Buffer;
  status?: number;
}
const SCRIPT: Record<string, Scripted> = {
  deep: { headers: json, body: `{"customer_id":${deep()}}` },
  exact: {
    headers: json,
    body: '{"id":123456789012345678,"customer_id":"u","total_cents":1999,"zero":-0,"huge":1e400,"exp":1E5,"2":"two"}',
  },
  infinite: { headers: json, body: '{"customer_id":"u","total_cents":1e400}' },
  collision: { headers: cached, body: '{"customer_id":"a","user_id":"b"}' },
  hal: {
    headers: { 'content-type': 'application/hal+json' },
    body: '{"customer_id":"u","_links":{"self":{"href":"/v2/orders/hal"}}}',
  },
  problem: { headers: { 'content-type': 'application/problem+json' }, body: '{"customer_id":"u"}' },
  'vnd-api': { headers: { 'content-type': 'application/vnd.api+json' }, body: '{"customer_id":"u"}' },
  untyped: { headers: {}, body: '{"customer_id":"u"}' },
  encoded: { headers: { ...json, 'content-encoding': 'gzip' }, body: gzipSync(V2_ORDER) },
  huge: { headers: json, body: `{"customer_id":"${'u'.repeat(2 * ONE_MIB)}"}` },
  large: { headers: json, body: `{"customer_id":"${'u'.repeat(600 * 1024)}"}` },
  created: {
    headers: { ...json, location: '/v2/orders/ord-9', 'content-location': '/v2/orders/ord-9' },
    body: V2_ORDER,
    status: 201,
  },
};

/** A 600 KB answer that sends its head and half its body and waits: a translation in progress holding its bytes. */
const SLOW_BYTES = 600 * 1024;

async function startScriptedBackend(): Promise<{ url: string; release: () => void; close: () => Promise<void> }> {
  const waiting: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if ((req.url ?? '').startsWith('/v2/openapi.json')) {
        res.writeHead(200, json).end(`{"openapi":"3.1.0","info":{"version":"2"},"paths":{},"x-deep":${deep()}}`);
        return;
      }
      const name = /\/v2\/orders\/([^/?]+)/.exec(req.url ?? '')?.[1] ?? '';
      if (name === 'slow') {
        const body = `{"customer_id":"${'u'.repeat(SLOW_BYTES - 18)}"}`;
        res.writeHead(200, { ...json, 'content-length': String(SLOW_BYTES) }).write(body.slice(0, 1000));
        waiting.push(() => res.end(body.slice(1000)));
        return;
      }
      const scripted: Scripted = SCRIPT[name] ?? { headers: json, body: V2_ORDER };
      res.writeHead(scripted.status ?? 200, scripted.headers).end(scripted.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    release: () => waiting.splice(0).forEach((finish) => finish()),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('hostile answers on translated routes (a scripted backend)', () => {
  let backend: Awaited<ReturnType<typeof startScriptedBackend>>;
  let gateway: ServiceProcess;
  beforeAll(async () => {
    backend = await startScriptedBackend();
    // One body's limit for all translations in progress: a second 600 KB one finds no room.
    gateway = await startGateway(backend.url, { TRANSLATION_MAX_INFLIGHT_BYTES: String(ONE_MIB) });
  });
  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  const get = (name: string) => only(gateway.apiUrl, raw('GET', `/v1/orders/${name}`));

  it.each([
    ['nested 10,000 deep', 'deep', 'depth'],
    ['with a scaled value that is no finite number (1e400)', 'infinite', 'not_finite'],
    ['holding both customer_id and user_id', 'collision', 'collision'],
    ['without a Content-Type', 'untyped', 'untyped'],
    ['gzip-encoded', 'encoded', 'encoded'],
    ['of 2 MiB', 'huge', 'too_large'],
  ])('an answer %s is the gateway own 502, no-store, without the upstream headers', async (_what, name, reason) => {
    const before = await failures(reason);
    const answer = await get(name);
    expect([answer.status, answer.body]).toEqual([502, '{"error":"bad gateway","code":502}']);
    expect(answer.headers['cache-control']).toBe('no-store');
    for (const header of ['set-cookie', 'last-modified', 'etag']) expect(answer.headers).not.toHaveProperty(header);
    expect(answer.headers['api-version']).toBe('1');
    expect(await failures(reason)).toBe(before + 1);
    await expectAlive(gateway, gateway.apiUrl);
  });

  async function failures(reason: string): Promise<number> {
    const series = `translation_failures_total{version="1",resource="/orders/:id",direction="response",reason="${reason}"}`;
    const metrics = await scrape(gateway.adminUrl);
    return metrics.includes(series) ? metricValue(metrics, series) : 0;
  }

  it("answers 502 for a version's OpenAPI document nested 10,000 deep, derived from the successor's", async () => {
    const answer = await only(gateway.apiUrl, raw('GET', '/v1/openapi.json'));
    expect([answer.status, answer.body]).toEqual([502, '{"error":"bad gateway","code":502}']);
    await expectAlive(gateway, gateway.apiUrl);
  });

  it('keeps big integers, -0, 1e400, 1E5 and integer keys of an answer as the backend wrote them', async () => {
    const answer = await get('exact');
    expect(answer.body).toBe(
      '{"id":123456789012345678,"user_id":"u","total":19.99,"zero":-0,"huge":1e400,"exp":1E5,"2":"two"}',
    );
    await expectAlive(gateway, gateway.apiUrl);
  });

  it.each([
    ['hal', 'application/hal+json', '{"user_id":"u","_links":{"self":{"href":"/v2/orders/hal"}}}'],
    ['problem', 'application/problem+json', '{"user_id":"u"}'],
    ['vnd-api', 'application/vnd.api+json', '{"user_id":"u"}'],
  ])('translates a %s answer (%s)', async (name, type, body) => {
    const answer = await get(name);
    expect([answer.status, answer.headers['content-type'], answer.body]).toEqual([200, type, body]);
  });

  it('names version 1 in the Location and Content-Location of a translated 201', async () => {
    const answer = await only(
      gateway.apiUrl,
      raw('POST', '/v1/orders/created', { 'content-type': 'application/json' }, '{"user_id":"u"}'),
    );
    expect([answer.status, answer.headers.location, answer.headers['content-location']]).toEqual([
      201,
      '/v1/orders/ord-9',
      '/v1/orders/ord-9',
    ]);
  });

  it('is 503 with Retry-After while translations in progress hold TRANSLATION_MAX_INFLIGHT_BYTES, then serves again', async () => {
    const slow = new Received(await open(gateway.apiUrl));
    slow.socket.write(raw('GET', '/v1/orders/slow'));
    // The slow answer's 600 KB are held once its head has arrived; another 600 KB answer then finds no room.
    let refused: RawResponse | undefined;
    for (let attempt = 0; attempt < 50 && refused?.status !== 503; attempt++) {
      refused = await get('large');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(refused?.status).toBe(503);
    expect(refused?.headers['retry-after']).toBe('1');
    expect(JSON.parse(refused?.body ?? '')).toMatchObject({ error: 'service unavailable', code: 503 });
    backend.release();
    const [served] = await slow.responsesAtLeast(1, 15_000);
    expect(served?.status).toBe(200);
    slow.socket.destroy();
    await expectAlive(gateway, gateway.apiUrl);
  });
});

/**
 * What the second edition's operations read from an answer besides its body (a status, a header, the Link header),
 * and the modules a policy runs: each hostile answer, at each, is refused or passed as the rules say, and the
 * gateway serves on.
 */
describe("hostile answers at the second edition's operations (a scripted backend, a policy with modules)", () => {
  const changes = [
    { resource: '/orders/:id', op: 'envelope', field: 'data' },
    { resource: '/orders/:id', op: 'status', from: 403, to: 401 },
    { resource: '/orders/:id', op: 'header', name: 'Total-Count', to: 'X-Total-Count' },
    { resource: '/orders/:id', op: 'link', field: 'next' },
    { resource: '/orders/:id', op: 'link', field: 'Link' },
    { resource: '/orders/:id', op: 'rename', field: 'details', to: 'message', on: 'error' },
    { resource: '/orders/:id', op: 'module', module: 'throws.mjs' },
    { resource: '/orders/:id', op: 'module', module: 'recurses.mjs' },
  ];
  const forbidden = { 'content-type': 'application/json' };
  const scripted: Record<string, Scripted> = {
    'deep-403': { status: 403, headers: forbidden, body: `{"error":"forbidden","code":403,"x":${deep()}}` },
    'huge-403': { status: 403, headers: forbidden, body: `{"error":"${'e'.repeat(2 * ONE_MIB)}","code":403}` },
    'deep-error': { status: 500, headers: json, body: `{"message":${deep()}}` },
    'both-headers': { headers: { ...json, 'total-count': '1', 'x-total-count': '2' }, body: '{"data":{}}' },
    'many-links': {
      headers: {
        ...json,
        link: Array.from({ length: 300 }, (_, i) => `</v2/orders/o-${i}>; rel="item"`).join(', '),
      },
      body: '{"data":{}}',
    },
    'odd-link': { headers: { ...json, link: '<<<>>>; rel=, <'.repeat(500) }, body: '{"data":{}}' },
    'deep-data': { headers: json, body: `{"data":${deep()}}` },
    'exact-data': {
      headers: json,
      body: '{"data":{"n":1e400,"id":123456789012345678,"next":"/v2/orders/2"},"meta":1}',
    },
    'odd-next': { headers: json, body: `{"data":{"next":{"href":"/v2/x"},"other":"${'/v2/'.repeat(10_000)}"}}` },
    explode: { headers: json, body: '{"data":{"explode":true}}' },
    recurse: { headers: json, body: '{"data":{"recurse":true}}' },
    cycle: { headers: json, body: '{"data":{"cycle":true}}' },
    'module-huge': { headers: json, body: '{"data":{"huge":true}}' },
  };
  let backend: Server;
  let backendUrl: string;
  let gateway: ServiceProcess;

  beforeAll(async () => {
    backend = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const name = /\/v2\/orders\/([^/?]+)/.exec(req.url ?? '')?.[1] ?? '';
        const answer: Scripted = scripted[name] ?? { headers: json, body: V2_ORDER };
        res.writeHead(answer.status ?? 200, answer.headers).end(answer.body);
      });
    });
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    backendUrl = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
    const dir = mkdtempSync(join(tmpdir(), 'hostile-policy-'));
    for (const module of ['throws.mjs', 'recurses.mjs'])
      copyFileSync(join(repoRoot, 'gateway/test/translation/modules', module), join(dir, module));
    // Deprecated now, whatever today is: its answers carry the successor link the upstream's links follow.
    const day = 86_400_000;
    const announced = new Date(Date.now() - day).toISOString();
    const sunset = new Date(Date.now() + 400 * day).toISOString();
    const versions = [
      { version: 1, status: 'deprecated', announced, sunset, successor: 2, changes },
      { version: 2, status: 'current' },
    ];
    writeFileSync(join(dir, 'versions.json'), JSON.stringify({ default_version: 2, versions }));
    gateway = await startGateway(backendUrl, { API_VERSIONS_FILE: join(dir, 'versions.json') });
  });
  afterAll(async () => {
    await gateway?.stop();
    backend?.closeAllConnections();
    await new Promise<void>((resolve) => backend?.close(() => resolve()));
  });

  const get = (name: string, headers: Record<string, string> = {}) =>
    only(gateway.apiUrl, raw('GET', `/v1/orders/${name}`, headers));

  async function failures(reason: string): Promise<number> {
    const series = `translation_failures_total{version="1",resource="/orders/:id",direction="response",reason="${reason}"}`;
    const metrics = await scrape(gateway.adminUrl);
    return metrics.includes(series) ? metricValue(metrics, series) : 0;
  }

  it.each([
    ['a 403 whose envelope is nested 10,000 deep (its code follows the status)', 'deep-403', 'depth'],
    ['a 403 of 2 MiB', 'huge-403', 'too_large'],
    ['an error envelope nested 10,000 deep', 'deep-error', 'depth'],
    ['with both names of a renamed header', 'both-headers', 'collision'],
    ['whose enveloped body is nested 10,000 deep', 'deep-data', 'depth'],
    ['on which a module throws', 'explode', 'module'],
    ['on which a module recurses without end', 'recurse', 'module'],
    ['on which a module returns a cycle', 'cycle', 'depth'],
    ['on which a module returns 2 MiB', 'module-huge', 'too_large'],
  ])('an answer %s is the gateway own 502, counted, and the gateway serves on', async (_what, name, reason) => {
    const before = await failures(reason);
    const answer = await get(name);
    expect([answer.status, answer.body]).toEqual([502, '{"error":"bad gateway","code":502}']);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(await failures(reason)).toBe(before + 1);
    expect(gateway.child.exitCode).toBeNull();
    await expectServes(gateway.apiUrl, '/v1/orders/ord-1001');
  });

  it('keeps the text of what no change touches inside an envelope, and rewrites only what names version 2', async () => {
    expect((await get('exact-data')).body).toBe('{"n":1e400,"id":123456789012345678,"next":"/v1/orders/2"}');
    expect((await get('odd-next')).body).toBe(`{"next":{"href":"/v2/x"},"other":"${'/v2/'.repeat(10_000)}"}`);
  });

  it("rewrites a Link of 300 targets and passes one that is no list of targets, after the gateway's own", async () => {
    const many = await get('many-links');
    expect(many.status).toBe(200);
    const links = String(many.headers.link).split(', ');
    expect(links[0]).toBe('</v2/orders/many-links>; rel="successor-version"');
    expect(links.slice(1)).toEqual(Array.from({ length: 300 }, (_, i) => `</v1/orders/o-${i}>; rel="item"`));
    const odd = await get('odd-link');
    expect(odd.status).toBe(200);
    expect(String(odd.headers.link).startsWith('</v2/orders/odd-link>; rel="successor-version", <<<>>>')).toBe(true);
    await expectServes(gateway.apiUrl, '/v1/orders/ord-1001');
  });

  it('answers 400 to a request that carries both names of a renamed header, before the backend sees it', async () => {
    const answer = await get('ord-1001', { 'x-total-count': '1', 'total-count': '2' });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toEqual({
      error: 'bad request',
      code: 400,
      details: 'the header x-total-count becomes total-count, which is there already',
    });
    await expectServes(gateway.apiUrl, '/v1/orders/ord-1001');
  });
});
