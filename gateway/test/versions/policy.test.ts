import { describe, expect, it } from 'vitest';
import { imfFixdate, type Resolution } from '../../src/versions/policy.js';
import { TODAY, V1_SUNSET, at, designPolicyFile, policyFrom } from '../helpers.js';

const policy = policyFrom(designPolicyFile);
const [v1, v2] = policy.versions as [(typeof policy.versions)[0], (typeof policy.versions)[0]];

/** Everything a route takes from a resolution, for one request. */
function answer(resolution: Resolution, prefix: '' | '/api' = '', id = 'ord-1001') {
  return {
    kind: resolution.kind,
    version: resolution.version,
    selectedBy: resolution.selectedBy,
    deprecation: resolution.deprecation,
    sunset: resolution.sunset,
    link: resolution.successorLink(prefix, id),
    failure: resolution.failure,
    labels: resolution.labels,
  };
}

describe('imfFixdate', () => {
  it('formats HTTP dates as IMF-fixdate', () => {
    expect(imfFixdate(at('2099-01-01T00:00:00Z'))).toBe('Thu, 01 Jan 2099 00:00:00 GMT');
    expect(imfFixdate(at('2027-01-01T00:00:00Z'))).toBe('Fri, 01 Jan 2027 00:00:00 GMT');
    expect(imfFixdate(at('2026-06-09T07:05:03+02:00'))).toBe('Tue, 09 Jun 2026 05:05:03 GMT');
  });
});

describe('version policy: path form', () => {
  it('serves a deprecated version with Deprecation, Sunset and a successor Link for the request\'s own prefix', () => {
    expect(answer(policy.resolvePath(v1, undefined, TODAY))).toEqual({
      kind: 'serve',
      version: 1,
      selectedBy: 'path',
      deprecation: true,
      sunset: 'Fri, 01 Jan 2027 00:00:00 GMT',
      link: '</v2/orders/ord-1001>; rel="successor-version"',
      failure: undefined,
      labels: { version: '1', deprecated: 'true', selected_by: 'path' },
    });
    expect(answer(policy.resolvePath(v1, undefined, TODAY), '/api').link).toBe('</api/v2/orders/ord-1001>; rel="successor-version"');
  });

  it('percent-encodes the id inside the Link target', () => {
    expect(answer(policy.resolvePath(v1, undefined, TODAY), '', 'a b>;x').link).toBe('</v2/orders/a%20b%3E%3Bx>; rel="successor-version"');
  });

  it('serves a deprecated version like a current one before its announcement', () => {
    const before = answer(policy.resolvePath(v1, undefined, at('2026-05-31T23:59:59.999Z')));
    expect(before).toMatchObject({ kind: 'serve', deprecation: false, sunset: undefined, link: undefined, labels: { deprecated: 'false' } });
    expect(answer(policy.resolvePath(v1, undefined, at('2026-06-01T00:00:00Z'))).deprecation).toBe(true);
  });

  it('warns until the instant before the sunset and answers 410 from the sunset instant on', () => {
    expect(answer(policy.resolvePath(v1, undefined, V1_SUNSET - 1)).kind).toBe('serve');
    for (const now of [V1_SUNSET, V1_SUNSET + 1, at('2030-01-01T00:00:00Z')]) {
      expect(answer(policy.resolvePath(v1, undefined, now))).toEqual({
        kind: 'removed',
        version: 1,
        selectedBy: 'path',
        deprecation: false,
        sunset: 'Fri, 01 Jan 2027 00:00:00 GMT',
        link: '</v2/orders/ord-1001>; rel="successor-version"',
        failure: { status: 410, error: 'version_removed', details: 'version 1 was removed on Fri, 01 Jan 2027 00:00:00 GMT; use version 2' },
        labels: { version: '1', deprecated: 'true', selected_by: 'path' },
      });
    }
  });

  it('serves the current version without any deprecation header', () => {
    expect(answer(policy.resolvePath(v2, undefined, TODAY))).toMatchObject({ kind: 'serve', version: 2, deprecation: false, sunset: undefined, link: undefined });
  });

  it('accepts an API-Version header equal to the path version and rejects any other value as a conflict', () => {
    expect(policy.resolvePath(v2, '2', TODAY).kind).toBe('serve');
    for (const header of ['1', '3', 'abc', '', '02', '2, 2']) {
      expect(answer(policy.resolvePath(v2, header, TODAY))).toMatchObject({
        kind: 'conflict',
        version: undefined,
        deprecation: false,
        link: undefined,
        failure: { status: 400, error: 'conflicting_version', details: 'the path selects version 2; send no API-Version header or exactly "2"' },
        labels: { version: 'invalid', deprecated: 'false', selected_by: 'path' },
      });
    }
  });
});

describe('version policy: header form', () => {
  it('uses default_version when the header is absent', () => {
    expect(answer(policy.resolveHeader(undefined, TODAY))).toMatchObject({
      kind: 'serve',
      version: 1,
      selectedBy: 'default',
      deprecation: true,
      link: '</v2/orders/ord-1001>; rel="successor-version"',
      labels: { version: '1', deprecated: 'true', selected_by: 'default' },
    });
  });

  it('selects a supported integer and links to the bare path form whatever the prefix', () => {
    expect(answer(policy.resolveHeader('2', TODAY))).toMatchObject({ kind: 'serve', version: 2, selectedBy: 'header', deprecation: false });
    expect(answer(policy.resolveHeader('1', TODAY), '/api')).toMatchObject({
      kind: 'serve',
      version: 1,
      selectedBy: 'header',
      link: '</v2/orders/ord-1001>; rel="successor-version"',
    });
  });

  it('answers 406 listing the supported versions for anything but a listed version number', () => {
    for (const header of ['3', '0', 'abc', '1.0', '2, 1', '', '01', '+1', '-1', '1e0', '２']) {
      expect(answer(policy.resolveHeader(header, TODAY))).toMatchObject({
        kind: 'unsupported',
        version: undefined,
        selectedBy: 'header',
        link: undefined,
        failure: { status: 406, error: 'unsupported_version', details: 'supported versions: 1, 2' },
        labels: { version: 'invalid', deprecated: 'false', selected_by: 'header' },
      });
    }
  });

  it('answers 410 for a removed version selected by header or by default, and stops listing it as supported', () => {
    expect(answer(policy.resolveHeader('1', V1_SUNSET))).toMatchObject({ kind: 'removed', selectedBy: 'header', failure: { status: 410 } });
    expect(answer(policy.resolveHeader(undefined, V1_SUNSET))).toMatchObject({ kind: 'removed', selectedBy: 'default', failure: { status: 410 } });
    expect(policy.resolveHeader('9', V1_SUNSET).failure?.details).toBe('supported versions: 2');
  });

  it('answers with shared precomputed objects, so per-request work allocates nothing', () => {
    expect(policy.resolveHeader('2', TODAY)).toBe(policy.resolveHeader('2', TODAY + 1000));
    expect(policy.resolveHeader('x', TODAY)).toBe(policy.resolveHeader('y', TODAY));
    expect(policy.resolvePath(v1, '2', TODAY)).toBe(policy.resolvePath(v1, 'z', V1_SUNSET));
  });

  it('exposes sunsets for the gauge', () => {
    expect(policy.sunsets).toEqual([{ version: 1, epochSeconds: V1_SUNSET / 1000 }]);
    expect(policy.defaultVersion).toBe(1);
  });
});
