import type { BreakingChange, Brownout, DeprecationsAnswer, ListedVersion } from './gateway.js';

/** What is true of an operation now: all but `deprecated` fail the check. */
export type Status = 'removed' | 'browned-out' | 'brownout-soon' | 'sunset-soon' | 'deprecated';

export interface Finding {
  /** The call as the consumer made it: `GET /v1/orders/{id}`, `GET /orders/{id} with API-Version: 1`. */
  call: string;
  /** What to send for the successor in the same form: `GET /v2/orders/{id}`; null when unknown. */
  instead: string | null;
  version: number;
  requests: number;
  status: Status;
  sunset: Date;
  /** Days from now to the sunset rounded up, as the gateway counts them (docs/versions.md#days-left). */
  daysLeft: number;
  /** The end of the brownout window in force now, when browned out. */
  brownoutEnd: Date | null;
  /** The next brownout window when it starts within --days (`brownout-soon`), and the days until it starts. */
  nextBrownout: { start: Date; end: Date; daysLeft: number } | null;
  successor: number | null;
  /** The migration guide, an absolute URL. */
  guide: string;
  /** The guide's breaking changes that touch the operation: `removed field user_id`. */
  breaking: string[];
}

/**
 * The consumer's pin when it names a version no request can be served by, or soon none: one the policy no longer
 * lists (`unlisted`: a request that names no version is answered 406), one removed (410), one browned out now, or one
 * that sunsets or is browned out within --days. Each fails the check.
 */
export interface PinProblem {
  version: number;
  problem: 'unlisted' | 'removed' | 'browned-out' | 'brownout-soon' | 'sunset-soon';
  /** When it was or will be removed; null when unlisted. */
  removedOn: Date | null;
  /** The brownout window in force now, or the next one within --days. */
  brownout: { start: Date; end: Date } | null;
  /** The versions one may pin now (listed, not removed). */
  pinnable: number[];
}

/** A version the consumer is done with: its pin is elsewhere and it made no call of it since the report counts. */
export interface DoneVersion {
  version: number;
  successor: number | null;
}

export interface CheckResult {
  consumer: string;
  url: string;
  now: Date;
  days: number;
  /** From when the gateway counted the calls (the `--since` asked, or the last pin move); null from older gateways. */
  since: Date | null;
  findings: Finding[];
  /** The versions it is done with, ascending. */
  done: DoneVersion[];
  /** The pin, when it names a version nothing can be served by; null when it is fine, or unknown. */
  pin: PinProblem | null;
  /** How many findings fail the check, the pin counted as one. */
  failing: number;
}

const DAY_MS = 86_400_000;

/**
 * A breaking change in words, its fields by name: `user_id is now customer_id`, `total is now total_cents (x100)` for
 * what the policy declares renamed or converted (as the notices say it), else `removed field user_id`.
 */
export function changeText({ change, kind, name, to, factor }: BreakingChange): string {
  if (change === 'renamed' && to !== undefined) return `${name} is now ${to}`;
  if (change === 'converted' && to !== undefined) return `${name} is now ${to} (x${factor ?? 1})`;
  return [change, kind, name].filter((part) => part !== '').join(' ');
}

export const fails = (finding: Finding): boolean => finding.status !== 'deprecated';

/** A version's brownout windows: the one in force at `nowMs`, and the next one that starts within `days`. */
function brownoutsOf(
  windows: readonly Brownout[],
  nowMs: number,
  days: number,
): { now: Brownout | undefined; soon: Brownout | undefined } {
  const now = windows.find((window) => Date.parse(window.start) <= nowMs && nowMs < Date.parse(window.end));
  const soon = windows
    .filter((window) => Date.parse(window.start) > nowMs && Date.parse(window.start) - nowMs <= days * DAY_MS)
    .sort((a, b) => Date.parse(a.start) - Date.parse(b.start))[0];
  return { now, soon };
}

const asDates = (window: Brownout | undefined): { start: Date; end: Date } | null =>
  window === undefined ? null : { start: new Date(window.start), end: new Date(window.end) };

/** A deprecated or removed version's state at `nowMs` against `--days`, most urgent first. */
function statusOf(
  phase: string,
  sunsetMs: number,
  brownouts: { now: Brownout | undefined; soon: Brownout | undefined },
  nowMs: number,
  days: number,
): Status {
  if (phase === 'removed') return 'removed';
  if (brownouts.now !== undefined) return 'browned-out';
  if (brownouts.soon !== undefined) return 'brownout-soon';
  return sunsetMs - nowMs <= days * DAY_MS ? 'sunset-soon' : 'deprecated';
}

/** The pin's problem, if any, from the versions `GET /versions` lists, judged as its operations are. */
function pinProblem(
  pin: number | null | undefined,
  listed: ReadonlyMap<number, ListedVersion>,
  nowMs: number,
  days: number,
): PinProblem | null {
  if (pin === null || pin === undefined) return null;
  // What may be pinned instead: listed and not removed, the failing pin itself aside.
  const pinnable = [...listed.values()]
    .filter(({ phase, version }) => phase !== 'removed' && version !== pin)
    .map(({ version }) => version);
  const entry = listed.get(pin);
  if (entry === undefined) return { version: pin, problem: 'unlisted', removedOn: null, brownout: null, pinnable };
  if (entry.phase === 'current' || entry.sunset === null) return null;
  const brownouts = brownoutsOf(entry.brownouts, nowMs, days);
  const status = statusOf(entry.phase, Date.parse(entry.sunset), brownouts, nowMs, days);
  if (status === 'deprecated') return null;
  return {
    version: pin,
    problem: status,
    removedOn: new Date(entry.sunset),
    brownout: asDates(
      status === 'browned-out' ? brownouts.now : status === 'brownout-soon' ? brownouts.soon : undefined,
    ),
    pinnable,
  };
}

/**
 * Every operation of the report, judged at `now` against `--days`: most urgent first, then by version and name; and
 * the consumer's pin against the versions listed.
 */
export function judge(
  answer: DeprecationsAnswer,
  listed: ReadonlyMap<number, ListedVersion>,
  url: string,
  now: Date,
  days: number,
): CheckResult {
  const nowMs = now.getTime();
  const findings: Finding[] = [];
  const done: DoneVersion[] = [];
  for (const version of answer.versions) {
    if (version.done === true) {
      done.push({ version: version.version, successor: version.successor });
      continue;
    }
    const sunsetMs = Date.parse(version.sunset);
    const brownouts = brownoutsOf(listed.get(version.version)?.brownouts ?? [], nowMs, days);
    const status = statusOf(version.phase, sunsetMs, brownouts, nowMs, days);
    for (const operation of version.operations) {
      findings.push({
        call: operation.call ?? operation.operation,
        instead: operation.instead ?? null,
        version: version.version,
        requests: operation.requests,
        status,
        sunset: new Date(sunsetMs),
        daysLeft: Math.ceil((sunsetMs - nowMs) / DAY_MS),
        brownoutEnd: brownouts.now === undefined ? null : new Date(brownouts.now.end),
        nextBrownout:
          status === 'brownout-soon' && brownouts.soon !== undefined
            ? {
                start: new Date(brownouts.soon.start),
                end: new Date(brownouts.soon.end),
                // Under a day is "in less than a day", as a window minutes away must read.
                daysLeft:
                  Math.floor((Date.parse(brownouts.soon.start) - nowMs) / DAY_MS) === 0
                    ? 0
                    : Math.ceil((Date.parse(brownouts.soon.start) - nowMs) / DAY_MS),
              }
            : null,
        successor: version.successor,
        guide: new URL(version.changes, `${url}/`).href,
        breaking: operation.breaking_changes.map(changeText),
      });
    }
  }
  const order: Status[] = ['removed', 'browned-out', 'brownout-soon', 'sunset-soon', 'deprecated'];
  findings.sort(
    (a, b) => order.indexOf(a.status) - order.indexOf(b.status) || a.version - b.version || (a.call < b.call ? -1 : 1),
  );
  const pin = pinProblem(answer.pinned_version, listed, nowMs, days);
  const failing = findings.filter(fails).length + (pin === null ? 0 : 1);
  const since = answer.requests_since === undefined ? null : new Date(answer.requests_since);
  return { consumer: answer.consumer, url, now, days, since, findings, done, pin, failing };
}
