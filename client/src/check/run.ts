import { parseCheckArgs, USAGE, UsageError } from './args.js';
import { judge } from './findings.js';
import { formatResult } from './format.js';
import { CheckError, readBrownouts, readDeprecations } from './gateway.js';

export interface CheckContext {
  argv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  now: () => Date;
  fetch: typeof fetch;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/**
 * `version-router-check`: reads the consumer's deprecation report and the brownout windows, writes the verdict in
 * the format asked, and answers the exit status (0 nothing due, 1 something due, 2 the check could not be made).
 */
export async function runCheck({ argv, env, now, fetch: fetchFn, stdout, stderr }: CheckContext): Promise<number> {
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
  try {
    const [answer, brownouts] = await Promise.all([
      readDeprecations(fetchFn, args.url, apiKey),
      readBrownouts(fetchFn, args.url),
    ]);
    const result = judge(answer, brownouts, args.url, now(), args.days);
    stdout(formatResult(result, args.format));
    return result.failing === 0 ? 0 : 1;
  } catch (err) {
    if (err instanceof CheckError) return refuse(err.message);
    throw err;
  }
}
