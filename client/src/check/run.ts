import { parseCheckArgs, sinceInstant, USAGE, UsageError, type Since } from './args.js';
import { judge } from './findings.js';
import { formatResult } from './format.js';
import { CheckError, readDeprecations, readUpgradePreview, readVersions, TIMEOUT_MS } from './gateway.js';
import { formatPreview } from './preview-format.js';

export interface CheckContext {
  argv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  now: () => Date;
  fetch: typeof fetch;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** How long each request to the gateway may take, its body read whole (default 15 s). */
  timeoutMs?: number;
}

/**
 * `version-router-check`: reads the consumer's deprecation report and the versions listed (their brownout windows),
 * writes the verdict in the format asked, and answers the exit status (0 nothing due, 1 something due, 2 the check
 * could not be made); with `--preview <n>`, the consumer's upgrade preview to n instead (0 safe or review, 1 blocked,
 * 2 it could not be read). It never throws: whatever goes wrong is exit 2 and one line on stderr, never a stack trace.
 */
export async function runCheck(context: CheckContext): Promise<number> {
  try {
    return await check(context);
  } catch (err) {
    const reason =
      err instanceof CheckError ? err.message : `unexpected failure: ${String((err as Error)?.message ?? err)}`;
    context.stderr(`version-router-check: ${reason.split('\n')[0]}\n`);
    return 2;
  }
}

async function check({
  argv,
  env,
  now,
  fetch: fetchFn,
  stdout,
  stderr,
  timeoutMs = TIMEOUT_MS,
}: CheckContext): Promise<number> {
  const refuse = (reason: string): number => {
    stderr(`version-router-check: ${reason}\n`);
    return 2;
  };
  let args: ReturnType<typeof parseCheckArgs>;
  try {
    args = parseCheckArgs(argv);
  } catch (err) {
    if (err instanceof UsageError) return refuse(`${err.message} (see --help)`);
    throw err;
  }
  if (args === 'help') {
    stdout(USAGE);
    return 0;
  }
  const apiKey = env.API_KEY;
  if (apiKey === undefined || apiKey === '')
    return refuse('API_KEY is not set: give the consumer key the gateway issued');
  if (args.preview !== undefined) {
    const preview = await readUpgradePreview(fetchFn, args.url, apiKey, args.preview, timeoutMs);
    stdout(formatPreview(preview, args.format, args.url));
    return preview.verdict === 'blocked' ? 1 : 0;
  }
  // Judged on the gateway's clock, not this machine's: a gateway whose clock is moved (a rehearsal) or a machine
  // whose clock is off would otherwise be told of another day. A span back (30d) is counted from the gateway's
  // clock too: the first report, over the gateway's own 30-day window, says what that clock reads.
  const { since } = args;
  const [first, versions] = await Promise.all([
    readDeprecations(fetchFn, args.url, apiKey, 'at' in since ? new Date(since.at) : undefined, timeoutMs),
    readVersions(fetchFn, args.url, timeoutMs),
  ]);
  const at = first.as_of === undefined ? now() : new Date(first.as_of);
  const answer =
    'at' in since || (first.as_of !== undefined && isGatewayWindow(since))
      ? first
      : await readDeprecations(fetchFn, args.url, apiKey, sinceInstant(since, at), timeoutMs);
  const result = judge(answer, versions, args.url, at, args.days);
  stdout(formatResult(result, args.format));
  return result.failing === 0 ? 0 : 1;
}

/** The window a report without `?since=` covers: 30 days back on the gateway's clock. */
const isGatewayWindow = (since: Since): boolean => 'daysBack' in since && since.daysBack === 30;
