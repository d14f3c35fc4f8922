import { parseFeed } from '@rowanmanning/feed-parser';
import { afterEach, describe, expect, it } from 'vitest';
import { Received, open } from '../../../platform/test/support/raw-http.js';
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

/** No request reaches the backend: the changelog is the gateway's own. */
const NO_BACKEND = 'http://127.0.0.1:9';
const HOST = 'api.example.com:8080';
const ORIGIN = `http://${HOST}`;

const ID = {
  feed: 'tag:version-router,2026:changelog',
  v1Deprecated: 'tag:version-router,2026:versions/1/deprecated/2026-06-01T00:00:00.000Z',
  v1FirstBrownout: 'tag:version-router,2026:versions/1/brownout/2026-12-01T10:00:00.000Z',
  v1SecondBrownout: 'tag:version-router,2026:versions/1/brownout/2026-12-08T10:00:00.000Z',
  v1Removed: 'tag:version-router,2026:versions/1/removed/2027-01-01T00:00:00.000Z',
};
const V1_DEPRECATED_SUMMARY =
  'Version 1 is deprecated as of 2026-06-01 and will be removed on 2027-01-01; from then on every request for it is ' +
  'answered 410. Its successor is version 2.';
const V1_GUIDE = `${ORIGIN}/versions/1/changes`;

let gateways: TestGateway[] = [];
afterEach(async () => {
  await Promise.all(gateways.map(({ app }) => app.close()));
  gateways = [];
});

async function gatewayWith(policy: unknown, now: number): Promise<TestGateway> {
  const gateway = await buildTestGateway(NO_BACKEND, { policy, now });
  gateways.push(gateway);
  return gateway;
}

const fetchFeed = (gateway: TestGateway, headers: Record<string, string> = {}) =>
  gateway.app.inject({ method: 'GET', url: '/changelog', headers: { host: HOST, ...headers } });

interface Entry {
  id: string | null;
  title: string | null;
  updated: string | undefined;
  url: string | null;
  description: string | null;
  content: string | null;
}

/** The feed as a real Atom parser reads it, after checking the answer's status and type. */
async function readFeed(gateway: TestGateway) {
  const res = await fetchFeed(gateway);
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toBe('application/atom+xml; charset=utf-8');
  const feed = parseFeed(res.body);
  expect(feed.meta).toEqual({ type: 'atom', version: '1.0' });
  const entries: Entry[] = feed.items.map((item) => ({
    id: item.id,
    title: item.title,
    updated: item.updated?.toISOString(),
    url: item.url,
    description: item.description,
    content: item.content,
  }));
  return { res, feed, entries, id: feed.element.findElementWithName('id')?.textContentNormalized };
}

const idsOf = async (gateway: TestGateway) => (await readFeed(gateway)).entries.map(({ id }) => id);

describe('GET /changelog', () => {
  it("is an Atom 1.0 feed with an id, a title, a self link and the newest entry's instant as updated", async () => {
    const { feed, id } = await readFeed(await gatewayWith(lifecyclePolicyFile, V1_SUNSET));
    expect(id).toBe(ID.feed);
    expect(feed.title).toBe('API versions: changelog');
    expect(feed.self).toBe(`${ORIGIN}/changelog`);
    expect(feed.authors.map(({ name }) => name)).toEqual(['API gateway']);
    expect(feed.updated?.toISOString()).toBe('2027-01-01T00:00:00.000Z');
  });

  it(
    "lists v1's deprecation once it is announced: title, sunset and successor, a link to the migration " + 'guide',
    async () => {
      const { entries } = await readFeed(await gatewayWith(designPolicyFile, TODAY));
      expect(entries).toEqual([
        {
          id: ID.v1Deprecated,
          title: 'v1 deprecated: removed on 2027-01-01',
          updated: '2026-06-01T00:00:00.000Z',
          url: V1_GUIDE,
          description: V1_DEPRECATED_SUMMARY,
          content:
            `<p>${V1_DEPRECATED_SUMMARY}</p>\n<p><a href="${V1_GUIDE}">What changes from version 1 to version ` +
            `2</a></p>`,
        },
      ]);
    },
  );

  it(
    'leaves out every event whose instant has not come: nothing before the announcement, each brownout and the ' +
      'removal from their instant on',
    async () => {
      const gateway = await gatewayWith(lifecyclePolicyFile, at('2026-05-31T23:59:59.999Z'));
      expect(await idsOf(gateway)).toEqual([]);
      const steps: [string, (string | null)[]][] = [
        ['2026-06-01T00:00:00.000Z', [ID.v1Deprecated]],
        ['2026-12-01T09:59:59.999Z', [ID.v1Deprecated]],
        ['2026-12-01T10:00:00.000Z', [ID.v1FirstBrownout, ID.v1Deprecated]],
        ['2026-12-08T10:00:00.000Z', [ID.v1SecondBrownout, ID.v1FirstBrownout, ID.v1Deprecated]],
        ['2026-12-31T23:59:59.999Z', [ID.v1SecondBrownout, ID.v1FirstBrownout, ID.v1Deprecated]],
        ['2027-01-01T00:00:00.000Z', [ID.v1Removed, ID.v1SecondBrownout, ID.v1FirstBrownout, ID.v1Deprecated]],
      ];
      for (const [now, ids] of steps) {
        gateway.setNow(at(now));
        expect(await idsOf(gateway), `at ${now}`).toEqual(ids);
      }
    },
  );

  it(
    'lists a scheduled move of the default from its announcement, dated then, before it applies; its id names the ' +
      'instant and the version it moves to',
    async () => {
      const DAY = 86_400_000;
      const iso = (epochMs: number): string => new Date(epochMs).toISOString();
      const moveAt = Date.parse(iso(TODAY + 10 * DAY).slice(0, 10));
      const announced = Date.parse(iso(TODAY - DAY).slice(0, 10));
      const gateway = await gatewayWith(
        {
          ...designPolicyFile,
          default_version_changes: [{ at: iso(moveAt), to: 2, announced: iso(announced) }],
        },
        announced - 1,
      );
      const id = `tag:version-router,2026:default_version/${iso(moveAt)}/2`;
      expect(await idsOf(gateway)).toEqual([ID.v1Deprecated]);
      gateway.setNow(TODAY);
      const summary =
        `From ${iso(moveAt).slice(0, 10)} a request that names no version (a bare path without API-Version) gets ` +
        'version 2 instead of version 1. Until then their answers carry API-Default-Version-Change: 2. Name ' +
        'version 1 in your requests to keep it; a consumer pinned with an API key keeps its pin.';
      const { entries } = await readFeed(gateway);
      expect(entries[0]).toEqual({
        id,
        title: `Requests that name no version get v2 from ${iso(moveAt).slice(0, 10)}`,
        updated: iso(announced),
        url: V1_GUIDE,
        description: summary,
        content: `<p>${summary}</p>\n<p><a href="${V1_GUIDE}">What changes from version 1 to version 2</a></p>`,
      });
      expect(entries.map((entry) => entry.id)).toEqual([id, ID.v1Deprecated]);
      gateway.setNow(moveAt + DAY);
      expect(await idsOf(gateway)).toEqual([id, ID.v1Deprecated]);
    },
  );

  it('gives an empty feed the epoch as updated, not the time of serving', async () => {
    const { feed, entries } = await readFeed(await gatewayWith(lifecyclePolicyFile, at('2026-01-01T00:00:00Z')));
    expect(entries).toEqual([]);
    expect(feed.updated?.toISOString()).toBe('1970-01-01T00:00:00.000Z');
  });

  it('says when each brownout window starts and ends, and lists the windows in the deprecation entry', async () => {
    const { entries } = await readFeed(await gatewayWith(lifecyclePolicyFile, at('2026-12-08T12:00:00Z')));
    const summary = (id: string) => entries.find((entry) => entry.id === id);
    expect(summary(ID.v1SecondBrownout)).toMatchObject({
      title: 'v1 brownout: 2026-12-08 10:00 UTC to 2026-12-08 16:00 UTC',
      updated: '2026-12-08T10:00:00.000Z',
      url: V1_GUIDE,
      description:
        'From 2026-12-08 10:00 UTC to 2026-12-08 16:00 UTC every request for version 1 is answered 410, a reminder ' +
        'that it will be removed on 2027-01-01. Its successor is version 2.',
    });
    expect(summary(ID.v1FirstBrownout)?.title).toBe('v1 brownout: 2026-12-01 10:00 UTC to 2026-12-01 12:00 UTC');
    expect(summary(ID.v1Deprecated)?.description).toBe(
      'Version 1 is deprecated as of 2026-06-01 and will be removed on 2027-01-01; from then on every request for ' +
        'it is answered 410. ' +
        'Brownouts before then (every request answered 410 during each): 2026-12-01 10:00 UTC to 2026-12-01 12:00 ' +
        'UTC, 2026-12-08 10:00 UTC to 2026-12-08 16:00 UTC. ' +
        'Its successor is version 2.',
    );
  });

  it('lists a removed version with its successor and the migration guide', async () => {
    const { entries } = await readFeed(await gatewayWith(lifecyclePolicyFile, V1_SUNSET));
    expect(entries[0]).toEqual({
      id: ID.v1Removed,
      title: 'v1 removed: use v2',
      updated: '2027-01-01T00:00:00.000Z',
      url: V1_GUIDE,
      description:
        'Version 1 was removed on 2027-01-01: every request for it is answered 410. Its successor is version 2.',
      content:
        `<p>Version 1 was removed on 2027-01-01: every request for it is answered 410. Its successor is ` +
        `version 2.</p>\n<p><a href="${V1_GUIDE}">What changes from version 1 to version 2</a></p>`,
    });
  });

  it(
    'orders entries newest first, and versions deprecated at the same instant from the highest; a sunset with a ' +
      'time of day reads with it',
    async () => {
      const policy = {
        default_version: 3,
        versions: [
          { version: 1, status: 'deprecated', announced: '2026-06-01', sunset: '2027-03-01T12:30:00Z', successor: 3 },
          { version: 2, status: 'deprecated', announced: '2026-06-01', sunset: '2027-01-01T00:00:00Z', successor: 3 },
          { version: 3, status: 'current' },
        ],
      };
      const { entries } = await readFeed(await gatewayWith(policy, at('2027-02-01T00:00:00Z')));
      expect(entries.map(({ title }) => title)).toEqual([
        'v2 removed: use v3',
        'v2 deprecated: removed on 2027-01-01',
        'v1 deprecated: removed on 2027-03-01 12:30 UTC',
      ]);
      expect(entries[0]?.url).toBe(`${ORIGIN}/versions/2/changes`);
    },
  );

  it(
    "keeps every entry's id and date across two builds of the app, whatever the file's bytes and the time of " +
      'serving',
    async () => {
      // The same policy in another key order and layout: other bytes, so another policy_sha256.
      const reversed = (object: object): Record<string, unknown> =>
        Object.fromEntries(Object.entries(object).reverse());
      const reordered = reversed({ ...lifecyclePolicyFile, versions: lifecyclePolicyFile.versions.map(reversed) });
      expect(JSON.stringify(reordered)).not.toBe(JSON.stringify(lifecyclePolicyFile));
      const first = await gatewayWith(lifecyclePolicyFile, at('2026-12-08T12:00:00Z'));
      const second = await gatewayWith(reordered, at('2027-02-01T00:00:00Z'));
      const sha256 = async (gateway: TestGateway) =>
        (await gateway.app.inject({ url: '/versions' })).json<{ policy_sha256: string }>().policy_sha256;
      expect(await sha256(first)).not.toBe(await sha256(second));

      const earlier = (await readFeed(first)).entries;
      const later = (await readFeed(second)).entries;
      expect(later.map(({ id }) => id)).toEqual([ID.v1Removed, ...earlier.map(({ id }) => id)]);
      expect(later.slice(1).map(({ id, updated }) => ({ id, updated }))).toEqual(
        earlier.map(({ id, updated }) => ({ id, updated })),
      );
      expect((await readFeed(first)).id).toBe((await readFeed(second)).id);
    },
  );

  it(
    'follows a reload: entries of a newly deprecated version appear, those of a version made current again ' +
      'disappear',
    async () => {
      const gateway = await gatewayWith(designPolicyFile, at('2026-12-02T00:00:00Z'));
      expect(await idsOf(gateway)).toEqual([ID.v1Deprecated]);

      gateway.setNextPolicy(lifecyclePolicyFile);
      expect(await gateway.app.versionPolicies.reload()).toEqual({ ok: true });
      expect(await idsOf(gateway)).toEqual([ID.v1FirstBrownout, ID.v1Deprecated]);

      gateway.setNextPolicy({
        default_version: 1,
        versions: [
          { version: 1, status: 'current' },
          { version: 2, status: 'current' },
        ],
      });
      expect(await gateway.app.versionPolicies.reload()).toEqual({ ok: true });
      const { entries, feed } = await readFeed(gateway);
      expect(entries).toEqual([]);
      expect(feed.updated?.toISOString()).toBe('1970-01-01T00:00:00.000Z');
    },
  );

  it(
    'answers 304 with no body to the ETag it sent, and 200 with a new ETag once a reload or the clock changes the ' +
      'feed',
    async () => {
      const gateway = await gatewayWith(designPolicyFile, TODAY);
      const first = await fetchFeed(gateway);
      const etag = first.headers.etag as string;
      expect(etag).toMatch(/^"[A-Za-z0-9+/=]+"$/);
      expect(first.headers['last-modified']).toBeUndefined();

      const again = await fetchFeed(gateway, { 'if-none-match': etag });
      expect(again.statusCode).toBe(304);
      expect(again.body).toBe('');
      expect(again.headers.etag).toBe(etag);
      expect((await fetchFeed(gateway, { 'if-none-match': '"something else"' })).statusCode).toBe(200);

      gateway.setNextPolicy(lifecyclePolicyFile);
      await gateway.app.versionPolicies.reload();
      const reloaded = await fetchFeed(gateway, { 'if-none-match': etag });
      expect(reloaded.statusCode).toBe(200);
      expect(reloaded.headers.etag).not.toBe(etag);

      gateway.setNow(at('2026-12-01T10:00:00Z'));
      const later = await fetchFeed(gateway, { 'if-none-match': reloaded.headers.etag as string });
      expect(later.statusCode).toBe(200);
      expect(later.headers.etag).not.toBe(reloaded.headers.etag);
    },
  );

  it('lets caches keep it 5 minutes, never past the instant the next event comes due', async () => {
    const gateway = await gatewayWith(lifecyclePolicyFile, TODAY);
    const maxAge = async (now: string) => {
      gateway.setNow(at(now));
      return (await fetchFeed(gateway)).headers['cache-control'];
    };
    expect(await maxAge('2026-11-22T12:00:00Z')).toBe('public, max-age=300');
    expect(await maxAge('2026-12-01T09:59:00.500Z')).toBe('public, max-age=59');
    expect(await maxAge('2026-12-01T10:00:00Z')).toBe('public, max-age=300');
    expect(await maxAge('2027-02-01T00:00:00Z')).toBe('public, max-age=300');
  });

  it("builds its links from the request's Host, and refuses one that names no host with 400 bad request", async () => {
    const gateway = await gatewayWith(designPolicyFile, TODAY);
    for (const host of ['localhost:8080', '127.0.0.1', '[::1]:8080', 'gateway_1:8080']) {
      const res = await fetchFeed(gateway, { host });
      expect(res.statusCode, host).toBe(200);
      expect(parseFeed(res.body).self).toBe(new URL(`http://${host}/changelog`).href);
    }
    for (const host of ['evil"><script>', 'user@example.com', 'example.com/path', 'example.com:port']) {
      const res = await fetchFeed(gateway, { host });
      expect(res.statusCode, host).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json()).toEqual({ error: 'bad request', code: 400, details: 'invalid Host header' });
    }
  });

  it('refuses an HTTP/1.0 request without Host (which HTTP/1.0 may omit) with 400 bad request', async () => {
    const gateway = await gatewayWith(designPolicyFile, TODAY);
    const url = await gateway.app.listen({ host: '127.0.0.1', port: 0 });
    const socket = await open(url);
    const received = new Received(socket);
    socket.write('GET /changelog HTTP/1.0\r\n\r\n');
    const res = await received.next();
    socket.destroy();
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toEqual({ error: 'bad request', code: 400, details: 'invalid Host header' });
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const gateway = await gatewayWith(designPolicyFile, TODAY);
    const get = await fetchFeed(gateway);
    const head = await gateway.app.inject({ method: 'HEAD', url: '/changelog', headers: { host: HOST } });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers.etag).toBe(get.headers.etag);
    expect(head.headers['content-type']).toBe(get.headers['content-type']);
  });
});

describe('the changelog on the admin port', () => {
  it('is served beside the status page, which links it', async () => {
    const gateway = await gatewayWith(designPolicyFile, TODAY);
    const admin = await gateway.admin();
    const res = await admin.inject({ url: '/changelog', headers: { host: 'admin.internal:9464' } });
    expect(res.statusCode).toBe(200);
    expect(parseFeed(res.body).items.map(({ id }) => id)).toEqual([ID.v1Deprecated]);
    const page = (await admin.inject({ url: '/' })).body;
    expect(page).toContain(TEST_REPLICA);
    expect(page).toContain('<a href="/changelog" type="application/atom+xml">changelog</a>');
  });
});

describe('GET /changelog: who may call', () => {
  it(
    'announces a scheduled key requirement and closed_to_new with the deprecation, each naming when it ' + 'applies',
    async () => {
      const policy = {
        ...designPolicyFile,
        versions: [
          {
            ...designPolicyFile.versions[0],
            consumer_key: { required_from: '2026-10-01' },
            closed_to_new: '2026-11-01',
          },
          designPolicyFile.versions[1],
        ],
      };
      const { entries } = await readFeed(await gatewayWith(policy, at('2026-06-02T00:00:00Z')));
      expect(entries.map(({ id, title, updated }) => ({ id, title, updated }))).toEqual([
        {
          id: 'tag:version-router,2026:versions/1/closed_to_new/2026-11-01T00:00:00.000Z',
          title: 'v1 closed to new consumers from 2026-11-01',
          updated: '2026-06-01T00:00:00.000Z',
        },
        {
          id: 'tag:version-router,2026:versions/1/keys_required/2026-10-01T00:00:00.000Z',
          title: 'v1 requires an API key from 2026-10-01',
          updated: '2026-06-01T00:00:00.000Z',
        },
        { id: ID.v1Deprecated, title: 'v1 deprecated: removed on 2027-01-01', updated: '2026-06-01T00:00:00.000Z' },
      ]);
      expect(entries[1]?.description).toBe(
        'From 2026-10-01 every request for version 1 needs an API key in the API-Key header; one without is answered ' +
          '401. Its successor is version 2.',
      );
      expect(entries[0]?.description).toBe(
        'From 2026-11-01 version 1 takes no new consumers: an API key that has not called it before is answered 403. ' +
          'Its successor is version 2.',
      );
    },
  );

  it('lists "consumer_key": "required" without a date', async () => {
    const policy = {
      ...designPolicyFile,
      versions: [{ ...designPolicyFile.versions[0], consumer_key: 'required' }, designPolicyFile.versions[1]],
    };
    const { entries } = await readFeed(await gatewayWith(policy, TODAY));
    expect(entries[0]).toMatchObject({
      id: 'tag:version-router,2026:versions/1/keys_required/always',
      title: 'v1 requires an API key',
    });
  });
});
