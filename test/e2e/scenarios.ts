import { readFileSync } from 'node:fs';
import { parseFeed } from '@rowanmanning/feed-parser';
import { describe, expect, it } from 'vitest';
import { postExpectingContinue } from '../../platform/test/support/expect-continue.js';
import type { StackEndpoints } from './stack.js';

/**
 * The end-to-end scenarios, written once against StackEndpoints: the process suite (stack.test.ts)
 * and the docker compose suite (test/containers) both run them. They only use the public gateway and the
 * admin listeners, never the backend's API, and they measure metrics as deltas, so a stack that already
 * served traffic is fine.
 */

const json = 'application/json';
const DEMO_ORDER = 'ord-1001';
/** The demo order (ops/seed/orders.json) in its two representations, v1 and v2. */
const V1_ORDER = { id: DEMO_ORDER, user_id: 'user-1', total: 19.99 };
const V2_ORDER = { id: DEMO_ORDER, customer_id: 'user-1', total_cents: 1999, currency: 'EUR' };

interface Created {
  id: string;
  name: string;
  email: string;
  created_at: string;
  updated_at: string;
}

/** api_version_requests_total by its labels, from a /metrics text. */
async function versionCounts(adminUrl: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${adminUrl}/metrics`)).text();
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^api_version_requests_total\{(.*)\} (\S+)$/.exec(line);
    if (match?.[1] !== undefined && match[2] !== undefined) counts.set(match[1], Number(match[2]));
  }
  return counts;
}

const series = (version: string, deprecated: string, selectedBy: string, status: number) =>
  `version="${version}",deprecated="${deprecated}",selected_by="${selectedBy}",status_code="${status}"`;

/** A JSON user body padded with spaces to exactly `size` bytes. */
function userBodyOfSize(size: number): Buffer {
  const core = `{"name":"Big","email":"big@example.com"}`;
  return Buffer.from(`${core.slice(0, -1)}${' '.repeat(size - core.length)}}`);
}

interface PolicyFile {
  default_version: number;
  versions: { version: number; status: string; announced?: string; sunset?: string }[];
}

/**
 * The listed versions as the scenarios expect them, from the policy file the stack runs with, read when a test
 * runs (a stack can start after the scenarios are registered). Version 1 is the shipped deprecated version
 * the scenarios check in detail; every current version joins the supported lists and GET /versions, so a
 * version added to the policy (docs/architecture.md "Adding a version 3") needs no change here. The number
 * above the highest listed version is the unlisted one.
 */
function listedVersions(stack: StackEndpoints): { current: number[]; supported: string; unlisted: string } {
  const { versions } = policyOf(stack);
  const current = versions
    .filter(({ status }) => status === 'current')
    .map(({ version }) => version)
    .sort((a, b) => a - b);
  return {
    current,
    supported: current.join(', '),
    unlisted: String(Math.max(...versions.map(({ version }) => version)) + 1),
  };
}

const policyOf = (stack: StackEndpoints): PolicyFile =>
  JSON.parse(readFileSync(stack.versionsFile, 'utf8')) as PolicyFile;

/**
 * Version 1's dates as the stack's policy gives them, in each form the gateway writes them, and the version requests
 * that name none get: the scenarios follow the policy's dates instead of repeating them.
 */
function version1Of(stack: StackEndpoints): {
  announced: string;
  sunset: string;
  sunsetHttp: string;
  sunsetSeconds: number;
  defaultVersion: number;
} {
  const policy = policyOf(stack);
  const v1 = policy.versions.find(({ version }) => version === 1);
  if (v1?.announced === undefined || v1.sunset === undefined) throw new Error('the policy has no deprecated version 1');
  const [announced, sunset] = [Date.parse(v1.announced), Date.parse(v1.sunset)];
  return {
    announced: new Date(announced).toISOString(),
    sunset: new Date(sunset).toISOString(),
    sunsetHttp: new Date(sunset).toUTCString(),
    sunsetSeconds: sunset / 1000,
    defaultVersion: policy.default_version,
  };
}

export function registerScenarios(getStack: () => StackEndpoints): void {
  const gateway = (path: string, init?: RequestInit) => fetch(`${getStack().gatewayUrl}${path}`, init);
  const postUser = (body: string, contentType = json) =>
    gateway('/api/users', { method: 'POST', headers: { 'content-type': contentType }, body });

  describe('health', () => {
    it('answers /healthz and /readyz on both admin listeners', async () => {
      for (const admin of [getStack().gatewayAdminUrl, getStack().backendAdminUrl]) {
        expect((await fetch(`${admin}/healthz`)).status).toBe(200);
        expect((await fetch(`${admin}/readyz`)).status).toBe(200);
      }
    });
  });

  describe('users through the gateway', () => {
    it('creates, reads, updates, lists and deletes a user', async () => {
      const created = await postUser('{"name":"Ada","email":"ada@example.com"}');
      expect(created.status).toBe(201);
      expect(created.headers.get('content-type')).toMatch(/^application\/json/);
      const user = (await created.json()) as Created;
      expect(user.id).toMatch(/^user-\d+$/);
      expect(user.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(user).toEqual({
        id: user.id,
        name: 'Ada',
        email: 'ada@example.com',
        created_at: user.created_at,
        updated_at: user.created_at,
      });
      expect(created.headers.get('location')).toBe(`/api/users/${user.id}`);

      expect(await (await gateway(`/api/users/${user.id}`)).json()).toEqual(user);
      const updated = await gateway(`/api/users/${user.id}`, {
        method: 'PUT',
        headers: { 'content-type': json },
        body: '{"email":"ada@lovelace.org"}',
      });
      expect(updated.status).toBe(200);
      expect(await updated.json()).toMatchObject({
        id: user.id,
        name: 'Ada',
        email: 'ada@lovelace.org',
        created_at: user.created_at,
      });
      const all = (await (await gateway('/api/users')).json()) as Created[];
      expect(all.map(({ id }) => id)).toContain(user.id);

      const deleted = await gateway(`/api/users/${user.id}`, { method: 'DELETE' });
      expect(deleted.status).toBe(204);
      expect(await deleted.text()).toBe('');
      const gone = await gateway(`/api/users/${user.id}`);
      expect(gone.status).toBe(404);
      expect(await gone.json()).toEqual({ error: 'user not found', code: 404 });
    });

    it('answers the handler errors unchanged: 400 invalid JSON, 422 validation failed, 404 on PUT/DELETE', async () => {
      const garbage = await postUser('{not json');
      expect(garbage.status).toBe(400);
      expect(await garbage.json()).toMatchObject({ error: 'invalid JSON', code: 400 });
      const unknown = await postUser('{"name":"a","email":"b","x":1}');
      expect(unknown.status).toBe(400);
      expect(await unknown.json()).toMatchObject({ error: 'invalid JSON', code: 400 });
      const noName = await postUser('{"email":"b@example.com"}');
      expect(noName.status).toBe(422);
      expect(await noName.json()).toEqual({ error: 'validation failed', code: 422, details: 'name is required' });
      const noEmail = await postUser('{"name":"b"}');
      expect(await noEmail.json()).toEqual({ error: 'validation failed', code: 422, details: 'email is required' });
      for (const method of ['PUT', 'DELETE']) {
        const missing = await gateway('/api/users/user-999999', {
          method,
          headers: { 'content-type': json },
          body: method === 'PUT' ? '{}' : undefined,
        });
        expect(missing.status).toBe(404);
        expect(await missing.json()).toEqual({ error: 'user not found', code: 404 });
      }
    });

    it('decodes the body as JSON whatever its Content-Type, a malformed one included', async () => {
      for (const contentType of ['application/x-www-form-urlencoded', 'foo']) {
        const res = await postUser('{"name":"Form","email":"form@example.com"}', contentType);
        expect(res.status).toBe(201);
      }
    });

    it('accepts a body of exactly 1 MiB and answers 400 invalid JSON to a larger one', async () => {
      expect((await postUser(userBodyOfSize(1_048_576).toString())).status).toBe(201);
      const tooLarge = await postUser(userBodyOfSize(1_048_577).toString());
      expect(tooLarge.status).toBe(400);
      expect(await tooLarge.json()).toMatchObject({ error: 'invalid JSON', code: 400 });
    });

    it('works with Expect: 100-continue uploads, as curl -d @big.json sends them', async () => {
      const res = await postExpectingContinue(`${getStack().gatewayUrl}/api/users`, userBodyOfSize(200_000), {
        'content-type': 'application/x-www-form-urlencoded',
      });
      expect(res.sawContinue).toBe(true);
      expect(res.status).toBe(201);
    });

    it('passes the backend 405 with its Allow header', async () => {
      const res = await gateway('/api/users', { method: 'PATCH', headers: { 'content-type': json }, body: '{}' });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toMatch(/GET/);
      expect(res.headers.get('allow')).toMatch(/POST/);
      expect(await res.json()).toEqual({ error: 'method not allowed', code: 405 });
    });

    it('pages through users with the PageResponse envelope', async () => {
      for (const n of [1, 2, 3]) await postUser(`{"name":"Page${n}","email":"p${n}@example.com"}`);
      const first = (await (await gateway('/api/users/page?limit=2')).json()) as {
        items: Created[];
        next_cursor?: string;
        has_more: boolean;
      };
      expect(first.items).toHaveLength(2);
      expect(first.has_more).toBe(true);
      expect(typeof first.next_cursor).toBe('string');
      const next = await gateway(`/api/users/page?limit=2&cursor=${encodeURIComponent(first.next_cursor ?? '')}`);
      expect(next.status).toBe(200);
      const second = (await next.json()) as { items: Created[] };
      expect(second.items[0]?.id).not.toBe(first.items[1]?.id);
    });

    it('echoes a sane X-Request-Id and generates one otherwise', async () => {
      expect(
        (await gateway('/api/users', { headers: { 'x-request-id': 'e2e-req-1' } })).headers.get('x-request-id'),
      ).toBe('e2e-req-1');
      expect(
        (await gateway('/api/users', { headers: { 'x-request-id': 'x'.repeat(129) } })).headers.get('x-request-id'),
      ).toMatch(/^[0-9a-f-]{36}$/);
    });
  });

  describe(
    'orders: the version policy of ops/versions.json (v1 deprecated, its sunset ahead; v2 current and the ' +
      'default)',
    () => {
      const V1_LINK = '</v2/orders/ord-1001>; rel="successor-version"';

      it.each([
        ['/v1/orders/ord-1001', undefined, 1, '</v2/orders/ord-1001>; rel="successor-version"'],
        ['/api/v1/orders/ord-1001', undefined, 1, '</api/v2/orders/ord-1001>; rel="successor-version"'],
        ['/orders/ord-1001', '1', 1, '</v2/orders/ord-1001>; rel="successor-version"'],
        ['/orders/ord-1001', undefined, 'default', null],
        ['/v2/orders/ord-1001', undefined, 2, null],
        ['/api/v2/orders/ord-1001', undefined, 2, null],
        ['/orders/ord-1001', '2', 2, null],
      ])('GET %s with API-Version %s → the right representation and headers', async (path, version, served, link) => {
        const v1 = version1Of(getStack());
        const answering = served === 'default' ? v1.defaultVersion : served;
        const expectedLink = served === 'default' ? (answering === 1 ? V1_LINK : null) : link;
        const res = await gateway(path, { headers: version === undefined ? {} : { 'api-version': version } });
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        expect(await res.json()).toEqual(answering === 1 ? V1_ORDER : V2_ORDER);
        expect(res.headers.get('api-version')).toBe(String(answering));
        expect(res.headers.get('vary')).toMatch(/API-Version/);
        expect(res.headers.get('link')).toBe(expectedLink);
        expect(res.headers.get('deprecation')).toBe(expectedLink === null ? null : 'true');
        expect(res.headers.get('sunset')).toBe(expectedLink === null ? null : v1.sunsetHttp);
      });

      it('keeps the deprecation headers on a 404 of v1 (JSON bare, text/plain under /api)', async () => {
        const bare = await gateway('/v1/orders/ord-missing');
        expect(bare.status).toBe(404);
        expect(await bare.json()).toEqual({ error: 'order not found', code: 404 });
        expect(bare.headers.get('deprecation')).toBe('true');
        expect(bare.headers.get('link')).toBe('</v2/orders/ord-missing>; rel="successor-version"');
        const api = await gateway('/api/v1/orders/ord-missing');
        expect(api.status).toBe(404);
        expect(api.headers.get('content-type')).toMatch(/^text\/plain/);
        expect(await api.text()).toBe('order not found');
        expect(api.headers.get('sunset')).toBe(version1Of(getStack()).sunsetHttp);
        expect(api.headers.get('vary')).toMatch(/API-Version/);
      });

      const expectUnsupported = async (value: string) => {
        const res = await gateway('/orders/ord-1001', { headers: { 'api-version': value } });
        expect(res.status).toBe(406);
        expect(res.headers.get('vary')).toBe('API-Version');
        expect(await res.json()).toEqual({
          error: 'unsupported_version',
          code: 406,
          details: `supported versions: 1, ${listedVersions(getStack()).supported}`,
        });
      };

      it('answers API-Version one above the highest listed version with 406 unsupported_version and Vary', async () => {
        await expectUnsupported(listedVersions(getStack()).unlisted);
      });

      it.each(['0', 'abc', '1.0', '2, 1', ''])(
        'answers API-Version %j with 406 unsupported_version and Vary',
        expectUnsupported,
      );

      it(
        'answers a path version contradicted by API-Version with 400 conflicting_version, and accepts the same ' +
          'version',
        async () => {
          const conflict = await gateway('/v2/orders/ord-1001', { headers: { 'api-version': '1' } });
          expect(conflict.status).toBe(400);
          expect(conflict.headers.get('vary')).toBe('API-Version');
          expect(await conflict.json()).toMatchObject({ error: 'conflicting_version', code: 400 });
          expect((await gateway('/v2/orders/ord-1001', { headers: { 'api-version': '2' } })).status).toBe(200);
        },
      );

      it(
        'tells clients which versions exist: discovery headers on every versioned answer, and GET ' + '/versions',
        async () => {
          const { current, supported, unlisted } = listedVersions(getStack());
          const dates = version1Of(getStack());
          const v1 = await gateway('/v1/orders/ord-1001');
          const refused = await gateway('/orders/ord-1001', { headers: { 'api-version': unlisted } });
          const missing = await gateway('/orders/ord-missing', { headers: { 'api-version': '2' } });
          for (const res of [v1, refused, missing]) {
            expect(res.headers.get('api-supported-versions')).toBe(supported);
            expect(res.headers.get('api-deprecated-versions')).toBe('1');
          }
          expect(v1.headers.get('api-version')).toBe('1');
          expect(missing.headers.get('api-version')).toBe('2');
          expect(refused.headers.get('api-version')).toBeNull();

          const versions = await gateway('/versions');
          expect(versions.status).toBe(200);
          expect(versions.headers.get('content-type')).toMatch(/^application\/json/);
          expect(versions.headers.get('link')).toBe('</changelog>; rel="alternate"; type="application/atom+xml"');
          expect(await versions.json()).toEqual({
            default_version: dates.defaultVersion,
            default_version_changes: [],
            changelog: '/changelog',
            policy_sha256: expect.stringMatching(/^[0-9a-f]{12}$/) as string,
            versions: [
              {
                version: 1,
                phase: 'deprecated',
                announced: dates.announced,
                sunset: dates.sunset,
                successor: 2,
                brownouts: [],
                consumer_key: 'optional',
                consumer_key_required_from: null,
                closed_to_new: null,
                changes: '/versions/1/changes',
              },
              ...current.map((version) => ({
                version,
                phase: 'current',
                announced: null,
                sunset: null,
                successor: null,
                brownouts: [],
                consumer_key: 'optional',
                consumer_key_required_from: null,
                closed_to_new: null,
              })),
            ],
          });
        },
      );

      it(
        "lists what a v1 client changes to use v2: the policy's declarations, else the documents' " + 'differences',
        async () => {
          const res = await gateway('/versions/1/changes');
          expect(res.status).toBe(200);
          const guide = (await res.json()) as {
            operations: {
              path: string;
              changes: { change: string; name: string; breaking: boolean; declared?: true }[];
            }[];
          };
          const first = guide.operations.find((operation) => operation.path === '/v1/orders/{id}');
          const listed = first?.changes.map(
            ({ change, name, breaking }) => `${change} ${name}${breaking ? ' (breaking)' : ''}`,
          );
          // ops/versions.json declares version 1 as changes; a copy that follows "Adding a resource" has none.
          const declared = first?.changes.some((change) => change.declared === true) ?? false;
          expect(listed).toEqual(
            declared
              ? ['renamed user_id (breaking)', 'converted total (breaking)', 'added currency']
              : [
                  'removed user_id (breaking)',
                  'removed total (breaking)',
                  'added customer_id',
                  'added total_cents',
                  'added currency',
                ],
          );
        },
      );

      it(
        "announces v1's deprecation in the Atom changelog GET /versions links, linking the migration " + 'guide',
        async () => {
          const res = await gateway('/changelog');
          expect(res.status).toBe(200);
          expect(res.headers.get('content-type')).toBe('application/atom+xml; charset=utf-8');
          const feed = parseFeed(await res.text());
          const { announced, sunset } = version1Of(getStack());
          expect(feed.meta).toEqual({ type: 'atom', version: '1.0' });
          expect(feed.self).toBe(`${getStack().gatewayUrl}/changelog`);
          const deprecated = feed.items.find(
            ({ id }) => id === `tag:version-router,2026:versions/1/deprecated/${announced}`,
          );
          expect(deprecated?.title).toBe(`v1 deprecated: removed on ${sunset.slice(0, 10)}`);
          expect(deprecated?.url).toBe(`${getStack().gatewayUrl}/versions/1/changes`);
          expect((await gateway(new URL(deprecated!.url!).pathname)).status).toBe(200);
        },
      );

      it(
        "serves each version's OpenAPI document; the deprecated one's own operations marked from the policy, with " +
          'its headers',
        async () => {
          type Document = {
            info: { version: string };
            paths: Record<string, Record<string, { deprecated?: boolean }>>;
            'x-sunset'?: string;
            'x-successor-version'?: number;
          };
          const v1 = await gateway('/v1/openapi.json');
          expect(v1.status).toBe(200);
          expect(v1.headers.get('deprecation')).toBe('true');
          const { sunset, sunsetHttp } = version1Of(getStack());
          expect(v1.headers.get('sunset')).toBe(sunsetHttp);
          expect(v1.headers.get('link')).toBe('</v2/openapi.json>; rel="successor-version"');
          const v1Document = (await v1.json()) as Document;
          expect(v1Document.info.version).toBe('1');
          expect(v1Document['x-sunset']).toBe(sunset);
          expect(v1Document['x-successor-version']).toBe(2);
          // The version's own operations are deprecated; the unversioned /api/users ones, the same in every version,
          // never.
          const operationsOf = (own: boolean) =>
            Object.entries(v1Document.paths)
              .filter(([path]) => /^(\/api)?\/v1\//.test(path) === own)
              .flatMap(([, item]) => Object.values(item));
          expect(operationsOf(true).length).toBeGreaterThan(1);
          expect(operationsOf(true).every((operation) => operation.deprecated === true)).toBe(true);
          expect(operationsOf(false).length).toBeGreaterThan(4);
          expect(operationsOf(false).some((operation) => operation.deprecated === true)).toBe(false);

          const v2 = await gateway('/openapi.json', { headers: { 'api-version': '2' } });
          expect(v2.status).toBe(200);
          expect(v2.headers.get('api-version')).toBe('2');
          expect(v2.headers.get('deprecation')).toBeNull();
          const v2Document = (await v2.json()) as Document;
          expect(v2Document.info.version).toBe('2');
          expect(v2Document).not.toHaveProperty('x-sunset');
          expect(
            Object.values(v2Document.paths)
              .flatMap((item) => Object.values(item))
              .some((operation) => operation.deprecated === true),
          ).toBe(false);
        },
      );

      it('answers an unknown path version with the JSON 404', async () => {
        const res = await gateway('/v9/orders/ord-1001');
        expect(res.status).toBe(404);
        expect(await res.json()).toEqual({ error: 'not found', code: 404 });
      });

      it('counts requests per version, deprecation, selection and status on the gateway /metrics', async () => {
        const admin = getStack().gatewayAdminUrl;
        const before = await versionCounts(admin);
        for (let i = 0; i < 3; i++) await gateway('/v1/orders/ord-1001');
        for (let i = 0; i < 2; i++) await gateway('/orders/ord-1001', { headers: { 'api-version': '2' } });
        await gateway('/orders/ord-1001');
        await gateway('/orders/ord-1001', { headers: { 'api-version': 'x' } });
        const after = await versionCounts(admin);
        const { defaultVersion, sunsetSeconds } = version1Of(getStack());
        const delta = (key: string) => (after.get(key) ?? 0) - (before.get(key) ?? 0);
        expect(delta(series('1', 'true', 'path', 200))).toBe(3);
        expect(delta(series('2', 'false', 'header', 200))).toBe(2);
        expect(delta(series(String(defaultVersion), String(defaultVersion === 1), 'default', 200))).toBe(1);
        expect(delta(series('invalid', 'false', 'header', 406))).toBe(1);
        const text = await (await fetch(`${admin}/metrics`)).text();
        expect(text).toContain(`api_version_sunset_timestamp_seconds{version="1"} ${sunsetSeconds}`);
        expect(text).toMatch(/^http_requests_total\{method="GET",route="\/v1\/orders\/:id",status_code="200"\} \d+/m);
      });
    },
  );
}
