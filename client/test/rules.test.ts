import { describe, expect, it, vi } from 'vitest';
import { successorLink, sunsetDate, versionNumber } from '../src/headers.js';
import { createDeprecationReporter, type DeprecatedAnswer, type DeprecationReport } from '../src/report.js';
import { pathShape, pathVersion } from '../src/shape.js';

describe('pathShape', () => {
  it.each([
    ['/v1/orders/ord-1001', '/v1/orders/{id}'],
    ['/api/v12/orders/42?expand=items', '/api/v12/orders/{id}'],
    ['/v1/users/3f2b8c1e-9a4d-4e7b-8c2a-1d9e5f6a7b8c/orders', '/v1/users/{id}/orders'],
    ['/v1/files/abcdefghijklmnopqrstuvwxyz', '/v1/files/{id}'],
    ['/v1/users/alice', '/v1/users/alice'],
    ['/orders/v2', '/orders/v2'],
    ['/', '/'],
  ])('%s → %s', (path, shape) => {
    expect(pathShape(path)).toBe(shape);
  });
});

describe('pathVersion', () => {
  it.each([
    ['/v1/orders/x', 1],
    ['/api/v2/orders/x', 2],
    ['/v3', 3],
    ['/orders/x', null],
    ['/v1x/orders', null],
  ])('%s → %s', (path, version) => {
    expect(pathVersion(path)).toBe(version);
  });
});

describe('successorLink', () => {
  const base = 'https://api.example.com/v1/orders/ord-1';
  it('finds the successor among other links and resolves it against the request', () => {
    const link =
      '</v2/orders/ord-1>; rel="successor-version", <https://example.com/changelog/v1>; rel="deprecation"; ' +
      'type="text/html"';
    expect(successorLink(link, base)).toBe('https://api.example.com/v2/orders/ord-1');
    expect(
      successorLink('<https://example.com/d>; rel=deprecation, </v2/x>; rel="latest-version successor-version"', base),
    ).toBe('https://api.example.com/v2/x');
  });

  it('answers null without a successor', () => {
    expect(successorLink(null, base)).toBeNull();
    expect(successorLink('</changelog>; rel="alternate"', base)).toBeNull();
  });
});

describe('sunsetDate and versionNumber', () => {
  it('parse an HTTP date and a whole number, null otherwise', () => {
    expect(sunsetDate('Fri, 01 Jan 2027 00:00:00 GMT')).toEqual(new Date('2027-01-01T00:00:00Z'));
    expect(sunsetDate('soon')).toBeNull();
    expect(sunsetDate(null)).toBeNull();
    expect(versionNumber('2')).toBe(2);
    expect(versionNumber('2.1')).toBeNull();
    expect(versionNumber(undefined)).toBeNull();
  });
});

describe('createDeprecationReporter', () => {
  const answer = (url: string, answerVersion: string): DeprecatedAnswer => ({
    method: 'GET',
    url,
    removed: false,
    answerVersion,
    requestVersion: () => null,
    sunset: null,
    link: null,
  });
  const noGuides: typeof fetch = () => Promise.reject(new TypeError('fetch failed'));

  it('remembers 1,000 operations: past that the oldest is forgotten and reported again when called again', async () => {
    const reports: DeprecationReport[] = [];
    const report = createDeprecationReporter({ fetch: noGuides, onDeprecation: (one) => reports.push(one) });
    for (let version = 1; version <= 1_001; version += 1)
      report(answer('http://api.test/orders/ord-1', String(version)));
    report(answer('http://api.test/orders/ord-2', '1001'));
    await vi.waitFor(() => expect(reports).toHaveLength(1_001));
    report(answer('http://api.test/orders/ord-3', '1'));
    await vi.waitFor(() => expect(reports).toHaveLength(1_002));
    expect(reports.at(-1)).toMatchObject({
      version: 1,
      operation: 'GET /orders/{id}',
      url: 'http://api.test/orders/ord-3',
      changes: null,
    });
  });

  it('takes a URL without a path as the root, and ignores what is not an http(s) URL', async () => {
    const reports: DeprecationReport[] = [];
    const report = createDeprecationReporter({ fetch: noGuides, onDeprecation: (one) => reports.push(one) });
    report(answer('ftp://api.test/v1/x', '1'));
    report(answer('http://api.test', '1'));
    await vi.waitFor(() => expect(reports).toHaveLength(1));
    expect(reports[0]).toMatchObject({ operation: 'GET /', url: 'http://api.test' });
  });
});
