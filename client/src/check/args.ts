import { parseArgs } from 'node:util';

const FORMATS = ['text', 'markdown', 'junit'] as const;
export type Format = (typeof FORMATS)[number];

export interface CheckArgs {
  /** The gateway's public base URL, without a trailing slash. */
  url: string;
  days: number;
  format: Format;
}

export const USAGE = `Usage: version-router-check --url <gateway> [--days 90] [--format text|markdown|junit]

Reads the gateway's GET /deprecations for the consumer whose key is in the environment variable API_KEY, and fails
when an operation that consumer called is removed, browned out now, or sunsets within --days days, or when its pin
names a version the gateway no longer lists or has removed.

  --url <gateway>   the gateway's public base URL, e.g. https://api.example.com
  --days <n>        a sunset this many days away or closer fails the check (default 90)
  --format <f>      text (default), markdown (for a pull request comment) or junit (a CI test report)
  --help            this text

Exit status: 0 nothing to change within --days; 1 an operation called is removed, browned out now or sunsets
within --days, or the pin serves no request; 2 the check could not run (a bad flag, no API_KEY, a refused key, an
unreachable gateway, an answer that stalls, breaks off or is no report), with one line on stderr.
`;

/** A command line that cannot be read: its one-line reason. */
export class UsageError extends Error {}

/** The command line, or 'help'; throws a UsageError naming what is wrong. */
export function parseCheckArgs(argv: readonly string[]): CheckArgs | 'help' {
  let values: { url?: string; days?: string; format?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        url: { type: 'string' },
        days: { type: 'string' },
        format: { type: 'string' },
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
  return { url: url.href.replace(/\/+$/, ''), days: Number(days), format: format as Format };
}
