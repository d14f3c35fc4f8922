import { parseArgs } from 'node:util';

const FORMATS = ['text', 'markdown', 'junit'] as const;
export type Format = (typeof FORMATS)[number];

/** From when the consumer's calls count: a span back from now, or an instant. */
export type Since = { daysBack: number } | { hoursBack: number } | { at: number };

export interface CheckArgs {
  /** The gateway's public base URL, without a trailing slash. */
  url: string;
  days: number;
  since: Since;
  format: Format;
  /** `--preview <n>`: the upgrade preview to version n instead of the deprecation check; undefined without it. */
  preview: number | undefined;
}

export const USAGE = `Usage: version-router-check --url <gateway> [--days 90] [--since 30d] [--format text|markdown|junit]
       version-router-check --url <gateway> --preview <version> [--format text|markdown|junit]

Reads the gateway's GET /deprecations for the consumer whose key is in the environment variable API_KEY, and fails
when an operation that consumer still calls is removed, browned out now, or sunsets or is browned out within --days
days, or when its pin names a version the gateway no longer lists, has removed, or that sunsets or is browned out
within --days days. A version the consumer moved off (its pin is elsewhere, no call since) is done.

  --url <gateway>   the gateway's public base URL, e.g. https://api.example.com
  --days <n>        a sunset or brownout this many days away or closer fails the check (default 90)
  --since <when>    count the calls made since then: 30d (default), 12h, a date 2026-11-01 or a date-time
                    2026-11-01T09:00:00Z; the gateway counts from the consumer's last pin move when that is later
  --format <f>      text (default), markdown (for a pull request comment) or junit (a CI test report)
  --preview <n>     instead: what moving the consumer's pin to version n would change for the calls it made in the
                    last 30 days (GET /consumer/upgrade-preview): safe, review (changes touch them) or blocked (it
                    calls an operation version n does not have)
  --help            this text

Exit status: 0 nothing to change within --days; 1 an operation called is removed, browned out now, or sunsets or is
browned out within --days, or the pin serves no request or will not within --days; 2 the check could not run (a bad
flag, no API_KEY, a refused key, an unreachable gateway, an answer that stalls, breaks off or is no report), with one
line on stderr. With --preview: 0 safe or review; 1 blocked; 2 as above (also a version it cannot move to).
`;

const SINCE_SPAN = /^([0-9]{1,5})([dh])$/;
const SINCE_INSTANT = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2}))?$/;

/** `--since`: `<n>d`, `<n>h`, a date or an RFC 3339 date-time. */
function parseSince(text: string): Since {
  const span = SINCE_SPAN.exec(text);
  if (span !== null) return span[2] === 'd' ? { daysBack: Number(span[1]) } : { hoursBack: Number(span[1]) };
  const at = SINCE_INSTANT.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(at))
    throw new UsageError(
      `--since must be a span back (30d, 12h), a date (2026-11-01) or an RFC 3339 date-time (2026-11-01T09:00:00Z), ` +
        `not "${text}"`,
    );
  return { at };
}

/** The instant `since` names at `now`. */
export function sinceInstant(since: Since, now: Date): Date {
  if ('at' in since) return new Date(since.at);
  const back = 'daysBack' in since ? since.daysBack * 86_400_000 : since.hoursBack * 3_600_000;
  return new Date(now.getTime() - back);
}

/** A command line that cannot be read: its one-line reason. */
export class UsageError extends Error {}

/** The command line, or 'help'; throws a UsageError naming what is wrong. */
export function parseCheckArgs(argv: readonly string[]): CheckArgs | 'help' {
  let values: { url?: string; days?: string; since?: string; format?: string; preview?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        url: { type: 'string' },
        days: { type: 'string' },
        since: { type: 'string' },
        format: { type: 'string' },
        preview: { type: 'string' },
        help: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new UsageError((err as Error).message.split('\n')[0]);
  }
  if (values.help === true) return 'help';
  if (values.url === undefined) throw new UsageError('--url <gateway> is required');
  let url: URL;
  try {
    url = new URL(values.url);
  } catch {
    throw new UsageError(`--url must be an http:// or https:// URL, not "${values.url}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--url must be an http:// or https:// URL, not "${values.url}"`);
  const days = values.days ?? '90';
  if (!/^[0-9]{1,5}$/.test(days)) throw new UsageError(`--days must be a whole number of days, not "${days}"`);
  const format = values.format ?? 'text';
  if (!(FORMATS as readonly string[]).includes(format))
    throw new UsageError(`--format must be one of ${FORMATS.join(', ')}, not "${format}"`);
  const since = parseSince(values.since ?? '30d');
  const preview = values.preview;
  if (preview !== undefined && !/^[1-9][0-9]{0,8}$/.test(preview))
    throw new UsageError(`--preview must be a version number (2), not "${preview}"`);
  return {
    url: url.href.replace(/\/+$/, ''),
    days: Number(days),
    since,
    format: format as Format,
    preview: preview === undefined ? undefined : Number(preview),
  };
}
