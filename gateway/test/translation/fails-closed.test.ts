// Translation that fails closed: every body the gateway will not translate is refused with its own status and
// text, counted and logged once; what it translates is exact. Over inject; test/hostile/translation.hostile.ts
// sends the same over TCP to the built processes.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildTestGateway, type TestGateway } from '../support/helpers.js';

const ORDER = '/orders/:id';
const policy = {
  default_version: 1,
  resources: [ORDER, '/orders', '/openapi.json'],
  versions: [
    {
      version: 1,
      status: 'deprecated',
      announced: '2026-06-01',
      sunset: '2027-01-01T00:00:00Z',
      successor: 2,
      changes: [
        { resource: ORDER, op: 'rename', field: 'user_id', to: 'customer_id' },
        { resource: ORDER, op: 'scale', field: 'total', to: 'total_cents', factor: 100 },
        { resource: ORDER, op: 'add', field: 'currency', default: 'EUR' },
      ],
    },
    { version: 2, status: 'current' },
  ],
};

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string | Buffer;
}
interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A backend serving v2 whose answer to each path the test scripts; it echoes a request's body otherwise. */
async function startScriptedBackend() {
  const answers = new Map<string, Answer>();
  const seen: Seen[] = [];
  /**
   * Paths with `hold` in them: a 700-byte answer whose first half is sent and whose rest waits until `release` is
   * called; a translation in progress that holds its bytes.
   */
  const held = new Map<string, () => void>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      const url = req.url ?? '';
      seen.push({ method: req.method ?? '', url, headers: req.headers, body });
      const answer = answers.get(url.split('?', 1)[0] ?? '') ?? {
        status: req.method === 'POST' ? 201 : 200,
        headers: { 'content-type': 'application/json' },
        body: body === '' ? '{"id":"ord-1001","customer_id":"user-1","total_cents":1999,"currency":"EUR"}' : body,
      };
      if (url.includes('hold')) {
        const slow = `{"customer_id":"${'u'.repeat(700 - 18)}"}`;
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '700' }).write(slow.slice(0, 350));
        held.set(url, () => res.end(slow.slice(350)));
      } else res.writeHead(answer.status, answer.headers).end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    answers,
    seen,
    held,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let backend: Awaited<ReturnType<typeof startScriptedBackend>>;
let gateway: TestGateway;

async function useGateway(options: Parameters<typeof buildTestGateway>[1] = {}): Promise<void> {
  await gateway.app.close();
  gateway = await buildTestGateway(backend.url, { policy, ...options });
}

beforeEach(async () => {
  backend = await startScriptedBackend();
  gateway = await buildTestGateway(backend.url, { policy });
});
afterEach(async () => {
  await gateway.app.close();
  await backend.close();
});

const json = { 'content-type': 'application/json' };
const send = (method: string, url: string, headers: Record<string, string> = {}, payload?: string | Buffer) =>
  gateway.app.inject({ method: method as 'GET', url, headers, ...(payload === undefined ? {} : { payload }) });
const answer = (path: string, body: string | Buffer, headers: Record<string, string> = json, status = 200) =>
  backend.answers.set(path, { status, headers, body });

/** The translation's warn lines, as message and reason. */
const warnings = () =>
  gateway.logs
    .filter((line) => line.level === 40 && String(line.msg).startsWith('translation:'))
    .map((line) => ({ msg: line.msg, reason: line.reason, details: line.details }));

async function failures(): Promise<string[]> {
  return (await gateway.metricLines('translation_failures_total')).filter((line) => !line.startsWith('#'));
}

const nested = (depth: number, inner = '1') => '['.repeat(depth) + inner + ']'.repeat(depth);

describe('a request body the gateway will not translate', () => {
  it('is 400 invalid request body, counted and logged once, when nested deeper than TRANSLATION_MAX_DEPTH', async () => {
    const res = await send('PUT', '/orders/ord-1001', json, `{"user_id":${nested(10_000)}}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'invalid request body',
      code: 400,
      details: 'nested deeper than 64 levels at position 74',
    });
    expect(backend.seen).toEqual([]);
    expect(warnings()).toEqual([
      {
        msg: 'translation: the request body cannot be translated',
        reason: 'depth',
        details: 'nested deeper than 64 levels at position 74',
      },
    ]);
    expect(await failures()).toEqual([
      'translation_failures_total{version="1",resource="/orders/:id",direction="request",reason="depth"} 1',
    ]);
  });

  it('goes as deep as TRANSLATION_MAX_DEPTH says, and no deeper', async () => {
    await useGateway({ translationMaxDepth: 3 });
    expect((await send('POST', '/v1/orders/ord-1001', json, `{"note":${nested(2)}}`)).statusCode).toBe(201);
    const deeper = await send('POST', '/v1/orders/ord-1001', json, `{"note":${nested(3)}}`);
    expect(deeper.json()).toMatchObject({ code: 400, details: 'nested deeper than 3 levels at position 10' });
  });

  it('is 400 naming the field when a scaled value is no finite number', async () => {
    const res = await send('POST', '/v1/orders/ord-1001', json, '{"user_id":"u","total":1e307}');
    expect(res.json()).toEqual({
      error: 'invalid request body',
      code: 400,
      details: '$.total: not a finite number when multiplied by 100',
    });
    expect(backend.seen).toEqual([]);
  });

  it('is 400 when two of its fields would have one name in the serving version', async () => {
    const res = await send('POST', '/v1/orders/ord-1001', json, '{"user_id":"u","customer_id":"c"}');
    expect(res.json()).toEqual({
      error: 'invalid request body',
      code: 400,
      details: '$: "user_id" becomes "customer_id", which the body already has',
    });
    expect(await failures()).toEqual([
      'translation_failures_total{version="1",resource="/orders/:id",direction="request",reason="collision"} 1',
    ]);
  });

  it.each([
    ['text/plain', {}, 'send them as application/json or application/*+json'],
    ['application/x-www-form-urlencoded', {}, 'send them as application/json or application/*+json'],
    ['application/json', { 'content-encoding': 'gzip' }, 'send them without Content-Encoding'],
  ])('is 415 unsupported media type for a %s body %j', async (type, headers, what) => {
    const res = await send('POST', '/v1/orders/ord-1001', { 'content-type': type, ...headers }, '{"user_id":"u"}');
    expect(res.statusCode).toBe(415);
    expect(res.json()).toEqual({
      error: 'unsupported media type',
      code: 415,
      details: `version 1 translates request bodies on /orders/:id: ${what}`,
    });
    expect(backend.seen).toEqual([]);
  });

  it('is 415 for a body without a Content-Type, also one larger than the small-body limit', async () => {
    for (const body of ['{"user_id":"u"}', `{"note":"${'n'.repeat(20_000)}"}`]) {
      const res = await send('POST', '/v1/orders/ord-1001', {}, body);
      expect(res.statusCode).toBe(415);
    }
    expect(backend.seen).toEqual([]);
    expect(await failures()).toEqual([
      'translation_failures_total{version="1",resource="/orders/:id",direction="request",reason="media_type"} 2',
    ]);
  });

  it('translates application/*+json bodies, and passes an empty body and a resource without changes as they are', async () => {
    await send('POST', '/v1/orders/ord-1001', { 'content-type': 'application/merge-patch+json' }, '{"user_id":"u"}');
    expect(backend.seen[0]?.body).toBe('{"customer_id":"u","currency":"EUR"}');
    await send('POST', '/v1/orders/ord-1001', { 'content-type': 'text/plain', 'content-length': '0' });
    expect(backend.seen[1]?.body).toBe('');
    await send('POST', '/v1/orders', { 'content-type': 'text/csv' }, 'user_id\nu');
    expect(backend.seen[2]?.body).toBe('user_id\nu');
  });

  it('is 413 by its Content-Length, before anything is read', async () => {
    await useGateway({ translationMaxBytes: 20_000 });
    const res = await send('POST', '/v1/orders/ord-1001', json, `{"note":"${'n'.repeat(30_000)}"}`);
    expect(res.json()).toEqual({
      error: 'payload too large',
      code: 413,
      details: 'a translated request body is read whole, up to 20000 bytes',
    });
    expect(await failures()).toEqual([
      'translation_failures_total{version="1",resource="/orders/:id",direction="request",reason="too_large"} 1',
    ]);
  });

  it('is 503 with Retry-After while the translations in progress hold TRANSLATION_MAX_INFLIGHT_BYTES', async () => {
    await useGateway({ translationMaxBytes: 1024, translationMaxInflightBytes: 1024 });
    const body = `{"note":"${'n'.repeat(600)}"}`;
    const first = send('GET', '/v1/orders/hold-1');
    await waitFor(() => backend.held.size === 1);
    const refused = await send('POST', '/v1/orders/ord-1001', json, body);
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json()).toEqual({
      error: 'service unavailable',
      code: 503,
      details: 'the gateway holds as many bodies for translation as it may; retry shortly',
    });
    expect(warnings()).toEqual([
      {
        msg: 'translation: TRANSLATION_MAX_INFLIGHT_BYTES (1024 bytes) are held by translations in progress',
        reason: undefined,
        details: undefined,
      },
    ]);
    for (const release of backend.held.values()) release();
    expect((await first).statusCode).toBe(200);
    // The first request's bytes are given back with its answer: the next one is translated.
    expect((await send('POST', '/v1/orders/ord-1001', json, body)).statusCode).toBe(201);
  });
});

describe('the bytes held for translation', () => {
  it('are all given back after every refusal and every translation, so a body of the whole budget still goes', async () => {
    await useGateway({ translationMaxBytes: 1024, translationMaxInflightBytes: 1024 });
    const full = `{"note":"${'n'.repeat(980)}"}`;
    answer('/v2/orders/collision', '{"customer_id":"a","user_id":"b"}');
    answer('/v2/orders/broken', '{"customer_id":');
    answer('/v2/orders/untyped', '{"customer_id":"u"}', {});
    answer('/v2/orders/big', `{"customer_id":"${'u'.repeat(2000)}"}`);
    const statuses = [
      (await send('POST', '/v1/orders/ord-1001', json, `{"user_id":${nested(100)}}`)).statusCode,
      (await send('POST', '/v1/orders/ord-1001', json, '{"user_id":"u","customer_id":"c"}')).statusCode,
      (await send('POST', '/v1/orders/ord-1001', json, '{"user_id":')).statusCode,
      (await send('POST', '/v1/orders/ord-1001', { 'content-type': 'text/plain' }, 'x')).statusCode,
      (await send('POST', '/v1/orders/ord-1001', json, `"${'x'.repeat(2000)}"`)).statusCode,
      (await send('GET', '/v1/orders/collision')).statusCode,
      (await send('GET', '/v1/orders/broken')).statusCode,
      (await send('GET', '/v1/orders/untyped')).statusCode,
      (await send('GET', '/v1/orders/big')).statusCode,
      (await send('GET', '/v1/orders/ord-1001')).statusCode,
    ];
    // The third goes to the backend as it came; this one echoes it, and its answer is no JSON either: 502.
    expect(statuses).toEqual([400, 400, 502, 415, 413, 502, 502, 502, 502, 200]);
    const res = await send('POST', '/v1/orders/ord-1001', json, full);
    // The echo of the translated body (currency filled in) comes back translated: near the whole budget too.
    expect([res.statusCode, res.body]).toEqual([201, full]);
  });
});

async function waitFor(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(done()).toBe(true);
}

describe('an answer the gateway translates', () => {
  it('keeps the text of every value no change touches, and the order of keys', async () => {
    answer(
      '/v2/orders/ord-1001',
      '{"2":"two","id":123456789012345678,"customer_id":"u","total_cents":1999,"currency":"EUR",' +
        '"zero":-0,"huge":1e400,"exp":1E5,"fraction":1.50,"1":"one","\\u0000nul":true}',
    );
    const res = await send('GET', '/v1/orders/ord-1001');
    expect(res.body).toBe(
      '{"2":"two","id":123456789012345678,"user_id":"u","total":19.99,' +
        '"zero":-0,"huge":1e400,"exp":1E5,"fraction":1.50,"1":"one","\\u0000nul":true}',
    );
  });

  it("sends the upstream's own bytes when no change applies", async () => {
    answer('/v2/orders/ord-1001', '{ "id" : "ord-1001",\n  "note": 1.0 }');
    expect((await send('GET', '/v1/orders/ord-1001')).body).toBe('{ "id" : "ord-1001",\n  "note": 1.0 }');
  });

  it.each(['application/hal+json', 'application/problem+json', 'application/vnd.api+json; charset=utf-8'])(
    'translates a %s answer',
    async (type) => {
      answer('/v2/orders/ord-1001', '{"customer_id":"u","total_cents":5}', { 'content-type': type });
      const res = await send('GET', '/v1/orders/ord-1001');
      expect(res.body).toBe('{"user_id":"u","total":0.05}');
      expect(res.headers['content-type']).toBe(type);
    },
  );

  it('passes an empty 2xx body as it came, whatever its type says', async () => {
    answer('/v2/orders/ord-1001', '', json, 201);
    const res = await send('GET', '/v1/orders/ord-1001');
    expect([res.statusCode, res.body]).toEqual([201, '']);
  });

  it("answers 502 for a version's OpenAPI document the gateway cannot annotate, and serves on", async () => {
    answer('/v2/openapi.json', `{"openapi":"3.1.0","info":{"version":"2"},"paths":{},"x-deep":${nested(10_000)}}`);
    const res = await send('GET', '/v1/openapi.json');
    expect([res.statusCode, res.body]).toEqual([502, '{"error":"bad gateway","code":502}']);
    expect((await send('GET', '/v1/orders/ord-1001')).statusCode).toBe(200);
  });

  it('passes other media types unchanged', async () => {
    answer('/v2/orders/ord-1001', 'customer_id,total_cents\nu,1999\n', { 'content-type': 'text/csv' });
    expect((await send('GET', '/v1/orders/ord-1001')).body).toBe('customer_id,total_cents\nu,1999\n');
  });

  it('names the version the client used in Location and Content-Location, in every form', async () => {
    const located = (location: string) => ({
      'content-type': 'application/json',
      location,
      'content-location': location,
    });
    answer('/v2/orders/ord-9', '{"customer_id":"u"}', located('/v2/orders/ord-9'), 201);
    answer('/api/v2/orders/ord-9', '{"customer_id":"u"}', located('/api/v2/orders/ord-9?x=1'), 201);
    answer('/v2/orders', '[]', located('http://backend.internal/v2/orders?page=2'), 200);
    const cases: [string, Record<string, string>, string][] = [
      ['/v1/orders/ord-9', {}, '/v1/orders/ord-9'],
      ['/orders/ord-9', { 'api-version': '1' }, '/v1/orders/ord-9'],
      ['/api/v1/orders/ord-9', {}, '/api/v1/orders/ord-9?x=1'],
      ['/v1/orders', {}, 'http://backend.internal/v1/orders?page=2'],
    ];
    for (const [url, headers, location] of cases) {
      const res = await send('POST', url, { ...json, ...headers }, '{"user_id":"u"}');
      expect([url, res.headers.location, res.headers['content-location']]).toEqual([url, location, location]);
    }
  });

  it('asks for no range, answers none, and maps If-Match as it maps If-None-Match', async () => {
    answer('/v2/orders/ord-1001', '{"customer_id":"u"}', { ...json, etag: '"abc"', 'accept-ranges': 'bytes' });
    const first = await send('GET', '/v1/orders/ord-1001', { range: 'bytes=0-3', 'if-range': '"abc"' });
    expect(first.statusCode).toBe(200);
    expect(first.headers).not.toHaveProperty('accept-ranges');
    expect(backend.seen[0]?.headers).not.toHaveProperty('range');
    expect(backend.seen[0]?.headers).not.toHaveProperty('if-range');
    const tag = first.headers.etag as string;
    await send('PUT', '/v1/orders/ord-1001', { ...json, 'if-match': `${tag}, "other"` }, '{"user_id":"u"}');
    expect(backend.seen[1]?.headers['if-match']).toBe('"abc", "other"');
    await send('PUT', '/v1/orders/ord-1001', { ...json, 'if-match': '*' }, '{"user_id":"u"}');
    expect(backend.seen[2]?.headers['if-match']).toBe('*');
  });
});

describe('an answer the gateway will not translate', () => {
  const upstreamHeaders = {
    'content-type': 'application/json',
    'cache-control': 'public, max-age=600',
    'set-cookie': 'session=abc',
    'last-modified': 'Wed, 21 Oct 2026 07:28:00 GMT',
    expires: 'Wed, 21 Oct 2026 08:28:00 GMT',
    etag: '"abc"',
    'content-language': 'de',
    'x-upstream': 'yes',
  };

  it.each([
    ['nested deeper than TRANSLATION_MAX_DEPTH', `{"customer_id":${nested(10_000)}}`, 'depth'],
    ['with a scaled value that is no finite number', '{"total_cents":1e400}', 'not_finite'],
    ['holding a name this version gives another field', '{"customer_id":"a","user_id":"b"}', 'collision'],
    ['that is not JSON', '{"customer_id":', 'invalid_json'],
  ])('is the gateway own 502 for one %s, with only the gateway headers', async (_what, body, reason) => {
    answer('/v2/orders/ord-1001', body, upstreamHeaders);
    const res = await send('GET', '/v1/orders/ord-1001');
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: 'bad gateway', code: 502 });
    expect(res.headers['cache-control']).toBe('no-store');
    for (const name of ['set-cookie', 'last-modified', 'expires', 'etag', 'content-language', 'x-upstream'])
      expect(res.headers).not.toHaveProperty(name);
    expect(res.headers).toMatchObject({
      'api-version': '1',
      deprecation: 'true',
      sunset: 'Fri, 01 Jan 2027 00:00:00 GMT',
      link: '</v2/orders/ord-1001>; rel="successor-version"',
      'x-request-id': expect.any(String) as string,
    });
    expect(warnings().map((line) => line.reason)).toEqual([reason]);
    expect(await failures()).toEqual([
      `translation_failures_total{version="1",resource="/orders/:id",direction="response",reason="${reason}"} 1`,
    ]);
  });

  it('logs where a refused answer went wrong', async () => {
    answer('/v2/orders/ord-1001', '{"customer_id":"a","user_id":"b"}');
    await send('GET', '/v1/orders/ord-1001');
    expect(warnings()).toEqual([
      {
        msg: 'translation: the upstream body cannot be translated',
        reason: 'collision',
        details: '$: "customer_id" becomes "user_id", which the body already has',
      },
    ]);
  });

  it('is 502 for a 2xx with a body and no Content-Type, and passes one without a body', async () => {
    answer('/v2/orders/ord-1001', '{"customer_id":"u"}', {});
    const untyped = await send('GET', '/v1/orders/ord-1001');
    expect(untyped.statusCode).toBe(502);
    expect(warnings()).toEqual([
      { msg: 'translation: the upstream sent a body without a Content-Type', reason: 'untyped', details: undefined },
    ]);
    answer('/v2/orders/ord-1001', '', {}, 202);
    expect((await send('GET', '/v1/orders/ord-1001')).statusCode).toBe(202);
  });

  it('is 503 with Retry-After when the translations in progress hold TRANSLATION_MAX_INFLIGHT_BYTES', async () => {
    await useGateway({ translationMaxBytes: 1024, translationMaxInflightBytes: 1024 });
    const first = send('GET', '/v1/orders/hold-1');
    await waitFor(() => backend.held.size === 1);
    answer('/v2/orders/ord-1001', `{"customer_id":"${'u'.repeat(600)}"}`, upstreamHeaders);
    const refused = await send('GET', '/v1/orders/ord-1001');
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['cache-control']).toBe('no-store');
    expect(refused.headers).not.toHaveProperty('set-cookie');
    for (const release of backend.held.values()) release();
    await first;
    expect(await failures()).toEqual([
      'translation_failures_total{version="1",resource="/orders/:id",direction="response",reason="busy"} 1',
    ]);
  });
});
