/**
 * The environment variables by which Debian's `faketime` moves a process's clock (docs/testing.md#two-years-ahead):
 * libfaketime preloaded through LD_PRELOAD, and its FAKETIME* settings. Children inherit them.
 */
const isClockVariable = (name: string): boolean => name === 'LD_PRELOAD' || name.startsWith('FAKETIME');

/** Only the clock-moving variables of this process's environment: a child given a minimal environment keeps them. */
export function movedClockEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && isClockVariable(entry[0]),
    ),
  );
}

/**
 * `env` without them: a PostgreSQL server on a moved clock misses its own statement and lock timeouts (libfaketime
 * in its processes), and the tests read no time from the server, so it runs on the machine's clock.
 */
export function realClockEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !isClockVariable(name)));
}
