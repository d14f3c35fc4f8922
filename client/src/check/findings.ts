import type { Brownout, DeprecationsAnswer, ListedVersion } from './gateway.js';

/** What is true of an operation now: the first three fail the check. */
export type Status = 'removed' | 'browned-out' | 'sunset-soon' | 'deprecated';

export interface Finding {
  /** The call as the consumer made it: `GET /v1/orders/{id}`, `GET /orders/{id} with API-Version: 1`. */
  call: string;
  /** What to send for the successor in the same form: `GET /v2/orders/{id}`; null when unknown. */
  instead: string | null;
  version: number;
  requests: number;
  status: Status;
  sunset: Date;
  /** Days from now to the sunset rounded up, as the gateway counts them (docs/behaviour.md#days-left). */
  daysLeft: number;
  /** The end of the brownout window in force now, when browned out. */
  brownoutEnd: Date | null;
  successor: number | null;
  /** The migration guide, an absolute URL. */
  guide: string;
  /** The guide's breaking changes that touch the operation: `removed field user_id`. */
  breaking: string[];
}

/**
 * The consumer's pin when it names a version no request can be served by: one the policy no longer lists
 * (`unlisted`: a request that names no version is answered 406), or one removed (410). Either fails the check.
 */
export interface PinProblem {
  version: number;
  problem: 'unlisted' | 'removed';
  /** When it was removed; null when unlisted. */
  removedOn: Date | null;
  /** The versions one may pin now (listed, not removed). */
  pinnable: number[];
}

export interface CheckResult {
  consumer: string;
  url: string;
  now: Date;
  days: number;
  findings: Finding[];
  /** The pin, when it names a version nothing can be served by; null when it is fine, or unknown. */
  pin: PinProblem | null;
  /** How many findings fail the check, the pin counted as one. */
  failing: number;
}

const DAY_MS = 86_400_000;

export const fails = (finding: Finding): boolean => finding.status !== 'deprecated';

function statusOf(
  phase: string,
  sunsetMs: number,
  brownout: Brownout | undefined,
  nowMs: number,
  days: number,
): Status {
  if (phase === 'removed') return 'removed';
  if (brownout !== undefined) return 'browned-out';
  return sunsetMs - nowMs <= days * DAY_MS ? 'sunset-soon' : 'deprecated';
}

/** The pin's problem, if any, from the versions `GET /versions` lists. */
function pinProblem(pin: number | null | undefined, listed: ReadonlyMap<number, ListedVersion>): PinProblem | null {
  if (pin === null || pin === undefined) return null;
  const pinnable = [...listed.values()].filter(({ phase }) => phase !== 'removed').map(({ version }) => version);
  const entry = listed.get(pin);
  if (entry === undefined) return { version: pin, problem: 'unlisted', removedOn: null, pinnable };
  if (entry.phase !== 'removed') return null;
  return {
    version: pin,
    problem: 'removed',
    removedOn: entry.sunset === null ? null : new Date(entry.sunset),
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
  for (const version of answer.versions) {
    const sunsetMs = Date.parse(version.sunset);
    const brownout = (listed.get(version.version)?.brownouts ?? []).find(
      (window) => Date.parse(window.start) <= nowMs && nowMs < Date.parse(window.end),
    );
    const status = statusOf(version.phase, sunsetMs, brownout, nowMs, days);
    for (const operation of version.operations) {
      findings.push({
        call: operation.call ?? operation.operation,
        instead: operation.instead ?? null,
        version: version.version,
        requests: operation.requests,
        status,
        sunset: new Date(sunsetMs),
        daysLeft: Math.ceil((sunsetMs - nowMs) / DAY_MS),
        brownoutEnd: brownout === undefined ? null : new Date(brownout.end),
        successor: version.successor,
        guide: new URL(version.changes, `${url}/`).href,
        breaking: operation.breaking_changes.map(({ change, kind, name }) =>
          [change, kind, name].filter((part) => part !== '').join(' '),
        ),
      });
    }
  }
  const order: Status[] = ['removed', 'browned-out', 'sunset-soon', 'deprecated'];
  findings.sort(
    (a, b) => order.indexOf(a.status) - order.indexOf(b.status) || a.version - b.version || (a.call < b.call ? -1 : 1),
  );
  const pin = pinProblem(answer.pinned_version, listed);
  const failing = findings.filter(fails).length + (pin === null ? 0 : 1);
  return { consumer: answer.consumer, url, now, days, findings, pin, failing };
}
