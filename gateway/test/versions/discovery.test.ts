// How a client learns the versions: API-Supported-Versions and API-Deprecated-Versions on every answer,
// API-Version on what a version served, and GET /versions.
import { describe, expect, it } from 'vitest';
import {
  BROWNOUT_START,
  TODAY,
  V1_SUNSET,
  at,
  buildTestGateway,
  lifecyclePolicyFile,
  stubbedGatewayPerTest,
} from '../support/helpers.js';

const fixture = stubbedGatewayPerTest((stubUrl) => buildTestGateway(stubUrl, { policy: lifecyclePolicyFile }));
const get = (url: string, headers: Record<string, string> = {}) =>
  fixture.gateway.app.inject({ method: 'GET', url, headers });

describe('discovery', () => {
  it.each([
    ['before the announcement', at('2026-05-01T00:00:00Z'), { 'api-supported-versions': '1, 2' }, 200],
    ['while deprecated', TODAY, { 'api-supported-versions': '2', 'api-deprecated-versions': '1' }, 200],
    ['during a brownout', BROWNOUT_START, { 'api-supported-versions': '2', 'api-deprecated-versions': '1' }, 410],
    ['after the sunset', V1_SUNSET, { 'api-supported-versions': '2' }, 410],
  ])(
    'lists supported and deprecated versions %s, on v1, v2, 400 and 406 answers alike',
    async (_when, now, lists, v1Status) => {
      fixture.gateway.setNow(now);
      const answers = [
        [await get('/v1/orders/ord-1001'), v1Status],
        [await get('/v2/orders/ord-1001'), 200],
        [await get('/v2/orders/missing'), 404],
        [await get('/v2/orders/ord-1001', { 'api-version': '1' }), 400],
        [await get('/orders/ord-1001', { 'api-version': '7' }), 406],
      ] as const;
      for (const [res, status] of answers) {
        expect(res.statusCode).toBe(status);
        expect(res.headers['api-supported-versions']).toBe(lists['api-supported-versions']);
        expect(res.headers['api-deprecated-versions']).toBe(
          'api-deprecated-versions' in lists ? lists['api-deprecated-versions'] : undefined,
        );
      }
    },
  );

  it(
    "echoes API-Version on what a version served (the backend's errors included), not on the gateway's " + 'refusals',
    async () => {
      expect((await get('/orders/ord-1001')).headers['api-version']).toBe('1');
      expect((await get('/orders/missing', { 'api-version': '2' })).headers['api-version']).toBe('2');
      expect((await get('/v2/orders/ord-1001', { 'api-version': '1' })).headers).not.toHaveProperty('api-version');
      expect((await get('/orders/x', { 'api-version': 'x' })).headers).not.toHaveProperty('api-version');
    },
  );

  it(
    "drops the backend's copies of every header the policy owns, keeps its Retry-After and merges its " + 'Vary',
    async () => {
      const res = await get('/v2/orders/varied');
      expect(res.headers).toMatchObject({
        vary: 'Accept-Encoding, API-Version',
        'api-version': '2',
        'api-supported-versions': '2',
        'retry-after': '120',
      });
      expect(res.headers).not.toHaveProperty('deprecation');
      expect(res.headers).not.toHaveProperty('sunset');
      expect(res.headers).not.toHaveProperty('link');
    },
  );

  it("answers GET /versions with each version's phase at the time of the request, linking the changelog", async () => {
    const versionsAt = async (now: number) => {
      fixture.gateway.setNow(now);
      const res = await get('/versions');
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers.link).toBe('</changelog>; rel="alternate"; type="application/atom+xml"');
      return res.json<{ default_version: number; versions: { version: number; phase: string }[] }>();
    };
    const windows = [
      { start: '2026-12-01T10:00:00.000Z', end: '2026-12-01T12:00:00.000Z' },
      { start: '2026-12-08T10:00:00.000Z', end: '2026-12-08T16:00:00.000Z' },
    ];
    expect(await versionsAt(TODAY)).toEqual({
      default_version: 1,
      default_version_changes: [],
      changelog: '/changelog',
      policy_sha256: expect.stringMatching(/^[0-9a-f]{12}$/) as string,
      versions: [
        {
          version: 1,
          phase: 'deprecated',
          announced: '2026-06-01T00:00:00.000Z',
          sunset: '2027-01-01T00:00:00.000Z',
          successor: 2,
          brownouts: windows,
          consumer_key: 'optional',
          consumer_key_required_from: null,
          closed_to_new: null,
          changes: '/versions/1/changes',
        },
        {
          version: 2,
          phase: 'current',
          announced: null,
          sunset: null,
          successor: null,
          brownouts: [],
          consumer_key: 'optional',
          consumer_key_required_from: null,
          closed_to_new: null,
        },
      ],
    });
    expect((await versionsAt(at('2026-05-31T23:59:59Z'))).versions.map(({ phase }) => phase)).toEqual([
      'current',
      'current',
    ]);
    expect((await versionsAt(V1_SUNSET)).versions.map(({ phase }) => phase)).toEqual(['removed', 'current']);
  });

  it('previews the policy at another instant with ?at=, read-only: phases and key rules then, `at` echoed', async () => {
    const preview = await get('/versions?at=2027-01-01');
    expect(preview.statusCode).toBe(200);
    const body = preview.json<{ at: string; default_version: number; versions: { phase: string }[] }>();
    expect(body.at).toBe('2027-01-01T00:00:00.000Z');
    expect(body.versions.map(({ phase }) => phase)).toEqual(['removed', 'current']);
    const before = (await get('/versions?at=2026-05-31T23:00:00-02:00')).json<{ at: string; versions: unknown[] }>();
    expect(before.at).toBe('2026-06-01T01:00:00.000Z');
    // Nothing moved: the policy still answers at the clock's own instant, and without ?at= the body has no `at`.
    const now = (await get('/versions')).json<Record<string, unknown> & { versions: { phase: string }[] }>();
    expect(now).not.toHaveProperty('at');
    expect(now.versions.map(({ phase }) => phase)).toEqual(['deprecated', 'current']);
    expect((await get('/v1/orders/ord-1001')).statusCode).toBe(200);
  });

  it.each(['tomorrow', '', '2027-13-01', '2027-02-30', '2027-01-01T00:00:00', '1798761600', 'x'.repeat(4_000)])(
    'answers ?at=%j with 400 invalid date in the error envelope',
    async (value) => {
      const res = await get(`/versions?at=${encodeURIComponent(value)}`);
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json()).toEqual({
        error: 'invalid date',
        code: 400,
        details: 'at must be a date (2026-06-01) or an RFC 3339 date-time (2027-01-01T00:00:00Z)',
      });
    },
  );

  it('answers ?at= given twice with 400 invalid date', async () => {
    const res = await get('/versions?at=2027-01-01&at=2026-01-01');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid date', code: 400 });
  });
});
