import { describe, expect, it } from 'vitest';
import { addCalendarMonths, versionPolicyFileSchema } from '../../src/versions/policy-file.js';
import { designPolicyFile } from '../helpers.js';

/** The first issue's message (path and rule), as the gateway prints it at start. */
function problem(file: unknown): string {
  const result = versionPolicyFileSchema.safeParse(file);
  if (result.success) return 'valid';
  const issue = result.error.issues[0];
  return `${issue?.path.join('.')}: ${issue?.message}`;
}

const deprecated = (overrides: Record<string, unknown>) => ({
  default_version: 2,
  versions: [{ version: 1, status: 'deprecated', announced: '2026-06-01', sunset: '2027-01-01T00:00:00Z', successor: 2, ...overrides }, { version: 2, status: 'current' }],
});

describe('version policy file', () => {
  it('accepts DESIGN example and ops/versions.json as shipped', async () => {
    expect(problem(designPolicyFile)).toBe('valid');
    const { readFile } = await import('node:fs/promises');
    const shipped: unknown = JSON.parse(await readFile(new URL('../../../ops/versions.json', import.meta.url), 'utf8'));
    expect(shipped).toEqual(designPolicyFile);
  });

  it('accepts a sunset exactly 6 calendar months after the announcement and rejects one a second earlier', () => {
    expect(problem(deprecated({ announced: '2026-06-01', sunset: '2026-12-01T00:00:00Z' }))).toBe('valid');
    expect(problem(deprecated({ announced: '2026-06-01', sunset: '2026-11-30T23:59:59Z' }))).toBe(
      'versions.0.sunset: version 1: sunset 2026-11-30T23:59:59.000Z is less than 6 calendar months after announced 2026-06-01T00:00:00.000Z (earliest 2026-12-01T00:00:00.000Z)',
    );
  });

  it('counts calendar months, clamping to the end of a shorter month', () => {
    expect(new Date(addCalendarMonths(Date.parse('2026-06-01'), 6)).toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(new Date(addCalendarMonths(Date.parse('2026-08-31T10:00:00Z'), 6)).toISOString()).toBe('2027-02-28T10:00:00.000Z');
    expect(new Date(addCalendarMonths(Date.parse('2027-08-31'), 6)).toISOString()).toBe('2028-02-29T00:00:00.000Z');
  });

  it('requires sunset, announcement and successor on a deprecated version', () => {
    expect(problem(deprecated({ sunset: undefined }))).toBe('versions.0.sunset: version 1: a deprecated version needs a sunset');
    expect(problem(deprecated({ announced: undefined }))).toBe('versions.0.announced: version 1: a deprecated version needs an announced date');
    expect(problem(deprecated({ successor: undefined }))).toBe('versions.0.successor: version 1: a deprecated version needs a successor');
  });

  it('rejects a successor that does not exist or is the version itself', () => {
    expect(problem(deprecated({ successor: 3 }))).toBe('versions.0.successor: version 1: successor 3 is not a listed version');
    expect(problem(deprecated({ successor: 1 }))).toBe('versions.0.successor: version 1: cannot be its own successor');
  });

  it('rejects a policy without a current version', () => {
    expect(
      problem({
        default_version: 1,
        versions: [
          { version: 1, status: 'deprecated', announced: '2026-06-01', sunset: '2027-01-01T00:00:00Z', successor: 2 },
          { version: 2, status: 'deprecated', announced: '2026-06-01', sunset: '2027-01-01T00:00:00Z', successor: 1 },
        ],
      }),
    ).toBe('versions: no version has status "current"');
  });

  it('requires default_version and that it is listed', () => {
    expect(problem({ ...designPolicyFile, default_version: 3 })).toBe('default_version: default_version 3 is not a listed version');
    expect(problem({ versions: designPolicyFile.versions })).toBe('default_version: is required');
  });

  it('rejects a sunset on a current version (it would be removed without ever warning)', () => {
    expect(problem(deprecated({}))).toBe('valid');
    expect(problem({ default_version: 2, versions: [{ version: 2, status: 'current', sunset: '2099-01-01T00:00:00Z' }] })).toBe(
      'versions.0.sunset: version 2: a current version cannot have a sunset; mark it deprecated first',
    );
  });

  it('rejects duplicates, unknown fields, bad dates and non-integer versions', () => {
    expect(problem({ default_version: 2, versions: [{ version: 2, status: 'current' }, { version: 2, status: 'current' }] })).toBe(
      'versions.1: version 2: is listed twice',
    );
    expect(problem({ ...designPolicyFile, extra: true })).toMatch(/^: Unrecognized key/);
    expect(problem(deprecated({ sunset: '1 Jan 2027' }))).toBe(
      'versions.0.sunset: must be a date (2026-06-01) or an RFC 3339 date-time (2027-01-01T00:00:00Z)',
    );
    expect(problem({ default_version: 1.5, versions: [{ version: 2, status: 'current' }] })).toBe('default_version: must be an integer');
    expect(problem({ default_version: 2, versions: [{ version: 2, status: 'retired' }] })).toBe('versions.0.status: must be "current" or "deprecated"');
  });
});
