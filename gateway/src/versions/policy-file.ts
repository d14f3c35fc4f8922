import { z } from 'zod';

/** SPEC lifecycle step 1: the announcement comes at least this many calendar months before removal. */
export const MIN_NOTICE_MONTHS = 6;

const versionNumber = z
  .number({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a version number') })
  .int('must be an integer')
  .min(1, 'must be 1 or higher');

/** A calendar date (midnight UTC) or an RFC 3339 date-time with offset, kept as epoch milliseconds. */
const instant = z
  .union([z.iso.date(), z.iso.datetime({ offset: true })], {
    error: 'must be a date (2026-06-01) or an RFC 3339 date-time (2027-01-01T00:00:00Z)',
  })
  .transform((text) => Date.parse(text));

const versionEntry = z.strictObject({
  version: versionNumber,
  status: z.enum(['current', 'deprecated'], { error: 'must be "current" or "deprecated"' }),
  announced: instant.optional(),
  sunset: instant.optional(),
  successor: versionNumber.optional(),
});

export type VersionEntry = z.output<typeof versionEntry>;
export type PolicyFile = z.output<typeof versionPolicyFileSchema>;

/** Adds calendar months in UTC, clamping to the month's last day (2026-08-31 + 6 → 2027-02-28). */
export function addCalendarMonths(epochMs: number, months: number): number {
  const date = new Date(epochMs);
  const day = date.getUTCDate();
  date.setUTCDate(1);
  date.setUTCMonth(date.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate();
  date.setUTCDate(Math.min(day, lastDay));
  return date.getTime();
}

const iso = (epochMs: number): string => new Date(epochMs).toISOString();

/**
 * The file behind API_VERSIONS_FILE (DESIGN "Version policy"). Beyond its shape, every SPEC lifecycle
 * rule is checked here so the gateway refuses to start on a policy it could not honour; each issue's
 * path and message name the broken rule.
 */
export const versionPolicyFileSchema = z
  .strictObject({
    default_version: versionNumber,
    versions: z.array(versionEntry).min(1, 'must list at least one version'),
  })
  .superRefine((file, ctx) => {
    const listed = new Set<number>();
    file.versions.forEach((entry, index) => {
      const at = (field?: string): (string | number)[] => (field === undefined ? ['versions', index] : ['versions', index, field]);
      const fail = (message: string, field?: string): void => {
        ctx.addIssue({ code: 'custom', path: at(field), message: `version ${entry.version}: ${message}` });
      };
      if (listed.has(entry.version)) fail('is listed twice');
      listed.add(entry.version);

      if (entry.status === 'current') {
        // A sunset without the deprecated status would remove a version that never sent the Warn headers.
        if (entry.sunset !== undefined) fail('a current version cannot have a sunset; mark it deprecated first', 'sunset');
        if (entry.announced !== undefined) fail('a current version has no deprecation announcement', 'announced');
        if (entry.successor !== undefined) fail('a current version has no successor', 'successor');
        return;
      }
      if (entry.announced === undefined) fail('a deprecated version needs an announced date', 'announced');
      if (entry.sunset === undefined) fail('a deprecated version needs a sunset', 'sunset');
      if (entry.successor === undefined) fail('a deprecated version needs a successor', 'successor');
      else if (entry.successor === entry.version) fail('cannot be its own successor', 'successor');
      if (entry.announced !== undefined && entry.sunset !== undefined) {
        const earliest = addCalendarMonths(entry.announced, MIN_NOTICE_MONTHS);
        if (entry.sunset < earliest) {
          fail(
            `sunset ${iso(entry.sunset)} is less than ${MIN_NOTICE_MONTHS} calendar months after announced ${iso(entry.announced)} (earliest ${iso(earliest)})`,
            'sunset',
          );
        }
      }
    });
    file.versions.forEach((entry, index) => {
      if (entry.successor !== undefined && entry.successor !== entry.version && !listed.has(entry.successor)) {
        ctx.addIssue({
          code: 'custom',
          path: ['versions', index, 'successor'],
          message: `version ${entry.version}: successor ${entry.successor} is not a listed version`,
        });
      }
    });
    if (!file.versions.some((entry) => entry.status === 'current')) {
      ctx.addIssue({ code: 'custom', path: ['versions'], message: 'no version has status "current"' });
    }
    if (!listed.has(file.default_version)) {
      ctx.addIssue({ code: 'custom', path: ['default_version'], message: `default_version ${file.default_version} is not a listed version` });
    }
  });
