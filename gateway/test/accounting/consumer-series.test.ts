import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createConsumerTable } from '../../src/accounting/top-consumers.js';
import { V1_SUNSET, buildTestGateway, type TestGateway } from '../helpers.js';
import { startStubBackend, type StubBackend } from '../stub-backend.js';

const NOW = Date.parse('2026-11-22T12:00:00Z');

describe('the consumer series of the table (api_version_consumer_requests_total)', () => {
  it('names the first 20 consumers of a version, counts everyone after them as other, and names a heavier one at the next scrape', () => {
    const table = createConsumerTable();
    for (let i = 0; i < 20; i++) for (let n = 0; n <= i; n++) table.count(1, `client-${i}`, NOW);
    table.count(1, 'once-late', NOW);
    table.count(2, 'late-on-v2', NOW);
    // client-0 … client-19 with 1 … 20 requests; once-late has 1 request: fewer than 2, so no name.
    expect(table.series()).toEqual([
      ...Array.from({ length: 20 }, (_, i) => ({ version: 1, consumer: `client-${i}`, requests: i + 1 })),
      { version: 1, consumer: 'other', requests: 1 },
      { version: 2, consumer: 'late-on-v2', requests: 1 },
    ]);
    // heavy: 3 requests in other, at least twice client-0's 1: it takes client-0's name at the next scrape,
    // client-0's 1 request moves into other, and heavy's series starts at 0.
    for (let n = 0; n < 3; n++) table.count(1, 'heavy', NOW);
    const series = table.series().filter(({ version }) => version === 1);
    expect(series).toEqual([
      ...Array.from({ length: 19 }, (_, i) => ({ version: 1, consumer: `client-${i + 1}`, requests: i + 2 })),
      { version: 1, consumer: 'heavy', requests: 0 },
      { version: 1, consumer: 'other', requests: 1 + 3 + 1 },
    ]);
    table.count(1, 'heavy', NOW);
    expect(table.series().find(({ consumer }) => consumer === 'heavy')).toEqual({ version: 1, consumer: 'heavy', requests: 1 });
  });

  it('never lowers a series between two scrapes that both show it, and its series add up to every request (counters Prometheus can sum across replicas)', () => {
    const table = createConsumerTable();
    let previous = new Map<string, number>();
    let counted = 0;
    for (let round = 0; round < 50; round++) {
      // New consumers every round, some of them heavier than the named ones.
      for (let n = 0; n < 5; n++) table.count(1, `round-${round}-client-${n}`, NOW);
      for (let n = 0; n < round; n++) table.count(1, `heavy-${round}`, NOW);
      counted += 5 + round;
      const current = new Map(table.series().map(({ consumer, requests }) => [consumer, requests]));
      expect(current.size).toBeLessThanOrEqual(21);
      for (const [consumer, requests] of previous) if (current.has(consumer)) expect(current.get(consumer)).toBeGreaterThanOrEqual(requests);
      expect([...current.values()].reduce((sum, requests) => sum + requests, 0)).toBe(counted);
      previous = current;
    }
    // Names followed the heavy consumers: none of the first round's light ones keeps one.
    expect([...previous.keys()].filter((consumer) => consumer.startsWith('round-'))).toEqual([]);
    expect([...previous.keys()].filter((consumer) => consumer.startsWith('heavy-'))).toHaveLength(20);
  });

  it('counts a consumer that calls itself "other" under other, so no two series share a label set', () => {
    const table = createConsumerTable();
    table.count(1, 'other', NOW);
    table.count(1, 'acme', NOW);
    expect(table.series()).toEqual([
      { version: 1, consumer: 'acme', requests: 1 },
      { version: 1, consumer: 'other', requests: 1 },
    ]);
  });
});

describe('api_version_consumer_requests_total on the gateway', () => {
  let stub: StubBackend;
  let gateway: TestGateway;
  beforeEach(async () => {
    stub = await startStubBackend();
    gateway = await buildTestGateway(stub.url);
  });
  afterEach(async () => {
    await gateway.app.close();
    await stub.close();
  });

  const consumerLines = async () =>
    (await gateway.registry.metrics()).split('\n').filter((line) => line.startsWith('api_version_consumer_requests_total{'));

  it('exports the consumers of deprecated versions only, per version and consumer', async () => {
    for (let i = 0; i < 3; i++) await gateway.app.inject({ url: '/v1/orders/ord-1001', headers: { 'x-client-id': 'acme-billing' } });
    await gateway.app.inject({ url: '/orders/ord-1001', headers: { 'user-agent': 'curl/8.5' } });
    await gateway.app.inject({ url: '/v2/orders/ord-1001', headers: { 'x-client-id': 'modern-app' } });
    expect(await consumerLines()).toEqual([
      'api_version_consumer_requests_total{version="1",consumer="acme-billing"} 3',
      'api_version_consumer_requests_total{version="1",consumer="curl/8.5"} 1',
    ]);
  });

  it('stays within 21 series per version under 5,000 random client ids, and counts every request', async () => {
    // v1 removed: answered 410 by the gateway alone (and still counted), so 5,000 requests are quick.
    gateway.setNow(V1_SUNSET);
    for (let batch = 0; batch < 50; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 100 }, () => gateway.app.inject({ url: '/v1/orders/ord-1001', headers: { 'x-client-id': randomUUID() } })),
      );
      expect(answers.map(({ statusCode }) => statusCode)).toEqual(Array.from({ length: 100 }, () => 410));
    }
    const lines = await consumerLines();
    expect(lines).toHaveLength(21);
    expect(lines.filter((line) => line.includes('consumer="other"'))).toEqual(['api_version_consumer_requests_total{version="1",consumer="other"} 4980']);
    expect(lines.reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0)).toBe(5_000);
  });
});
