import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addCalendarMonths, readPolicyFile, versionPolicyFileSchema } from '../../src/versions/policy-file.js';
import { configErrorOf, designPolicyFile } from '../support/helpers.js';

/** The first issue's message (path and rule), as the gateway prints it at start. */
function problem(file: unknown): string {
  const result = versionPolicyFileSchema.safeParse(file);
  if (result.success) return 'valid';
  const issue = result.error.issues[0];
  return `${issue?.path.join('.')}: ${issue?.message}`;
}

const deprecated = (overrides: Record<string, unknown>) => ({
  default_version: 2,
  versions: [
    {
      version: 1,
      status: 'deprecated',
      announced: '2026-06-01',
      sunset: '2027-01-01T00:00:00Z',
      successor: 2,
      ...overrides,
    },
    { version: 2, status: 'current' },
  ],
});

describe('version policy file', () => {
  it(
    'accepts the example policy, and ops/versions.json as shipped: v1 deprecated in favour of v2, the default a ' +
      'current version, plus any version or resource added since',
    () => {
      expect(problem(designPolicyFile)).toBe('valid');
      const shipped = JSON.parse(readFileSync(new URL('../../../ops/versions.json', import.meta.url), 'utf8')) as {
        default_version: number;
        resources?: unknown;
        versions: { version: number; status: string; successor?: number }[];
      };
      expect(problem(shipped)).toBe('valid');
      // A new version is one more entry (docs/architecture.md "Adding a version 3"); v1's and v2's stay listed.
      // A new resource is one more template beside the defaults ("Adding a resource"), which stay listed. Its dates
      // are the shipped-dates guard's (test/static/shipped-dates.test.ts).
      expect(shipped.versions).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ version: 1, status: 'deprecated', successor: 2 }),
          expect.objectContaining({ version: 2 }),
        ]),
      );
      expect(shipped.versions.find(({ version }) => version === shipped.default_version)?.status).toBe('current');
      if (shipped.resources !== undefined)
        expect(shipped.resources).toEqual(
          expect.arrayContaining(versionPolicyFileSchema.parse(designPolicyFile).resources.map(({ path }) => path)),
        );
    },
  );

  it('accepts a sunset exactly 6 calendar months after the announcement and rejects one a second earlier', () => {
    expect(problem(deprecated({ announced: '2026-06-01', sunset: '2026-12-01T00:00:00Z' }))).toBe('valid');
    expect(problem(deprecated({ announced: '2026-06-01', sunset: '2026-11-30T23:59:59Z' }))).toBe(
      'versions.0.sunset: version 1: sunset 2026-11-30T23:59:59.000Z is less than 6 calendar months after announced ' +
        '2026-06-01T00:00:00.000Z (earliest 2026-12-01T00:00:00.000Z)',
    );
  });

  it('counts calendar months, clamping to the end of a shorter month', () => {
    expect(new Date(addCalendarMonths(Date.parse('2026-06-01'), 6)).toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(new Date(addCalendarMonths(Date.parse('2026-08-31T10:00:00Z'), 6)).toISOString()).toBe(
      '2027-02-28T10:00:00.000Z',
    );
    expect(new Date(addCalendarMonths(Date.parse('2027-08-31'), 6)).toISOString()).toBe('2028-02-29T00:00:00.000Z');
  });

  it('requires sunset, announcement and successor on a deprecated version', () => {
    expect(problem(deprecated({ sunset: undefined }))).toBe(
      'versions.0.sunset: version 1: a deprecated version needs a sunset',
    );
    expect(problem(deprecated({ announced: undefined }))).toBe(
      'versions.0.announced: version 1: a deprecated version needs an announced date',
    );
    expect(problem(deprecated({ successor: undefined }))).toBe(
      'versions.0.successor: version 1: a deprecated version needs a successor',
    );
  });

  it('rejects a successor that does not exist or is the version itself', () => {
    expect(problem(deprecated({ successor: 3 }))).toBe(
      'versions.0.successor: version 1: successor 3 is not a listed version',
    );
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
    expect(problem({ ...designPolicyFile, default_version: 3 })).toBe(
      'default_version: default_version 3 is not a listed version',
    );
    expect(problem({ versions: designPolicyFile.versions })).toBe('default_version: is required');
  });

  it('rejects a sunset on a current version (it would be removed without ever warning)', () => {
    expect(problem(deprecated({}))).toBe('valid');
    expect(
      problem({ default_version: 2, versions: [{ version: 2, status: 'current', sunset: '2099-01-01T00:00:00Z' }] }),
    ).toBe('versions.0.sunset: version 2: a current version cannot have a sunset; mark it deprecated first');
  });

  it('rejects duplicates, unknown fields, bad dates and non-integer versions', () => {
    expect(
      problem({
        default_version: 2,
        versions: [
          { version: 2, status: 'current' },
          { version: 2, status: 'current' },
        ],
      }),
    ).toBe('versions.1: version 2: is listed twice');
    expect(problem({ ...designPolicyFile, extra: true })).toMatch(/^: Unrecognized key/);
    expect(problem(deprecated({ sunset: '1 Jan 2027' }))).toBe(
      'versions.0.sunset: must be a date (2026-06-01) or an RFC 3339 date-time (2027-01-01T00:00:00Z)',
    );
    expect(problem({ default_version: 1.5, versions: [{ version: 2, status: 'current' }] })).toBe(
      'default_version: must be an integer',
    );
    expect(problem({ default_version: 2, versions: [{ version: 2, status: 'retired' }] })).toBe(
      'versions.0.status: must be "current" or "deprecated"',
    );
  });

  it(
    'accepts the lifecycle keys and defaults resources to /orders/:id and /openapi.json, the header form to ' +
      '"true"',
    () => {
      const parsed = versionPolicyFileSchema.parse(designPolicyFile);
      expect(parsed.resources).toEqual([
        { path: '/orders/:id', versions: undefined },
        { path: '/openapi.json', versions: undefined },
      ]);
      expect(parsed.deprecation_header).toBe('true');
      expect(
        problem({
          ...deprecated({
            deprecation_link: 'https://example.com/v1',
            sunset_link: 'https://example.com/policy',
            brownouts: [{ start: '2026-12-01T10:00:00Z', end: '2026-12-02T10:00:00Z' }],
          }),
          deprecation_header: 'date',
          resources: ['/orders/:id', '/orders', '/invoices/:invoice_id/lines'],
        }),
      ).toBe('valid');
    },
  );

  it('refuses a bad deprecation_header and links that are not absolute https URLs', () => {
    expect(problem({ ...designPolicyFile, deprecation_header: 'yes' })).toBe(
      'deprecation_header: must be "true" or "date"',
    );
    for (const link of ['http://example.com/v1', '/changelog', 'example.com']) {
      expect(problem(deprecated({ deprecation_link: link }))).toBe(
        'versions.0.deprecation_link: must be an absolute https:// URL',
      );
      expect(problem(deprecated({ sunset_link: link }))).toBe(
        'versions.0.sunset_link: must be an absolute https:// URL',
      );
    }
    expect(
      problem({
        default_version: 2,
        versions: [{ version: 2, status: 'current', deprecation_link: 'https://example.com' }],
      }),
    ).toBe('versions.0.deprecation_link: version 2: a current version has no deprecation_link');
  });

  it.each([
    [
      [{ start: '2026-05-31T23:00:00Z', end: '2026-06-01T01:00:00Z' }],
      'versions.0.brownouts.0: version 1: brownout 2026-05-31T23:00:00.000Z..2026-06-01T01:00:00.000Z is outside ' +
        'the deprecation period [2026-06-01T00:00:00.000Z, 2027-01-01T00:00:00.000Z)',
    ],
    [
      [{ start: '2026-12-31T23:00:00Z', end: '2027-01-01T00:00:01Z' }],
      'versions.0.brownouts.0: version 1: brownout 2026-12-31T23:00:00.000Z..2027-01-01T00:00:01.000Z is outside ' +
        'the deprecation period [2026-06-01T00:00:00.000Z, 2027-01-01T00:00:00.000Z)',
    ],
    [
      [{ start: '2026-12-01T10:00:00Z', end: '2026-12-01T10:00:00Z' }],
      'versions.0.brownouts.0.end: version 1: brownout 2026-12-01T10:00:00.000Z..2026-12-01T10:00:00.000Z: end must ' +
        'be after start',
    ],
    [
      [{ start: '2026-12-01T10:00:00Z', end: '2026-12-02T10:00:01Z' }],
      'versions.0.brownouts.0.end: version 1: brownout 2026-12-01T10:00:00.000Z..2026-12-02T10:00:01.000Z is longer ' +
        'than 24 hours',
    ],
    [
      [
        { start: '2026-12-01T10:00:00Z', end: '2026-12-01T12:00:00Z' },
        { start: '2026-12-01T11:59:59Z', end: '2026-12-01T13:00:00Z' },
      ],
      'versions.0.brownouts.1: version 1: brownout 2026-12-01T11:59:59.000Z..2026-12-01T13:00:00.000Z overlaps ' +
        'brownouts.0',
    ],
    [
      [{ start: '2026-12-01T10:00:00Z' }],
      'versions.0.brownouts.0.end: must be a date (2026-06-01) or an RFC 3339 date-time (2027-01-01T00:00:00Z)',
    ],
  ])('refuses brownouts %j', (brownouts, message) => {
    expect(problem(deprecated({ brownouts }))).toBe(message);
  });

  it('accepts brownouts that touch, one ending where the next starts, and one ending at the sunset', () => {
    const touching = [
      { start: '2026-12-01T10:00:00Z', end: '2026-12-01T12:00:00Z' },
      { start: '2026-12-01T12:00:00Z', end: '2026-12-01T13:00:00Z' },
      { start: '2026-12-31T00:00:00Z', end: '2027-01-01T00:00:00Z' },
    ];
    expect(problem(deprecated({ brownouts: touching }))).toBe('valid');
    expect(problem({ default_version: 2, versions: [{ version: 2, status: 'current', brownouts: [] }] })).toBe(
      'versions.0.brownouts: version 2: a current version has no brownouts; mark it deprecated first',
    );
  });

  it.each([
    ['orders/:id', 'resources.0: must be a path starting with "/"'],
    ['/orders/*', 'resources.0: segment "*" must be URL-safe text (letters, digits, . _ ~ -) or a :parameter'],
    ['/orders//x', 'resources.0: segment "" must be URL-safe text (letters, digits, . _ ~ -) or a :parameter'],
    ['/api/users', 'resources.0: "/api/users" collides with /api/users'],
    ['/api/users/:id', 'resources.0: "/api/users/:id" collides with /api/users'],
    ['/:a/:b', 'resources.0: "/:a/:b" collides with /api/users'],
    ['/versions', 'resources.0: "/versions" collides with /versions'],
    ['/:anything', 'resources.0: "/:anything" collides with /versions'],
  ])('refuses the resource template %j', (template, message) => {
    expect(problem({ ...designPolicyFile, resources: [template] })).toBe(message);
  });

  it.each([
    [['/orders/:id', '/orders/:key'], 'resources.1: "/orders/:key" collides with resource "/orders/:id"'],
    [['/orders/:id', '/orders/latest'], 'resources.1: "/orders/latest" collides with resource "/orders/:id"'],
    [['/orders', '/v2/orders'], 'resources.1: "/v2/orders" collides with resource "/orders"'],
    [['/orders/:id', '/orders/:id'], 'resources.1: "/orders/:id" collides with resource "/orders/:id"'],
  ])('refuses resources that one path could reach both of: %j', (resources, message) => {
    expect(problem({ ...designPolicyFile, resources })).toBe(message);
  });

  it(
    'accepts consumer_key on any version and closed_to_new within [announced, sunset) of a version that requires ' +
      'keys',
    () => {
      expect(
        problem({ default_version: 2, versions: [{ version: 2, status: 'current', consumer_key: 'required' }] }),
      ).toBe('valid');
      expect(problem(deprecated({ consumer_key: 'optional' }))).toBe('valid');
      expect(problem(deprecated({ consumer_key: 'required', closed_to_new: '2026-06-01' }))).toBe('valid');
      expect(problem(deprecated({ consumer_key: 'required', closed_to_new: '2026-12-31T23:59:59Z' }))).toBe('valid');
      expect(problem(deprecated({ consumer_key: { required_from: '2026-09-01' }, closed_to_new: '2026-09-01' }))).toBe(
        'valid',
      );
    },
  );

  it.each([
    [
      { consumer_key: 'always' },
      'versions.0.consumer_key: must be "optional", "required" or {"required_from": <date>}',
    ],
    [
      { consumer_key: { required_from: 'soon' } },
      'versions.0.consumer_key: must be "optional", "required" or {"required_from": <date>}',
    ],
    [
      { consumer_key: { required_from: '2026-09-02' }, closed_to_new: '2026-09-01' },
      'versions.0.closed_to_new: version 1: closed_to_new needs "consumer_key": "required" from then on (a request ' +
        'without a key cannot be told from a new consumer)',
    ],
    [
      { closed_to_new: '2026-09-01' },
      'versions.0.closed_to_new: version 1: closed_to_new needs "consumer_key": "required" from then on (a request ' +
        'without a key cannot be told from a new consumer)',
    ],
    [
      { consumer_key: 'optional', closed_to_new: '2026-09-01' },
      'versions.0.closed_to_new: version 1: closed_to_new needs "consumer_key": "required" from then on (a request ' +
        'without a key cannot be told from a new consumer)',
    ],
    [
      { consumer_key: 'required', closed_to_new: '2026-05-31' },
      'versions.0.closed_to_new: version 1: closed_to_new 2026-05-31T00:00:00.000Z is outside the deprecation ' +
        'period [2026-06-01T00:00:00.000Z, 2027-01-01T00:00:00.000Z)',
    ],
    [
      { consumer_key: 'required', closed_to_new: '2027-01-01T00:00:00Z' },
      'versions.0.closed_to_new: version 1: closed_to_new 2027-01-01T00:00:00.000Z is outside the deprecation ' +
        'period [2026-06-01T00:00:00.000Z, 2027-01-01T00:00:00.000Z)',
    ],
    [
      { consumer_key: 'required', closed_to_new: 'soon' },
      'versions.0.closed_to_new: must be a date (2026-06-01) or an RFC 3339 date-time (2027-01-01T00:00:00Z)',
    ],
  ])('refuses %j on the deprecated version', (overrides, expected) => {
    expect(problem(deprecated(overrides))).toBe(expected);
  });

  it('refuses closed_to_new on a current version', () => {
    expect(
      problem({
        default_version: 2,
        versions: [{ version: 2, status: 'current', consumer_key: 'required', closed_to_new: '2026-09-01' }],
      }),
    ).toBe(
      'versions.0.closed_to_new: version 2: a current version is not closed to new consumers; mark it deprecated first',
    );
  });

  it('refuses an empty resource list', () => {
    expect(problem({ ...designPolicyFile, resources: [] })).toBe('resources: must list at least one resource');
  });
});

describe('readPolicyFile (API_VERSIONS_FILE, at start and on a reload)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'policy-file-'));
  function policyFile(name: string, content: unknown): string {
    const path = join(dir, name);
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
    return path;
  }
  const errorOf = (path: string): string => configErrorOf(() => readPolicyFile(path));

  it('reads the shipped ops/versions.json (relative to the working directory, the repository root)', () => {
    const { file, sha256 } = readPolicyFile('ops/versions.json');
    expect(sha256).toBe(createHash('sha256').update(readFileSync('ops/versions.json')).digest('hex').slice(0, 12));
    const listed = (
      JSON.parse(readFileSync('ops/versions.json', 'utf8')) as { versions: { version: number }[] }
    ).versions.map(({ version }) => version);
    const shipped = JSON.parse(readFileSync('ops/versions.json', 'utf8')) as {
      default_version: number;
      versions: { version: number; sunset?: string }[];
    };
    expect(file.default_version).toBe(shipped.default_version);
    expect(file.versions.map(({ version }) => version)).toEqual(listed);
    expect(listed).toEqual(expect.arrayContaining([1, 2]));
    expect(file.versions.find(({ version }) => version === 1)?.sunset).toBe(
      Date.parse(shipped.versions.find(({ version }) => version === 1)?.sunset ?? ''),
    );
  });

  it('names the variable, the file and the problem when it is missing, not JSON, or breaks a lifecycle rule', () => {
    const missing = join(dir, 'absent.json');
    expect(errorOf(missing)).toBe(`API_VERSIONS_FILE: cannot read ${missing} (ENOENT)`);
    const broken = policyFile('broken.json', '{ "default_version": ');
    expect(errorOf(broken)).toMatch(new RegExp(`^API_VERSIONS_FILE: ${broken} is not valid JSON`));
    const early = policyFile('early.json', {
      ...designPolicyFile,
      versions: [
        { version: 1, status: 'deprecated', announced: '2026-06-01', sunset: '2026-09-01T00:00:00Z', successor: 2 },
        { version: 2, status: 'current' },
      ],
    });
    expect(errorOf(early)).toBe(
      `API_VERSIONS_FILE: ${early} is invalid at versions.0.sunset: version 1: sunset 2026-09-01T00:00:00.000Z is ` +
        `less than 6 calendar months after announced 2026-06-01T00:00:00.000Z (earliest 2026-12-01T00:00:00.000Z)`,
    );
    const longBrownout = policyFile('long-brownout.json', {
      ...designPolicyFile,
      versions: [
        {
          ...designPolicyFile.versions[0],
          brownouts: [{ start: '2026-12-01T00:00:00Z', end: '2026-12-02T00:00:01Z' }],
        },
        designPolicyFile.versions[1],
      ],
    });
    expect(errorOf(longBrownout)).toBe(
      `API_VERSIONS_FILE: ${longBrownout} is invalid at versions.0.brownouts.0.end: version 1: brownout ` +
        `2026-12-01T00:00:00.000Z..2026-12-02T00:00:01.000Z is longer than 24 hours`,
    );
    const noDefault = policyFile('no-default.json', { ...designPolicyFile, default_version: 7 });
    expect(errorOf(noDefault)).toBe(
      `API_VERSIONS_FILE: ${noDefault} is invalid at default_version: default_version 7 is not a listed version`,
    );
  });

  it(
    'defaults the version schemes to path and header, the query parameter to "version" and the vendor to ' +
      '"version-router"',
    () => {
      expect(versionPolicyFileSchema.parse(designPolicyFile)).toMatchObject({
        schemes: ['path', 'header'],
        query_parameter: 'version',
        media_type_vendor: 'version-router',
      });
      const every = {
        ...designPolicyFile,
        schemes: ['media_type', 'query', 'header', 'path'],
        query_parameter: 'api-version',
        media_type_vendor: 'acme.orders',
      };
      expect(problem(every)).toBe('valid');
    },
  );

  it.each([
    [{ schemes: ['path', 'cookie'] }, 'schemes.1: must be one of "path", "header", "query", "media_type"'],
    [{ schemes: ['Path'] }, 'schemes.0: must be one of "path", "header", "query", "media_type"'],
    [{ schemes: [] }, 'schemes: must enable at least one scheme'],
    [{ schemes: 'query' }, 'schemes: Invalid input: expected array, received string'],
    [{ schemes: ['query', 'path', 'query'] }, 'schemes.2: "query" is listed twice'],
    [{ query_parameter: '' }, 'query_parameter: must be a query parameter name of letters, digits, . _ ~ -'],
    [{ query_parameter: 'v=1' }, 'query_parameter: must be a query parameter name of letters, digits, . _ ~ -'],
    [
      { media_type_vendor: 'acme+json' },
      'media_type_vendor: must be a media type vendor name of letters, digits, . and -',
    ],
    [{ media_type_vendor: '.acme' }, 'media_type_vendor: must be a media type vendor name of letters, digits, . and -'],
  ])('refuses the scheme settings %j', (settings, message) => {
    expect(problem({ ...designPolicyFile, ...settings })).toBe(message);
  });

  it('names the file and the JSON path of an unknown scheme when the gateway starts', () => {
    const unknown = policyFile('unknown-scheme.json', { ...designPolicyFile, schemes: ['path', 'header', 'accept'] });
    expect(errorOf(unknown)).toBe(
      `API_VERSIONS_FILE: ${unknown} is invalid at schemes.2: must be one of "path", "header", "query", "media_type"`,
    );
  });
});

describe('default_version_changes (scheduled moves of the default)', () => {
  /** The shipped v1 and v2 (default 1), plus v3 current and v4 deprecated from 2026-09-01, with these moves. */
  const moves = (...changes: unknown[]) => ({
    default_version: 1,
    default_version_changes: changes,
    versions: [
      ...designPolicyFile.versions,
      { version: 3, status: 'current' },
      {
        version: 4,
        status: 'deprecated',
        announced: '2026-09-01',
        sunset: '2027-03-01T00:00:00Z',
        successor: 3,
      },
    ],
  });

  it('accepts moves in order, each to a current version, announced before it applies', () => {
    expect(
      problem(
        moves(
          { at: '2026-12-15T00:00:00Z', to: 2, announced: '2026-11-01' },
          { at: '2027-06-01', to: 3, announced: '2027-01-01' },
        ),
      ),
    ).toBe('valid');
    expect(
      problem({ ...designPolicyFile, default_version_changes: [{ at: '2026-12-15', to: 2, announced: '2026-12-01' }] }),
    ).toBe('valid');
  });

  it('refuses a move to a version not listed, already the default, or deprecated then, naming the JSON path', () => {
    expect(problem(moves({ at: '2026-12-15', to: 7, announced: '2026-11-01' }))).toBe(
      'default_version_changes.0.to: default move to v7 at 2026-12-15T00:00:00.000Z: version 7 is not a listed version',
    );
    expect(problem(moves({ at: '2026-12-15', to: 1, announced: '2026-11-01' }))).toBe(
      'default_version_changes.0.to: default move to v1 at 2026-12-15T00:00:00.000Z: v1 is already the default then',
    );
    expect(problem(moves({ at: '2026-12-15', to: 4, announced: '2026-11-01' }))).toBe(
      'default_version_changes.0.to: default move to v4 at 2026-12-15T00:00:00.000Z: v4 is deprecated then ' +
        '(announced 2026-09-01T00:00:00.000Z); move the default to a current version',
    );
    // Before v4's announcement it is current: a move to it then is a move to a current version.
    expect(problem(moves({ at: '2026-08-01', to: 4, announced: '2026-07-01' }))).toBe('valid');
  });

  it('refuses a move out of order, or not announced before it applies; unknown keys and missing ones', () => {
    expect(
      problem(
        moves(
          { at: '2027-01-15', to: 2, announced: '2026-11-01' },
          { at: '2026-12-15', to: 3, announced: '2026-11-01' },
        ),
      ),
    ).toBe(
      'default_version_changes.1.at: default move to v3 at 2026-12-15T00:00:00.000Z is not after the move before it',
    );
    expect(problem(moves({ at: '2026-12-15', to: 2, announced: '2026-12-15' }))).toBe(
      'default_version_changes.0.announced: default move to v2 at 2026-12-15T00:00:00.000Z must be announced before ' +
        'it applies, not 2026-12-15T00:00:00.000Z',
    );
    expect(problem(moves({ at: '2026-12-15', to: 2 }))).toBe(
      'default_version_changes.0.announced: must be a date (2026-06-01) or an RFC 3339 date-time (2027-01-01T00:00:00Z)',
    );
    expect(problem(moves({ at: '2026-12-15', to: 2, announced: '2026-11-01', why: 'x' }))).toMatch(
      /^default_version_changes\.0: Unrecognized key/,
    );
  });
});
