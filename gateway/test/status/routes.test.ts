import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { setImmediate as macrotask, setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  TEST_REPLICA,
  TODAY,
  V1_SUNSET,
  at,
  buildTestGateway,
  designPolicyFile,
  lifecyclePolicyFile,
  type TestGateway,
} from '../support/helpers.js';
import { startStubBackend, type StubBackend } from '../support/stub-backend.js';
import { consumerWithKey, createMemoryConsumerStore, type MemoryConsumerStore } from '../support/memory-store.js';
import type { NoticeStore, VersionNotices } from '../../src/notices/store.js';
import { idleNoticeStore } from '../notices/idle-store.js';

/** The shipped policy with two brownout windows ahead of TODAY (the first 2026-12-01 10:00-12:00 UTC). */
const policy = lifecyclePolicyFile;
const BROWNOUT = at('2026-12-01T11:00:00Z');
const TODAY_ISO = new Date(TODAY).toISOString();

let stub: StubBackend;
let gateway: TestGateway;
let admin: FastifyInstance;

beforeEach(async () => {
  stub = await startStubBackend();
  gateway = await buildTestGateway(stub.url, { policy });
  admin = await gateway.admin();
});
afterEach(async () => {
  vi.useRealTimers();
  await gateway.app.close();
  await stub.close();
});

// light-my-request sends `User-Agent: lightMyRequest` unless told otherwise; '' counts as no header.
const get = (url: string, headers: Record<string, string> = {}) =>
  gateway.app.inject({ method: 'GET', url, headers: { 'user-agent': '', ...headers } });
const consumers = async () =>
  (await admin.inject({ method: 'GET', url: '/consumers' })).json<{
    versions: { version: number; consumers: unknown[] }[];
  }>();
const page = async () => (await admin.inject({ method: 'GET', url: '/' })).body;

/** The text of each cell of the row `<tr data-version="…">`, tags removed and entities left as they are. */
function cells(html: string, version: number): string[] {
  const row = new RegExp(`<tr data-version="${version}">(.*?)</tr>`).exec(html)?.[1];
  if (row === undefined) throw new Error(`no row for v${version}`);
  return [...row.matchAll(/<td[^>]*>(.*?)<\/td>/g)].map((match) => (match[1] as string).replace(/<[^>]+>/g, '').trim());
}

/** The consumer rows of v`version` on the page: [rank, consumer, requests, last seen]. */
function consumerRows(html: string, version: number): string[][] {
  const table =
    new RegExp(`<table class="consumers" data-version="${version}">(.*?)</table>`, 's').exec(html)?.[1] ?? '';
  return [...table.matchAll(/<tr><td[^>]*>(.*?)<\/tr>/g)].map((match) =>
    [...`<td>${match[1]}`.matchAll(/<td[^>]*>(.*?)<\/td>/g)].map((cell) => (cell[1] as string).replace(/<[^>]+>/g, '')),
  );
}

async function someTraffic(): Promise<void> {
  for (let i = 0; i < 3; i++)
    expect(
      (await get('/v1/orders/ord-1001', { 'x-client-id': 'acme-billing', 'user-agent': 'acme-http/2.1' })).statusCode,
    ).toBe(200);
  for (let i = 0; i < 2; i++)
    expect((await get('/orders/ord-1001', { 'user-agent': 'legacy-app/1.0' })).statusCode).toBe(200);
  expect((await get('/api/v1/orders/ord-1001')).statusCode).toBe(200);
  for (let i = 0; i < 4; i++)
    expect((await get('/v2/orders/ord-1001', { 'x-client-id': 'modern-app' })).statusCode).toBe(200);
  expect((await get('/orders/ord-1001', { 'api-version': '7', 'x-client-id': 'confused' })).statusCode).toBe(406);
  expect((await get('/v1/orders/ord-1001', { 'api-version': '2', 'x-client-id': 'confused' })).statusCode).toBe(400);
}

describe('GET /consumers on the admin port', () => {
  it('lists each deprecated version, with no consumers before any request', async () => {
    const res = await admin.inject({ method: 'GET', url: '/consumers' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({ versions: [{ version: 1, consumers: [] }] });
  });

  it(
    'counts requests on deprecated versions by X-Client-Id, else User-Agent, else "unknown", by requests ' +
      'descending',
    async () => {
      await someTraffic();
      expect(await consumers()).toEqual({
        versions: [
          {
            version: 1,
            consumers: [
              { consumer: 'acme-billing', requests: 3, last_seen: TODAY_ISO },
              { consumer: 'legacy-app/1.0', requests: 2, last_seen: TODAY_ISO },
              { consumer: 'unknown', requests: 1, last_seen: TODAY_ISO },
            ],
          },
        ],
      });
    },
  );

  it('counts the 410s of a brownout and after the sunset, and keeps listing the removed version', async () => {
    await get('/v1/orders/ord-1001', { 'x-client-id': 'late-client' });
    gateway.setNow(BROWNOUT);
    expect((await get('/v1/orders/ord-1001', { 'x-client-id': 'late-client' })).json()).toMatchObject({
      error: 'version_brownout',
      code: 410,
    });
    gateway.setNow(V1_SUNSET + 1_500);
    expect((await get('/orders/ord-1001', { 'x-client-id': 'late-client' })).json()).toMatchObject({
      error: 'version_removed',
      code: 410,
    });
    expect(await consumers()).toEqual({
      versions: [
        { version: 1, consumers: [{ consumer: 'late-client', requests: 3, last_seen: '2027-01-01T00:00:01.500Z' }] },
      ],
    });
  });

  it('cuts a consumer longer than 128 characters and keeps it as sent otherwise (JSON escapes it)', async () => {
    await get('/v1/orders/ord-1001', { 'x-client-id': `${'c'.repeat(128)}-and-more` });
    await get('/v1/orders/ord-1001', { 'user-agent': '<script>alert("ua")</script>' });
    const listed = (await consumers()).versions[0]?.consumers.map((row) => (row as { consumer: string }).consumer);
    expect(listed?.sort()).toEqual(['<script>alert("ua")</script>', 'c'.repeat(128)]);
  });

  it(
    'stays at 100 consumers under a flood of distinct X-Client-Id values and still lists the heavy ' + 'hitters',
    async () => {
      // 2,000 distinct ids end to end (app.inject costs about a millisecond each here); the table's own
      // test floods it with 100,000. After the sunset the gateway answers 410 itself, without the backend.
      gateway.setNow(V1_SUNSET);
      const heavy = ['acme-billing', 'partner-sync'];
      const send = (clientId: string) =>
        gateway.app.inject({ method: 'GET', url: '/v1/orders/ord-1001', headers: { 'x-client-id': clientId } });
      for (let batch = 0; batch < 20; batch++) {
        const requests = [];
        for (let i = 0; i < 100; i++) requests.push(send(`noise-${batch}-${i}`));
        for (const clientId of heavy) requests.push(send(clientId), send(clientId));
        const answers = await Promise.all(requests);
        expect(answers.every((res) => res.statusCode === 410)).toBe(true);
      }
      const v1 = (await consumers()).versions[0]?.consumers as { consumer: string; requests: number }[];
      expect(v1).toHaveLength(100);
      expect(
        v1
          .slice(0, 2)
          .map(({ consumer }) => consumer)
          .sort(),
      ).toEqual(heavy);
      // 40 each out of 2,080: Space-Saving never under-counts, and over-counts by at most 2,080 / 100.
      for (const { requests } of v1.slice(0, 2)) expect(requests).toBeGreaterThanOrEqual(40);
      for (const { requests } of v1.slice(0, 2)) expect(requests).toBeLessThanOrEqual(40 + 20);
      expect(await page()).toContain('More than 100 consumers were seen');
    },
    90_000,
  );
});

describe('GET / on the admin port: the status page', () => {
  it('is one self-contained HTML page, refreshing itself, with a CSP that allows exactly its own style', async () => {
    const res = await admin.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const style = /<style>(.*?)<\/style>/s.exec(res.body)?.[1] as string;
    const hash = createHash('sha256').update(style).digest('base64');
    expect(res.headers['content-security-policy']).toBe(
      `default-src 'none'; style-src 'sha256-${hash}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    );
    expect(res.body).toMatch(/^<!doctype html>\n<html lang="en">/);
    expect(res.body).toContain('<title>API versions</title>');
    expect(res.body).toContain('<meta http-equiv="refresh" content="10">');
    // Nothing is loaded from elsewhere and nothing runs.
    expect(res.body).not.toMatch(/<script|<link|<img|@import|url\(|src=/i);
    expect([...res.body.matchAll(/<style>/g)]).toHaveLength(1);
  });

  it("names its replica (the injected host name) and says its figures are that replica's own", async () => {
    const html = await page();
    const replica = /<p class="note" id="replica">(.*?)<\/p>/.exec(html)?.[1]?.replace(/<[^>]+>/g, '');
    expect(replica).toBe(
      `Replica ${TEST_REPLICA}: every figure on this page but the registered consumers (read from the store every ` +
        `replica shares) is this gateway replica's own, since it started. With several replicas, Prometheus and the ` +
        `Grafana dashboard "API versions" sum them all.`,
    );
  });

  it("shows each version's lifecycle, requests and share over the last 5 minutes", async () => {
    await someTraffic();
    const html = await page();
    expect(cells(html, 1)).toEqual([
      'v1 (default)',
      'deprecated',
      '2026-06-01',
      '2027-01-01',
      '40',
      'v2 · what changes',
      '2026-12-01 10:00 UTC for 2 h (in 8 d)',
      '6',
      '2',
      '60.0 %',
    ]);
    // The successor links the migration guide, which the admin port serves beside the page.
    expect(html).toContain('<td>v2 · <a href="/versions/1/changes">what changes</a></td>');
    expect(cells(html, 2)).toEqual(['v2', 'current', '—', '—', '—', '—', '—', '4', '0', '40.0 %']);
    expect(html).toContain('<meter min="0" max="1" value="0.6000"></meter>');
    expect(html).toContain(
      '10 versioned requests in the last 5 minutes, and 2 that named no valid version (406, 400).',
    );
    expect(html).toContain(`As of ${TODAY_ISO.slice(0, 10)} 12:00:00 UTC`);
  });

  it('forgets requests older than 5 minutes', async () => {
    await someTraffic();
    gateway.setNow(TODAY + 301_000);
    const html = await page();
    expect(cells(html, 1).slice(7)).toEqual(['0', '0', '0.0 %']);
    expect(html).toContain('0 versioned requests in the last 5 minutes.');
    // The consumers are kept since start.
    expect(consumerRows(html, 1).map((row) => row.slice(1, 3))).toEqual([
      ['acme-billing', '3'],
      ['legacy-app/1.0', '2'],
      ['unknown', '1'],
    ]);
  });

  it('lists the top 10 consumers of each deprecated version with requests and when last seen', async () => {
    for (let i = 1; i <= 12; i++) {
      gateway.setNow(TODAY + i * 1_000);
      for (let n = 0; n < i; n++)
        await get('/v1/orders/ord-1001', { 'x-client-id': `client-${String(i).padStart(2, '0')}` });
    }
    gateway.setNow(TODAY + 42_000);
    const html = await page();
    const rows = consumerRows(html, 1);
    expect(rows).toHaveLength(10);
    expect(rows[0]).toEqual(['1', 'client-12', '12', '30 s ago']);
    expect(rows[9]).toEqual(['10', 'client-03', '3', '39 s ago']);
    expect(html).toContain('<h2 id="consumers-v1">Anonymous top consumers of v1 (deprecated)</h2>');
    expect(html).toContain(
      '10 of 12 tracked since the gateway started, by requests, on this replica. Requests without a valid API key ' +
        'only (the registered consumers are above), named by what each says of itself.',
    );
    expect(html).not.toContain('More than');
  });

  it(
    'warns while the default version is deprecated, and once it is removed, with its unversioned ' + 'requests',
    async () => {
      await someTraffic();
      const warning = (html: string) =>
        /<p class="note default-warning" id="default-version">(.*?)<\/p>/.exec(html)?.[1]?.replace(/<[^>]+>/g, '');
      expect(warning(await page())).toBe(
        'The default version v1 is deprecated and will be removed on 2027-01-01; 2 requests in the last 5 minutes ' +
          'named no version and got v1. Move default_version to v2 before the sunset: see the runbook\'s "Move the ' +
          'default".',
      );
      gateway.setNow(V1_SUNSET + 1);
      expect(warning(await page())).toBe(
        'The default version v1 was removed on 2027-01-01: every request that names no version is answered 410. 0 ' +
          "requests in the last 5 minutes named no version. Move default_version to v2 now: see the runbook's " +
          '"Move the default".',
      );
    },
  );

  it('says who may call a version: API key required (from when), closed to new consumers (from when)', async () => {
    const restricted = {
      ...designPolicyFile,
      versions: [
        { ...designPolicyFile.versions[0], consumer_key: { required_from: '2026-12-01' }, closed_to_new: '2026-12-15' },
        designPolicyFile.versions[1],
      ],
    };
    gateway.setNextPolicy(restricted);
    expect((await gateway.app.versionPolicies.reload()).ok).toBe(true);
    expect(cells(await page(), 1)[1]).toBe(
      'deprecatedAPI key required from 2026-12-01closed to new consumers from 2026-12-15',
    );
    gateway.setNow(at('2026-12-20T00:00:00Z'));
    expect(cells(await page(), 1)[1]).toBe('deprecatedAPI key requiredclosed to new consumers');
    expect(cells(await page(), 2)[1]).toBe('current');
  });

  it(
    'announces a scheduled move of the default: from which version to which, when, and how many recent requests ' +
      'it moves',
    async () => {
      const DAY = 86_400_000;
      await gateway.app.close();
      gateway = await buildTestGateway(stub.url, {
        policy: {
          ...designPolicyFile,
          default_version_changes: [
            { at: new Date(TODAY + 10 * DAY).toISOString(), to: 2, announced: new Date(TODAY - DAY).toISOString() },
          ],
        },
      });
      admin = await gateway.admin();
      await get('/orders/ord-1001');
      const before = await page();
      expect(before).toContain(
        '<p class="note default-change" id="default-version-change">The default version moves from v1 to v2 on ' +
          '2026-12-02 12:00 UTC (in 10 d; announced 2026-11-21 12:00 UTC): from then on a request that names no ' +
          'version gets v2. 1 request in the last 5 minutes named no version and got v1; their answers carry ' +
          '<code>API-Default-Version-Change</code> until then. Consumers pinned with a key keep their pin.</p>',
      );
      expect(cells(before, 1)[0]).toBe('v1 (default)');
      gateway.setNow(TODAY + 10 * DAY);
      const after = await page();
      expect(after).not.toContain('default-version-change');
      expect(cells(after, 2)[0]).toBe('v2 (default)');
      expect(cells(after, 1)[0]).toBe('v1');
    },
  );

  it('marks a running brownout and a removed version', async () => {
    gateway.setNow(BROWNOUT);
    let row = cells(await page(), 1);
    expect(row[1]).toBe('deprecated · browned out');
    expect(row[6]).toBe('now, until 2026-12-01 12:00 UTC');
    gateway.setNow(V1_SUNSET + 1);
    row = cells(await page(), 1);
    expect(row.slice(1, 7)).toEqual(['removed', '2026-06-01', '2027-01-01', 'removed', 'v2 · what changes', '—']);
    expect(await page()).toContain(
      '<h2 id="consumers-v1">Anonymous top consumers of v1 (removed)</h2>\n<p class="note">No requests since the ' +
        'gateway started.</p>',
    );
  });

  it(
    'shows what clients send in X-Client-Id and User-Agent as text: markup escaped, control characters as ' + '\\xNN',
    async () => {
      await get('/v1/orders/ord-1001', { 'x-client-id': '<script>alert("id")</script>' });
      await get('/v1/orders/ord-1001', { 'user-agent': "<script>alert('ua')</script><img src=x onerror=alert(1)>" });
      await get('/v1/orders/ord-1001', { 'x-client-id': 'tab\there&amp;\u001b[2J\u0085\u007f' });
      const html = await page();
      const shown = consumerRows(html, 1).map((row) => row[1]);
      expect(shown.sort()).toEqual([
        '&lt;script&gt;alert(&#39;ua&#39;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;',
        '&lt;script&gt;alert(&quot;id&quot;)&lt;/script&gt;',
        'tab\\x09here&amp;amp;\\x1b[2J\\x85\\x7f',
      ]);
      expect(html).not.toMatch(/<script|<img/i);
    },
  );
});

describe("the status page's registered consumers", () => {
  let store: MemoryConsumerStore;
  /**
   * A gateway on `store` (and `notices`, when given), with acme's key; beta's v1 use is in the store as another replica
   * wrote it.
   */
  async function withConsumers(
    consumerStore: MemoryConsumerStore = createMemoryConsumerStore(),
    notices?: NoticeStore,
  ): Promise<string> {
    store = consumerStore;
    // Registered before their calls: a registration sets the pin, and calls count after it.
    const registered = TODAY - 10 * 86_400_000;
    const { key } = await consumerWithKey(store, 'acme', { name: 'Acme <Billing>', nowMs: registered });
    await consumerWithKey(store, 'beta', { name: 'Beta', nowMs: registered });
    await store.addUsage([
      {
        consumerId: 'beta',
        version: 1,
        operation: 'GET /v1/orders/{id}',
        day: '2026-11-21',
        requests: 7,
        firstSeenMs: at('2026-11-21T08:00:00Z'),
        lastSeenMs: at('2026-11-21T12:00:00Z'),
      },
    ]);
    await gateway.app.close();
    const noticesOption =
      notices === undefined
        ? undefined
        : {
            store: notices,
            config: { email: undefined, intervalMs: 60_000, publicBaseUrl: undefined, sendTimeoutMs: 1_000 },
          };
    gateway = await buildTestGateway(stub.url, { policy, consumerStore: store, notices: noticesOption });
    admin = await gateway.admin();
    return key;
  }

  /** A notice store with nothing to send, whose figures for the page are `figures()`'s. */
  const noticeStore = (figures: () => Promise<VersionNotices>): NoticeStore => idleNoticeStore({ ofVersion: figures });

  /** The page, or 'held' if it has not answered within 10 s: five times the page's wait for the store. */
  const pageWithin10s = () =>
    Promise.race([
      admin.inject({ url: '/' }),
      new Promise<'held'>((resolve) => setTimeout(() => resolve('held'), 10_000).unref()),
    ]);

  /**
   * The rows of the registered table of v`version`: [consumer, name, pin, requests, last seen, state, moving to the
   * successor]. The stub serves one document, naming v1's paths, for every version: to a guide from v1 to v2 the
   * orders' operation is gone, so a consumer still calling it is `blocked` from moving.
   */
  function registeredRows(html: string, version: number): string[][] {
    const table =
      new RegExp(`<table class="registered" data-version="${version}">(.*?)</table>`, 's').exec(html)?.[1] ?? '';
    return [...table.matchAll(/<tr[^>]*><td[^>]*>(.*?)<\/tr>/g)].map((match) =>
      [...`<td>${match[1]}`.matchAll(/<td[^>]*>(.*?)<\/td>/g)].map((cell) =>
        (cell[1] as string).replace(/<[^>]+>/g, ''),
      ),
    );
  }

  it(
    "lists every replica's registered consumers of each deprecated version above the anonymous list, saying which " +
      'is which',
    async () => {
      const key = await withConsumers();
      for (let i = 0; i < 3; i++)
        expect((await get('/v1/orders/ord-1001', { 'api-key': key, 'x-client-id': 'acme-billing' })).statusCode).toBe(
          200,
        );
      await gateway.app.consumers.ledger.flush();
      gateway.setNow(TODAY + 120_000);
      const html = await page();
      expect(registeredRows(html, 1)).toEqual([
        ['beta', 'Beta', 'default', '7', '1 d ago', 'still calling', 'blocked'],
        ['acme', 'Acme &lt;Billing&gt;', 'default', '3', '2 min ago', 'still calling', 'blocked'],
      ]);
      expect(html).toContain('<h2 id="registered-v1">Registered consumers of v1 (deprecated)</h2>');
      expect(html).toContain(
        '<th>consumer (API-Key)</th><th>name</th><th>pin</th><th class="num">requests since 2026-10-23</th><th>last ' +
          'seen</th><th>state</th><th>moving to v2</th>',
      );
      expect(html).toContain(
        '<p class="note">2 authenticated by their API keys, counted by every replica, by requests. "Done": its pin is ' +
          'on another version and it made no call of v1 since it moved; "still calling": a call in the last 30 days, ' +
          'after its last pin move, that would still get v1. "Moving to v2": what that move would do to the calls each ' +
          'made in the last 30 days (safe; review: a breaking change touches them; blocked: it calls an operation v2 ' +
          'does not have). Their contacts: <a ' +
          'href="/versions/1/consumers">/versions/1/consumers</a> (JSON).</p>',
      );
      expect(html.indexOf('id="registered-v1"')).toBeLessThan(html.indexOf('id="consumers-v1"'));
      // Keyed requests are counted once, by their consumer: the anonymous table has only requests without a key.
      expect(consumerRows(html, 1)).toEqual([]);
      await get('/v1/orders/ord-1001', { 'x-client-id': 'anonymous-one' });
      expect(consumerRows(await page(), 1).map((row) => row.slice(1, 3))).toEqual([['anonymous-one', '1']]);
    },
  );

  it('marks a consumer done once its pin moved off the version and it has not called it since', async () => {
    await withConsumers();
    await store.movePin('beta', 2, TODAY - 3_600_000);
    const html = await page();
    expect(registeredRows(html, 1)).toEqual([['beta', 'Beta', 'v2', '7', '1 d ago', 'done', 'safe']]);
    expect(html).toContain('<tr class="done"><td class="consumer">beta</td>');
  });

  /** The rows of the preview's table of v`version`: [consumer, calls with, at that instant]. */
  function previewRows(html: string, version: number): string[][] {
    const table =
      new RegExp(`<table class="preview" data-version="${version}">(.*?)</table>`, 's').exec(html)?.[1] ?? '';
    return [...table.matchAll(/<tr><td[^>]*>(.*?)<\/tr>/g)].map((match) =>
      [...`<td>${match[1]}`.matchAll(/<td[^>]*>(.*?)<\/td>/g)].map((cell) => cell[1] as string),
    );
  }
  const noticesDue = (html: string) => /<p class="note notices-due" data-version="1">(.*?)<\/p>/.exec(html)?.[1];

  it(
    "previews a date with ?at=: the lifecycle then, what it does to today's consumers and the notices due by " +
      'then, read-only',
    async () => {
      await withConsumers();
      expect((await get('/v1/orders/ord-1001', { 'x-client-id': 'anon-app' })).statusCode).toBe(200);
      const inBrownout = (await admin.inject({ url: '/?at=2026-12-01T11:00:00Z' })).body;
      expect(cells(inBrownout, 1).slice(1, 7)).toEqual([
        'deprecated · browned out',
        '2026-06-01',
        '2027-01-01',
        '31',
        'v2 · what changes',
        'now, until 2026-12-01 12:00 UTC',
      ]);
      expect(inBrownout).toContain('<strong>lifecycle previewed at 2026-12-01 11:00 UTC</strong>');
      expect(inBrownout).toContain(
        '<h2 id="preview">At 2026-12-01 11:00 UTC: what the policy does to today\'s consumers</h2>',
      );
      expect(previewRows(inBrownout, 1)).toEqual([
        ['beta', 'API key', 'refused: browned out until 2026-12-01 12:00 UTC (410 version_brownout)'],
        ['anon-app', 'no key', 'refused: browned out until 2026-12-01 12:00 UTC (410 version_brownout)'],
      ]);
      expect(noticesDue(inBrownout)).toBe(
        'Notices due from now until then: brownout_in_48_hours (2026-11-29 10:00 UTC).',
      );

      const removed = (await admin.inject({ url: '/?at=2027-01-01' })).body;
      expect(cells(removed, 1)[1]).toBe('removed');
      expect(previewRows(removed, 1).map((row) => row[2])).toEqual([
        'refused: v1 removed (410 version_removed)',
        'refused: v1 removed (410 version_removed)',
      ]);
      expect(noticesDue(removed)).toBe(
        'Notices due from now until then: brownout_in_48_hours (2026-11-29 10:00 UTC), sunset_in_30_days ' +
          '(2026-12-02), brownout_in_48_hours (2026-12-06 10:00 UTC), sunset_in_7_days (2026-12-25), removed ' +
          '(2027-01-01).',
      );

      // Nothing moved: the page without ?at= and the API answer at the clock's own instant.
      const now = await page();
      expect(cells(now, 1)[1]).toBe('deprecated');
      expect(now).not.toContain('id="preview"');
      expect((await get('/v1/orders/ord-1001')).statusCode).toBe(200);
    },
  );

  it('previews who a key requirement and closed_to_new turn away, and says when every version is current', async () => {
    await withConsumers();
    gateway.setNextPolicy({
      ...designPolicyFile,
      versions: [
        { ...designPolicyFile.versions[0], consumer_key: { required_from: '2026-12-15' }, closed_to_new: '2026-12-18' },
        designPolicyFile.versions[1],
      ],
    });
    expect((await gateway.app.versionPolicies.reload()).ok).toBe(true);
    expect((await get('/v1/orders/ord-1001', { 'x-client-id': 'anon-app' })).statusCode).toBe(200);
    const html = (await admin.inject({ url: '/?at=2026-12-20' })).body;
    expect(previewRows(html, 1)).toEqual([
      ['beta', 'API key', 'served, with the deprecation headers'],
      ['anon-app', 'no key', 'refused: API key required (401)'],
    ]);
    expect(html).toContain(
      'Closed to new consumers since 2026-12-18: a registered consumer that had not called v1 before then is ' +
        'refused (403 closed to new consumers); those listed have.',
    );
    expect((await admin.inject({ url: '/?at=2026-05-01' })).body).toContain(
      '<p class="note">Every version is current then.</p>',
    );
  });

  it.each(['tomorrow', '', '2027-02-30'])(
    'answers ?at=%j with 400 invalid date in the error envelope',
    async (value) => {
      const res = await admin.inject({ url: `/?at=${encodeURIComponent(value)}` });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        error: 'invalid date',
        code: 400,
        details: 'at must be a date (2026-06-01) or an RFC 3339 date-time (2027-01-01T00:00:00Z)',
      });
    },
  );

  it('says when no consumer called a deprecated version with a key', async () => {
    expect(await page()).toContain(
      '<h2 id="registered-v1">Registered consumers of v1 (deprecated)</h2>\n<p class="note">No consumer has called ' +
        'v1 with an API key.</p>',
    );
  });

  it('names the registered consumers turned away as closed to new consumers, apart from its users', async () => {
    await withConsumers();
    await consumerWithKey(store, 'newcomer');
    const refusal = { version: 1, operation: 'GET /v1/orders/{id}', day: '2026-11-22' };
    await store.addRefusals([
      { ...refusal, consumerId: 'newcomer', requests: 3, firstSeenMs: TODAY - 600_000, lastSeenMs: TODAY - 120_000 },
      { ...refusal, consumerId: 'acme', requests: 1, firstSeenMs: TODAY - 60_000, lastSeenMs: TODAY - 60_000 },
    ]);
    const html = await page();
    expect(registeredRows(html, 1)).toEqual([['beta', 'Beta', 'default', '7', '1 d ago', 'still calling', 'blocked']]);
    expect(html).toContain(
      '<p class="note refused">Turned away as closed to new consumers: newcomer (3 requests, last 2 min ago), acme ' +
        '(1 request, last 1 min ago).</p>',
    );
  });

  it('still renders, saying so, when the store cannot be read', async () => {
    await withConsumers();
    await get('/v1/orders/ord-1001', { 'x-client-id': 'acme-billing' });
    store.down = true;
    const res = await admin.inject({ url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain(
      '<h2 id="registered-v1">Registered consumers of v1 (deprecated)</h2>\n<p class="note unavailable">The ' +
        'consumer store could not be read, so the registered consumers cannot be shown now; the anonymous list ' +
        "below is this replica's own and still shown.</p>",
    );
    expect(res.body).not.toContain('ECONNREFUSED');
    expect(consumerRows(res.body, 1).map((row) => row[1])).toEqual(['acme-billing']);
    expect(
      gateway.logs.find((line) => String(line.msg).startsWith('status page: the consumer store could not be read')),
    ).toMatchObject({
      level: 40,
      reason: 'connect ECONNREFUSED 10.0.0.9:5432',
    });
  });

  it('waits at most about 2 s for a store that does not answer', async () => {
    const hanging = createMemoryConsumerStore();
    hanging.consumersOf = () => new Promise(() => undefined);
    await withConsumers(hanging);
    // The page's wait on the test's clock: it answers when 2 s have passed, not a moment before.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let answered = false;
    const page = admin.inject({ url: '/' }).finally(() => (answered = true));
    await vi.advanceTimersByTimeAsync(1_999);
    await macrotask();
    expect(answered, 'answered before 2 s').toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const res = await Promise.race([page, sleep(5_000).then(() => 'held at 2 s' as const)]);
    if (res === 'held at 2 s') throw new Error('the status page was still waiting 2 s on');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('The consumer store could not be read');
  });

  it(
    'does not wait on a notice store that never answers: the notice figures are unknown, the rest is ' + 'shown',
    async () => {
      await withConsumers(
        createMemoryConsumerStore(),
        noticeStore(() => new Promise(() => undefined)),
      );
      // The page's 2 s wait on the test's clock; a page still held 5 s after it is held by the notice store.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const page = admin.inject({ url: '/' });
      await vi.advanceTimersByTimeAsync(2_000);
      const res = await Promise.race([page, sleep(5_000).then(() => 'held' as const)]);
      if (res === 'held') throw new Error('the status page was held by the notice store');
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain(
        '<h2 id="notices-v1">Notices about v1</h2>\n<p class="note">Unknown: the consumer store cannot be read.</p>',
      );
      expect(registeredRows(res.body, 1).map((row) => row[0])).toEqual(['beta']);
      expect(
        gateway.logs.find((line) => String(line.msg).startsWith('status page: the consumer store could not be read')),
      ).toMatchObject({
        level: 40,
        msg: 'status page: the consumer store could not be read; notice figures are not shown',
        reason: 'no answer within 2 s',
      });
    },
  );

  it('reads the registered consumers and the notice figures at once, so one wait bounds both', async () => {
    // The ledger answers only once the notice figures have been asked for: read one after the other, the
    // registered consumers would wait for a question that comes only after they gave up.
    let askedForFigures: () => void = () => undefined;
    const figuresAsked = new Promise<void>((resolve) => (askedForFigures = resolve));
    const waiting = createMemoryConsumerStore();
    const consumersOf = waiting.consumersOf.bind(waiting);
    waiting.consumersOf = async (version, sinceMs) => {
      await figuresAsked;
      return consumersOf(version, sinceMs);
    };
    await withConsumers(
      waiting,
      noticeStore(async () => {
        askedForFigures();
        return { notified: new Set(['beta']), failed: [], possiblyTwice: 0 };
      }),
    );
    const res = await pageWithin10s();
    if (res === 'held') throw new Error('the status page was held');
    expect(registeredRows(res.body, 1).map((row) => row[0])).toEqual(['beta']);
    expect(res.body).toContain('Notified <strong>1</strong> of <strong>1</strong> active consumers');
  });
});
