import type { FastifyRequest } from 'fastify';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { judgePreview } from '../../src/consumers/preview/model.js';
import { createRequestFields } from '../../src/consumers/request-fields.js';
import { MAX_FIELDS_PER_OPERATION } from '../../src/consumers/store.js';
import type { StepChange } from '../../src/consumers/preview/changes-between.js';
import { createMemoryConsumerStore } from '../support/memory-store.js';

const NOW = Date.parse('2026-11-22T12:00:00Z');

/** An authenticated request on v1's orders (v2 its successor; null: the latest), as the gateway's router leaves it. */
const request = (consumer: string | null, successor: number | null = 2) =>
  ({
    consumer,
    method: 'POST',
    routeOptions: { url: '/v1/orders/:id' },
    apiVersion: { version: 1, selectedBy: 'path', successor },
  }) as unknown as FastifyRequest;

function fields() {
  const store = createMemoryConsumerStore();
  const dropped: number[] = [];
  const recorder = createRequestFields({
    store,
    logger: pino({ level: 'silent' }),
    clock: () => NOW,
    countDropped: (count) => dropped.push(count),
    flushIntervalMs: 3_600_000,
  });
  return { store, dropped, recorder };
}

describe('the request field paths of authenticated bodies', () => {
  it('are recorded as the declarations name fields, each once per request, with requests and last seen', async () => {
    const { store, recorder } = fields();
    const body = { user_id: 'u-1', customer: { id: 'c', tags: ['a'] }, lines: [{ sku: 'x' }, { sku: 'y', qty: 2 }] };
    recorder.sentBytes(request('acme'), Buffer.from(JSON.stringify(body)));
    recorder.sent(request('acme'), { user_id: 'u-2' });
    recorder.sent(request(null), { anonymous: true });
    await recorder.close();
    const rows = await store.requestFieldsOf(1, NOW - 1, 'acme');
    expect(rows.map(({ operation, field, requests }) => [operation, field, requests])).toEqual([
      ['POST /v1/orders/{id}', 'customer', 1],
      ['POST /v1/orders/{id}', 'customer.id', 1],
      ['POST /v1/orders/{id}', 'customer.tags', 1],
      ['POST /v1/orders/{id}', 'lines', 1],
      ['POST /v1/orders/{id}', 'lines[].qty', 1],
      ['POST /v1/orders/{id}', 'lines[].sku', 1],
      ['POST /v1/orders/{id}', 'user_id', 2],
    ]);
    expect(rows[0]?.last_seen).toBe(new Date(NOW).toISOString());
    expect(await store.requestFieldsOf(1, NOW - 1)).toHaveLength(7);
  });

  it(`keep at most ${MAX_FIELDS_PER_OPERATION} fields per consumer and operation, counting what is left out`, async () => {
    const { store, dropped, recorder } = fields();
    const wide = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`f${i}`, i]));
    recorder.sent(request('acme'), wide);
    await recorder.close();
    expect(await store.requestFieldsOf(1, NOW - 1, 'acme')).toHaveLength(MAX_FIELDS_PER_OPERATION);
    expect(dropped).toEqual([1]);
  });

  it('are not recorded on a version without a successor: no preview moves a consumer from it', async () => {
    const { store, dropped, recorder } = fields();
    recorder.sentBytes(request('acme', null), Buffer.from('{"user_id":"u-1"}'));
    recorder.sent(request('acme', null), { user_id: 'u-2' });
    await recorder.close();
    expect(await store.requestFieldsOf(1, NOW - 1)).toEqual([]);
    expect(dropped).toEqual([]);
  });

  it("walk an array's first 16 items: a field of a later item alone is not recorded", async () => {
    const { store, recorder } = fields();
    const lines: Record<string, unknown>[] = Array.from({ length: 40 }, (_, n) => ({ sku: `sku-${n}` }));
    lines[15] = { sku: 'sku-15', gift: true };
    lines[16] = { sku: 'sku-16', coupon: 'c-1' };
    recorder.sent(request('acme'), { lines });
    await recorder.close();
    const rows = await store.requestFieldsOf(1, NOW - 1, 'acme');
    expect(rows.map(({ field }) => field)).toEqual(['lines', 'lines[].gift', 'lines[].sku']);
  });

  it('ignore a body that is no JSON object', async () => {
    const { store, recorder } = fields();
    recorder.sentBytes(request('acme'), Buffer.from('not json'));
    recorder.sent(request('acme'), [1, 2]);
    await recorder.close();
    expect(await store.requestFieldsOf(1, NOW - 1)).toEqual([]);
  });
});

describe('judging a preview on the fields a consumer sent', () => {
  const step = (from: number, name: string, to: string | undefined, breaking: boolean): StepChange => ({
    from,
    to: from + 1,
    method: 'POST',
    path: `/v${from}/orders/{id}`,
    key: 'POST /orders/{}',
    successorPath: `/v${from + 1}/orders/{id}`,
    successorKey: 'POST /orders/{}',
    change: {
      change: to === undefined ? 'removed' : 'renamed',
      kind: 'field',
      name,
      ...(to === undefined ? {} : { to }),
      where: '',
      breaking,
      description: '',
    },
    removal: false,
  });
  const postCall = (fieldsSent: string[]) => ({
    operation: 'POST /v1/orders/{id}',
    form: 'path' as const,
    call: 'POST /v1/orders/{id}',
    instead: null,
    requests: 1,
    last_seen: '2026-11-22T12:00:00.000Z',
    fields_sent: fieldsSent.map((field) => ({ field, requests: 1, last_seen: '2026-11-22T12:00:00.000Z' })),
  });

  it('follows a sent field through a rename to the next step, under its own name', () => {
    const post = postCall(['user_id.kind']);
    const judged = judgePreview(
      1,
      [step(1, 'user_id', 'customer_id', true), step(2, 'customer_id', undefined, true)],
      [post],
    );
    expect(judged.verdict).toBe('review');
    expect(judged.changes.map(({ affects, fields_sent }) => [affects, fields_sent])).toEqual([
      [true, ['user_id.kind']],
      [true, ['user_id.kind']],
    ]);
  });

  it('gives a HEAD call what reaches a HEAD answer, through an endpoint rename, and no body change', () => {
    const head = {
      ...postCall([]),
      operation: 'HEAD /v1/orders/{id}',
      call: 'HEAD /v1/orders/{id}',
    };
    const on = (from: number, path: string, there: string, change: StepChange['change'], removal = false) => ({
      from,
      to: from + 1,
      method: 'GET',
      path: `/v${from}${path}`,
      key: `GET ${path.replace('{id}', '{}')}`,
      successorPath: `/v${from + 1}${there}`,
      successorKey: `GET ${there.replace('{id}', '{}')}`,
      change,
      removal,
    });
    const words = { where: '', breaking: true, description: '' };
    const judged = judgePreview(
      1,
      [
        on(1, '/orders/{id}', '/purchases/{id}', {
          ...words,
          change: 'endpoint renamed',
          kind: 'endpoint',
          name: '/v1/orders/{id}',
          to: '/v2/purchases/{id}',
        }),
        on(1, '/orders/{id}', '/purchases/{id}', { ...words, change: 'renamed', kind: 'field', name: 'a', to: 'b' }),
        on(2, '/purchases/{id}', '/purchases/{id}', {
          ...words,
          change: 'header renamed',
          kind: 'header',
          name: 'X-Count',
          to: 'Count',
        }),
        on(2, '/purchases/{id}', '/purchases/{id}', {
          ...words,
          change: 'status changed',
          kind: 'status',
          name: '410',
          to: '404',
        }),
        on(3, '/purchases/{id}', '/purchases/{id}', { ...words, change: 'removed', kind: 'endpoint', name: '' }, true),
      ],
      [head],
    );
    expect(judged.changes.map(({ change, affects }) => [change, affects])).toEqual([
      ['endpoint renamed', true],
      ['renamed', false],
      ['header renamed', true],
      ['status changed', true],
      ['removed', true],
    ]);
    expect([judged.verdict, judged.blocking]).toEqual(['blocked', ['HEAD /v1/orders/{id}']]);
  });
});
