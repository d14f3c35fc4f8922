import { describe, expect, it } from 'vitest';
import type { VersionAnswer, VersionPolicy } from '../../src/versions/policy.js';
import {
  BROWNOUT_END,
  BROWNOUT_START,
  TODAY,
  V1_SUNSET,
  at,
  buildTestGateway,
  designPolicyFile,
  lifecyclePolicyFile,
  policyFrom,
  stubbedGatewayPerTest,
} from '../support/helpers.js';

const policy = policyFrom(designPolicyFile);
const V1_SUNSET_HTTP = 'Fri, 01 Jan 2027 00:00:00 GMT';

/** The path form: the path names `label`, perhaps with an API-Version header. */
const resolvePath = (of: VersionPolicy, label: string, header: string | undefined, nowMs: number) =>
  of.resolve(label, header, undefined, undefined, nowMs);
/** The header form: a bare path, perhaps with an API-Version header. */
const resolveHeader = (of: VersionPolicy, header: string | undefined, nowMs: number) =>
  of.resolve(undefined, header, undefined, undefined, nowMs);

/** The answer's headers as an object, for whole-set comparisons. */
const headersOf = (answer: VersionAnswer | undefined) => Object.fromEntries(answer?.headers ?? []);

const lifecyclePolicy = policyFrom(lifecyclePolicyFile);

describe('version policy: path form', () => {
  it('serves a deprecated version with Deprecation, Sunset, discovery and the successor to link', () => {
    const answer = resolvePath(policy, '1', undefined, TODAY);
    expect(answer).toMatchObject({
      version: 1,
      selectedBy: 'path',
      phase: 'deprecated',
      failure: null,
      successor: 2,
      extraLinks: '',
    });
    expect(headersOf(answer)).toEqual({
      vary: 'API-Version',
      'api-version': '1',
      'api-supported-versions': '2',
      'api-deprecated-versions': '1',
      deprecation: 'true',
      sunset: V1_SUNSET_HTTP,
    });
    expect(answer?.labels).toEqual({ version: '1', deprecated: 'true', selected_by: 'path' });
  });

  it('serves a deprecated version like a current one before its announcement, and lists it as supported', () => {
    const before = resolvePath(policy, '1', undefined, at('2026-05-31T23:59:59.999Z'));
    expect(before).toMatchObject({ phase: 'current', successor: null, labels: { deprecated: 'false' } });
    expect(headersOf(before)).toEqual({ vary: 'API-Version', 'api-version': '1', 'api-supported-versions': '1, 2' });
    expect(resolvePath(policy, '1', undefined, at('2026-06-01T00:00:00Z'))?.phase).toBe('deprecated');
  });

  it('warns until the instant before the sunset and answers 410 from the sunset instant on', () => {
    expect(resolvePath(policy, '1', undefined, V1_SUNSET - 1)?.failure).toBeNull();
    for (const now of [V1_SUNSET, V1_SUNSET + 1, at('2030-01-01T00:00:00Z')]) {
      const answer = resolvePath(policy, '1', undefined, now);
      expect(answer).toMatchObject({
        version: 1,
        phase: 'removed',
        successor: 2,
        failure: {
          status: 410,
          error: 'version_removed',
          details: `version 1 was removed on ${V1_SUNSET_HTTP}; use version 2`,
        },
        labels: { version: '1', deprecated: 'true', selected_by: 'path' },
      });
      // A removed version is in neither list, and the answer was not served by a version: no API-Version.
      expect(headersOf(answer)).toEqual({ vary: 'API-Version', 'api-supported-versions': '2', sunset: V1_SUNSET_HTTP });
    }
  });

  it('serves the current version with discovery headers only', () => {
    const answer = resolvePath(policy, '2', undefined, TODAY);
    expect(answer).toMatchObject({ version: 2, phase: 'current', successor: null, failure: null });
    expect(headersOf(answer)).toEqual({
      vary: 'API-Version',
      'api-version': '2',
      'api-supported-versions': '2',
      'api-deprecated-versions': '1',
    });
  });

  it('knows no unlisted path version (the route answers 404)', () => {
    for (const label of ['9', '0', '01', 'x', '']) expect(resolvePath(policy, label, undefined, TODAY)).toBeUndefined();
  });

  it('accepts an API-Version header equal to the path version and rejects any other value as a conflict', () => {
    expect(resolvePath(policy, '2', '2', TODAY)?.failure).toBeNull();
    for (const header of ['1', '3', 'abc', '', '02', '2, 2']) {
      const answer = resolvePath(policy, '2', header, TODAY);
      expect(answer).toMatchObject({
        version: null,
        phase: null,
        successor: null,
        failure: {
          status: 400,
          error: 'conflicting_version',
          details: 'the path selects version 2; send no API-Version header or exactly "2"',
        },
        labels: { version: 'invalid', deprecated: 'false', selected_by: 'path' },
      });
      expect(headersOf(answer)).toEqual({
        vary: 'API-Version',
        'api-supported-versions': '2',
        'api-deprecated-versions': '1',
      });
    }
  });
});

describe('version policy: header form', () => {
  it('uses default_version when the header is absent', () => {
    expect(resolveHeader(policy, undefined, TODAY)).toMatchObject({
      version: 1,
      selectedBy: 'default',
      phase: 'deprecated',
      successor: 2,
      labels: { version: '1', deprecated: 'true', selected_by: 'default' },
    });
  });

  it('selects a listed version by its exact decimal', () => {
    expect(resolveHeader(policy, '2', TODAY)).toMatchObject({ version: 2, selectedBy: 'header', phase: 'current' });
    expect(resolveHeader(policy, '1', TODAY)).toMatchObject({ version: 1, selectedBy: 'header', successor: 2 });
  });

  it('answers 406 listing the versions not yet removed for anything but a listed version number', () => {
    for (const header of ['3', '0', 'abc', '1.0', '2, 1', '', '01', '+1', '-1', '1e0', '２']) {
      const answer = resolveHeader(policy, header, TODAY);
      expect(answer).toMatchObject({
        version: null,
        selectedBy: 'header',
        successor: null,
        failure: { status: 406, error: 'unsupported_version', details: 'supported versions: 1, 2' },
        labels: { version: 'invalid', deprecated: 'false', selected_by: 'header' },
      });
      expect(headersOf(answer)).toEqual({
        vary: 'API-Version',
        'api-supported-versions': '2',
        'api-deprecated-versions': '1',
      });
    }
  });

  it('answers 410 for a removed version selected by header or by default, and stops offering it', () => {
    expect(resolveHeader(policy, '1', V1_SUNSET)).toMatchObject({
      phase: 'removed',
      selectedBy: 'header',
      failure: { status: 410 },
    });
    expect(resolveHeader(policy, undefined, V1_SUNSET)).toMatchObject({
      phase: 'removed',
      selectedBy: 'default',
      failure: { status: 410 },
    });
    expect(resolveHeader(policy, '9', V1_SUNSET)?.failure?.details).toBe('supported versions: 2');
  });

  it('answers with shared precomputed objects within a period, so per-request work allocates nothing', () => {
    expect(resolveHeader(policy, '2', TODAY)).toBe(resolveHeader(policy, '2', TODAY + 1000));
    expect(resolveHeader(policy, 'x', TODAY)).toBe(resolveHeader(policy, 'y', TODAY));
    expect(resolvePath(policy, '1', '2', TODAY)).toBe(resolvePath(policy, '1', 'z', TODAY - 1000));
  });
});

describe('version policy: the query and media type schemes', () => {
  const every = policyFrom({ ...designPolicyFile, schemes: ['path', 'header', 'query', 'media_type'] });

  it('reads the query parameter and the vendor media type, without allocating when a request names none', () => {
    const { schemes } = every;
    expect(schemes.queryVersion('/orders/x?a=1', 9)).toBeUndefined();
    expect(schemes.queryVersion('/orders/x?a=1&version=2', 9)).toBe('2');
    expect(schemes.queryVersion('/orders/x?versions=2&xversion=3', 9)).toBeUndefined();
    expect(schemes.queryVersion('/orders/x?version=2&version=2', 9)).toBe('2');
    expect(schemes.queryVersion('/orders/x?version=2&version=1', 9)).toBe('2, 1');
    expect(schemes.queryWithoutVersion('/orders/x?version=2&a=%41&&b', 9)).toBe('a=%41&&b');
    expect(schemes.mediaTypeVersion(undefined)).toBeUndefined();
    expect(schemes.mediaTypeVersion('application/json, */*')).toBeUndefined();
    expect(schemes.mediaTypeVersion('application/vnd.version-router.v2+json; q=1')).toBe('2');
    expect(schemes.mediaTypeVersion('application/vnd.version-router.v2')).toBe('application/vnd.version-router.v2');
    expect(schemes.vary).toBe('API-Version, Accept');
  });

  it('answers each scheme with its own shared objects: served, refused as unknown, refused as a conflict', () => {
    const byQuery = every.resolve(undefined, undefined, '2', undefined, TODAY);
    expect(byQuery).toMatchObject({
      version: 2,
      selectedBy: 'query',
      labels: { selected_by: 'query' },
      vary: 'API-Version, Accept',
    });
    expect(every.resolve(undefined, undefined, '2', '2', TODAY + 1000)).toBe(byQuery);
    expect(every.resolve(undefined, undefined, undefined, '1', TODAY)).toMatchObject({
      version: 1,
      selectedBy: 'media_type',
      successor: 2,
    });
    expect(every.resolve(undefined, undefined, 'x', undefined, TODAY)).toBe(
      every.resolve(undefined, undefined, '9', '2', TODAY),
    );
    expect(every.resolve(undefined, undefined, undefined, 'x', TODAY)?.labels).toEqual({
      version: 'invalid',
      deprecated: 'false',
      selected_by: 'media_type',
    });
    const conflict = every.resolve(undefined, '2', undefined, '1', TODAY);
    expect(conflict).toBe(every.resolve(undefined, '2', undefined, 'zz', TODAY));
    expect(conflict?.failure?.details).toBe(
      'the API-Version header selects version 2; send no versioned media type in Accept or exactly ' +
        'application/vnd.version-router.v2+json',
    );
  });
});

describe('version policy: RFC 9745 date form and links', () => {
  it('sends Deprecation as @<epoch seconds of the announcement> and the extra Link relations', () => {
    const answer = resolvePath(lifecyclePolicy, '1', undefined, at('2026-11-22T12:00:00Z'));
    expect(headersOf(answer).deprecation).toBe(`@${at('2026-06-01') / 1000}`);
    expect(headersOf(answer).deprecation).toBe('@1780272000');
    expect(answer?.extraLinks).toBe(
      ', <https://example.com/changelog/v1>; rel="deprecation"; type="text/html", ' +
        '<https://example.com/sunset-policy>; rel="sunset"',
    );
  });

  it('keeps the extra links after the sunset, and sends none before the announcement', () => {
    expect(resolvePath(lifecyclePolicy, '1', undefined, V1_SUNSET)?.extraLinks).toContain('rel="deprecation"');
    expect(resolvePath(lifecyclePolicy, '1', undefined, at('2026-05-01'))?.extraLinks).toBe('');
  });

  it('lists several current versions ascending, comma and space', () => {
    const withVersion3 = policyFrom({
      ...designPolicyFile,
      versions: [{ version: 3, status: 'current' }, ...designPolicyFile.versions],
    });
    expect(headersOf(resolvePath(withVersion3, '3', undefined, TODAY))['api-supported-versions']).toBe('2, 3');
  });
});

describe('version policy: brownouts', () => {
  const START = at('2026-12-01T10:00:00Z');
  const END = at('2026-12-01T12:00:00Z');

  it('answers 410 version_brownout from the window start (inclusive) to its end (exclusive)', () => {
    expect(resolvePath(lifecyclePolicy, '1', undefined, START - 1)?.failure).toBeNull();
    for (const now of [START, END - 1]) {
      const answer = resolvePath(lifecyclePolicy, '1', undefined, now);
      expect(answer).toMatchObject({
        version: 1,
        phase: 'deprecated',
        successor: 2,
        failure: {
          status: 410,
          error: 'version_brownout',
          details:
            `version 1 is browned out until Tue, 01 Dec 2026 12:00:00 GMT; it will be removed on ` +
            `${V1_SUNSET_HTTP}; use version 2`,
        },
        labels: { version: '1', deprecated: 'true', selected_by: 'path' },
      });
      expect(headersOf(answer)).toEqual({
        vary: 'API-Version',
        'api-supported-versions': '2',
        'api-deprecated-versions': '1',
        deprecation: '@1780272000',
        sunset: V1_SUNSET_HTTP,
        'retry-after': 'Tue, 01 Dec 2026 12:00:00 GMT',
      });
    }
    expect(resolvePath(lifecyclePolicy, '1', undefined, END)?.failure).toBeNull();
  });

  it('browns out the header and default forms too, and leaves other versions alone', () => {
    expect(resolveHeader(lifecyclePolicy, undefined, START)?.failure?.error).toBe('version_brownout');
    expect(resolveHeader(lifecyclePolicy, '1', START)?.failure?.error).toBe('version_brownout');
    expect(resolveHeader(lifecyclePolicy, '2', START)?.failure).toBeNull();
  });

  it('tells each window by its own end', () => {
    const second = resolvePath(lifecyclePolicy, '1', undefined, at('2026-12-08T15:59:59Z'));
    expect(headersOf(second)['retry-after']).toBe('Tue, 08 Dec 2026 16:00:00 GMT');
    expect(lifecyclePolicy.brownoutAt(lifecyclePolicy.versions[0]!, at('2026-12-08T16:00:00Z'))).toBeUndefined();
  });
});

describe('version policy: describe (GET /versions)', () => {
  it('shows each version with its phase at the given instant', () => {
    expect(policy.describe(TODAY)).toEqual({
      default_version: 1,
      default_version_changes: [],
      versions: [
        {
          version: 1,
          phase: 'deprecated',
          announced: '2026-06-01T00:00:00.000Z',
          sunset: '2027-01-01T00:00:00.000Z',
          successor: 2,
          brownouts: [],
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
    // The migration guide is linked once the version is deprecated, and still after its removal.
    expect(policy.describe(at('2026-05-01')).versions[0]).toMatchObject({ phase: 'current' });
    expect(policy.describe(at('2026-05-01')).versions[0]).not.toHaveProperty('changes');
    expect(policy.describe(V1_SUNSET).versions[0]).toMatchObject({ phase: 'removed', changes: '/versions/1/changes' });
    expect(lifecyclePolicy.describe(TODAY).versions[0]?.brownouts).toEqual([
      { start: '2026-12-01T10:00:00.000Z', end: '2026-12-01T12:00:00.000Z' },
      { start: '2026-12-08T10:00:00.000Z', end: '2026-12-08T16:00:00.000Z' },
    ]);
  });
});

describe('brownouts', () => {
  const fixture = stubbedGatewayPerTest((stubUrl) => buildTestGateway(stubUrl, { policy: lifecyclePolicyFile }));
  const get = (url: string, headers: Record<string, string> = {}) =>
    fixture.gateway.app.inject({ method: 'GET', url, headers });

  it(
    'answers 410 version_brownout with Retry-After from the window start (inclusive) to its end (exclusive), ' +
      'without calling the backend',
    async () => {
      fixture.gateway.setNow(BROWNOUT_START - 1);
      expect((await get('/v1/orders/ord-1001')).statusCode).toBe(200);
      fixture.stub.seen.length = 0;
      for (const now of [BROWNOUT_START, BROWNOUT_END - 1]) {
        fixture.gateway.setNow(now);
        for (const [url, headers] of [
          ['/v1/orders/ord-1001', {}],
          ['/api/v1/orders/ord-1001', {}],
          ['/orders/ord-1001', {}],
          ['/orders/ord-1001', { 'api-version': '1' }],
        ] as const) {
          const res = await get(url, headers);
          expect(res.statusCode).toBe(410);
          expect(res.headers['content-type']).toMatch(/^application\/json/);
          expect(res.json()).toEqual({
            error: 'version_brownout',
            code: 410,
            details:
              'version 1 is browned out until Tue, 01 Dec 2026 12:00:00 GMT; it will be removed on Fri, 01 Jan 2027 ' +
              '00:00:00 GMT; use version 2',
          });
          expect(res.headers).toMatchObject({
            'retry-after': 'Tue, 01 Dec 2026 12:00:00 GMT',
            deprecation: '@1780272000',
            sunset: 'Fri, 01 Jan 2027 00:00:00 GMT',
          });
          expect(res.headers.link).toMatch(/^<(\/api)?\/v2\/orders\/ord-1001>; rel="successor-version"/);
        }
      }
      expect(fixture.stub.seen).toHaveLength(0);
      expect((await get('/v2/orders/ord-1001')).statusCode).toBe(200);
      fixture.gateway.setNow(BROWNOUT_END);
      expect((await get('/v1/orders/ord-1001')).statusCode).toBe(200);
    },
  );

  it('counts brownout answers as 410 and shows the window in api_version_brownout_active', async () => {
    fixture.gateway.setNow(BROWNOUT_START);
    await get('/v1/orders/ord-1001');
    expect(await fixture.gateway.metricLines('api_version_requests_total')).toEqual([
      'api_version_requests_total{version="1",deprecated="true",selected_by="path",status_code="410"} 1',
    ]);
    expect(await fixture.gateway.metricLines('api_version_brownout_active')).toEqual([
      'api_version_brownout_active{version="1"} 1',
      'api_version_brownout_active{version="2"} 0',
    ]);
    fixture.gateway.setNow(BROWNOUT_END);
    expect(await fixture.gateway.metricLines('api_version_brownout_active')).toEqual([
      'api_version_brownout_active{version="1"} 0',
      'api_version_brownout_active{version="2"} 0',
    ]);
  });
});

describe('version policy: scheduled moves of the default (default_version_changes)', () => {
  const DAY = 86_400_000;
  const iso = (epochMs: number): string => new Date(epochMs).toISOString();
  const MOVE_AT = TODAY + 10 * DAY;
  const scheduled = policyFrom({
    ...designPolicyFile,
    default_version_changes: [{ at: iso(MOVE_AT), to: 2, announced: iso(TODAY - DAY) }],
  });
  const HEADER = `2; at=@${MOVE_AT / 1000}`;

  it('serves default_version until the move and its target from the move on', () => {
    expect(scheduled.defaultAt(MOVE_AT - 1)).toBe(1);
    expect(resolveHeader(scheduled, undefined, MOVE_AT - 1)).toMatchObject({ version: 1, selectedBy: 'default' });
    expect(scheduled.defaultAt(MOVE_AT)).toBe(2);
    expect(resolveHeader(scheduled, undefined, MOVE_AT)).toMatchObject({
      version: 2,
      selectedBy: 'default',
      phase: 'current',
    });
  });

  it(
    'announces the move on the answers it moves, from its announcement until it applies: ' +
      'API-Default-Version-Change: <to>; at=@<epoch seconds>',
    () => {
      expect(headersOf(resolveHeader(scheduled, undefined, TODAY - DAY - 1))).not.toHaveProperty(
        'api-default-version-change',
      );
      expect(headersOf(resolveHeader(scheduled, undefined, TODAY))).toEqual({
        vary: 'API-Version, API-Key',
        'api-version': '1',
        'api-supported-versions': '2',
        'api-deprecated-versions': '1',
        deprecation: 'true',
        sunset: V1_SUNSET_HTTP,
        'api-default-version-change': HEADER,
      });
      expect(headersOf(resolveHeader(scheduled, undefined, MOVE_AT - 1))['api-default-version-change']).toBe(HEADER);
      expect(headersOf(resolveHeader(scheduled, undefined, MOVE_AT))).not.toHaveProperty('api-default-version-change');
      // Requests that name a version, and a consumer's pin, do not move with the default.
      expect(headersOf(resolveHeader(scheduled, '1', TODAY))).not.toHaveProperty('api-default-version-change');
      expect(headersOf(resolvePath(scheduled, '1', undefined, TODAY))).not.toHaveProperty('api-default-version-change');
      expect(headersOf(scheduled.resolvePin(1, TODAY))).not.toHaveProperty('api-default-version-change');
    },
  );

  it('names the next move announced and not yet due, with the default it replaces', () => {
    expect(scheduled.upcomingDefaultChange(TODAY - DAY - 1)).toBeUndefined();
    expect(scheduled.upcomingDefaultChange(TODAY)).toEqual({
      at: MOVE_AT,
      to: 2,
      announced: TODAY - DAY,
      from: 1,
    });
    expect(scheduled.upcomingDefaultChange(MOVE_AT)).toBeUndefined();
  });

  it('shows the default in force and every scheduled move in GET /versions', () => {
    expect(scheduled.describe(TODAY)).toMatchObject({
      default_version: 1,
      default_version_changes: [{ at: iso(MOVE_AT), to: 2, announced: iso(TODAY - DAY) }],
    });
    expect(scheduled.describe(MOVE_AT).default_version).toBe(2);
  });

  describe('on a live gateway', () => {
    const current = stubbedGatewayPerTest((stubUrl) =>
      buildTestGateway(stubUrl, {
        policy: {
          ...designPolicyFile,
          default_version_changes: [{ at: iso(MOVE_AT), to: 2, announced: iso(TODAY - DAY) }],
        },
      }),
    );

    it('carries the header on an unversioned answer, never on one that names a version', async () => {
      const { app } = current.gateway;
      const bare = await app.inject({ url: '/orders/ord-1001' });
      expect(bare.headers['api-default-version-change']).toBe(HEADER);
      expect(bare.headers['api-version']).toBe('1');
      const named = await app.inject({ url: '/orders/ord-1001', headers: { 'api-version': '1' } });
      expect(named.headers['api-default-version-change']).toBeUndefined();
      current.gateway.setNow(MOVE_AT);
      const moved = await app.inject({ url: '/orders/ord-1001' });
      expect(moved.headers['api-version']).toBe('2');
      expect(moved.headers['api-default-version-change']).toBeUndefined();
    });
  });
});
