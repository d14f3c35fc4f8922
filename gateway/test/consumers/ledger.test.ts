import { pino } from 'pino';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createLedger, MAX_PENDING_ROWS, operationOf } from '../../src/consumers/ledger.js';
import { at } from '../support/helpers.js';
import { createMemoryConsumerStore } from '../support/memory-store.js';

function ledgerOn(store = createMemoryConsumerStore(), flushIntervalMs = 60_000) {
  let dropped = 0;
  const ledger = createLedger({
    store,
    logger: pino({ level: 'silent' }),
    countDropped: (requests) => (dropped += requests),
    flushIntervalMs,
  });
  onTestFinished(() => ledger.close().catch(() => undefined));
  return { ledger, store, dropped: () => dropped };
}

const NOON = at('2026-11-22T12:00:00Z');

describe('the consumer ledger', () => {
  it('spells operations as method and OpenAPI path template', () => {
    expect(operationOf('GET', '/v1/orders/:id', 'path')).toBe('GET /v1/orders/{id}');
    expect(operationOf('PUT', '/api/v2/users/:user_id/orders/:id', 'path')).toBe(
      'PUT /api/v2/users/{user_id}/orders/{id}',
    );
  });

  it('adds requests up per consumer, version, operation and UTC day, with first and last seen', async () => {
    const { ledger, store } = ledgerOn();
    ledger.record('acme', 1, 'GET /v1/orders/{id}', NOON);
    ledger.record('acme', 1, 'GET /v1/orders/{id}', NOON + 5);
    ledger.record('acme', 1, 'GET /v1/orders/{id}', at('2026-11-23T00:00:00Z'));
    ledger.record('beta', 1, 'GET /v1/orders/{id}', NOON);
    await ledger.flush();
    expect(store.writes).toHaveLength(1);
    expect(
      store.writes[0]?.map(({ consumerId, day, requests, firstSeenMs, lastSeenMs }) => [
        consumerId,
        day,
        requests,
        firstSeenMs,
        lastSeenMs,
      ]),
    ).toEqual([
      ['acme', '2026-11-22', 2, NOON, NOON + 5],
      ['acme', '2026-11-23', 1, at('2026-11-23T00:00:00Z'), at('2026-11-23T00:00:00Z')],
      ['beta', '2026-11-22', 1, NOON, NOON],
    ]);
    await ledger.flush();
    expect(store.writes).toHaveLength(1);
  });

  it('counts requests after a write into new rows, which the next write carries', async () => {
    const { ledger, store } = ledgerOn();
    ledger.record('acme', 1, 'GET /v1/orders/{id}', NOON);
    await ledger.flush();
    ledger.record('acme', 1, 'GET /v1/orders/{id}', NOON + 1);
    ledger.record('acme', 1, 'GET /v1/orders/{id}', NOON + 2);
    await ledger.flush();
    expect(store.writes.map((rows) => rows.map(({ requests, firstSeenMs }) => [requests, firstSeenMs]))).toEqual([
      [[1, NOON]],
      [[2, NOON + 1]],
    ]);
    expect(await store.usageOf('acme')).toMatchObject([{ requests: 3 }]);
  });

  it('writes on its own within the flush interval', async () => {
    const { ledger, store } = ledgerOn(undefined, 50);
    ledger.record('acme', 1, 'GET /v1/orders/{id}', NOON);
    await expect.poll(() => store.writes.length, { timeout: 5_000 }).toBe(1);
  });

  it('keeps the first use it saw and the earliest one it learns', () => {
    const { ledger } = ledgerOn();
    ledger.record('acme', 1, 'GET /v1/orders/{id}', NOON);
    ledger.record('acme', 1, 'GET /v1/orders/{id}', NOON - 1_000);
    expect(ledger.firstUseOf('acme', 1)).toBe(NOON);
    ledger.learn([
      { consumerId: 'acme', version: 1, firstSeenMs: NOON - 60_000 },
      { consumerId: 'acme', version: 2, firstSeenMs: NOON },
    ]);
    ledger.learn([{ consumerId: 'acme', version: 1, firstSeenMs: NOON + 60_000 }]);
    expect(ledger.firstUseOf('acme', 1)).toBe(NOON - 60_000);
    expect(ledger.firstUseOf('acme', 2)).toBe(NOON);
    expect(ledger.firstUseOf('beta', 1)).toBeUndefined();
  });

  it('keeps counts while the store is down and writes them, first uses included, once it is back', async () => {
    const { ledger, store } = ledgerOn();
    store.down = true;
    ledger.record('acme', 1, 'GET /v1/orders/{id}', NOON);
    await ledger.flush();
    ledger.record('acme', 1, 'GET /v1/orders/{id}', NOON + 1);
    await ledger.flush();
    expect(store.writes).toEqual([]);
    store.down = false;
    await ledger.flush();
    expect(await store.usageOf('acme')).toMatchObject([{ requests: 2 }]);
    expect((await store.changesSince(0)).firstUses).toEqual([{ consumerId: 'acme', version: 1, firstSeenMs: NOON }]);
  });

  it(`holds at most ${MAX_PENDING_ROWS} rows while it cannot write, and counts the requests it drops`, async () => {
    const { ledger, store, dropped } = ledgerOn();
    store.down = true;
    for (let i = 0; i < MAX_PENDING_ROWS + 5; i++) ledger.record(`c${i}`, 1, 'GET /v1/orders/{id}', NOON);
    expect(dropped()).toBe(5);
    // Rows already pending still count up.
    ledger.record('c0', 1, 'GET /v1/orders/{id}', NOON);
    await ledger.flush();
    expect(dropped()).toBe(5);
    store.down = false;
    await ledger.flush();
    expect(store.writes).toHaveLength(1);
    expect(store.writes[0]).toHaveLength(MAX_PENDING_ROWS);
    expect(store.writes[0]?.find((row) => row.consumerId === 'c0')?.requests).toBe(2);
  });

  it('counts refusals apart from uses: written as refusals, no first use, no use', async () => {
    const { ledger, store } = ledgerOn();
    ledger.refuse('newcomer', 1, 'GET /v1/orders/{id}', NOON);
    ledger.refuse('newcomer', 1, 'GET /v1/orders/{id}', NOON + 5);
    ledger.record('newcomer', 2, 'GET /v2/orders/{id}', NOON);
    expect(ledger.firstUseOf('newcomer', 1)).toBeUndefined();
    await ledger.flush();
    expect(store.writes.flat().map(({ version }) => version)).toEqual([2]);
    expect(await store.refusalsOf('newcomer')).toEqual([{ version: 1, count: 2, last_at: '2026-11-22T12:00:00.005Z' }]);
    expect((await store.changesSince(0)).firstUses).toEqual([
      { consumerId: 'newcomer', version: 2, firstSeenMs: NOON },
    ]);
  });

  it('keeps refusals while the store is down and writes them once, with the uses, when it is back', async () => {
    const { ledger, store } = ledgerOn();
    store.down = true;
    ledger.refuse('newcomer', 1, 'GET /orders/{id} header', NOON);
    ledger.record('early', 1, 'GET /v1/orders/{id}', NOON);
    await ledger.flush();
    store.down = false;
    await ledger.flush();
    await ledger.flush();
    expect(await store.refusalsOf('newcomer')).toEqual([{ version: 1, count: 1, last_at: '2026-11-22T12:00:00.000Z' }]);
    expect(await store.usageOf('early')).toMatchObject([{ requests: 1 }]);
  });

  it('waits at close for a first use being written, and writes it again when that write failed', async () => {
    const store = createMemoryConsumerStore();
    let writes = 0;
    let failFirstWrite: (err: Error) => void = () => undefined;
    const { ledger } = ledgerOn({
      ...store,
      recordFirstUse: (use) =>
        ++writes === 1 ? new Promise<void>((_resolve, reject) => (failFirstWrite = reject)) : store.recordFirstUse(use),
    });
    ledger.record('acme', 2, 'GET /v2/orders/{id}', NOON);
    let closed = false;
    const closing = ledger.close().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(closed).toBe(false);
    failFirstWrite(new Error('connection terminated'));
    await closing;
    expect((await store.changesSince(0)).firstUses).toEqual([{ consumerId: 'acme', version: 2, firstSeenMs: NOON }]);
  });

  it('writes what is pending at close', async () => {
    const { ledger, store } = ledgerOn();
    ledger.record('acme', 2, 'GET /v2/orders/{id}', NOON);
    await ledger.close();
    expect(await store.usageOf('acme')).toMatchObject([{ version: 2, requests: 1 }]);
  });
});
