import type { Brownout, DeprecationsAnswer } from './gateway.js';

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

export interface CheckResult {
  consumer: string;
  url: string;
  now: Date;
  days: number;
  findings: Finding[];
  /** How many findings fail the check. */
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

/** Every operation of the report, judged at `now` against `--days`: most urgent first, then by version and name. */
export function judge(
  answer: DeprecationsAnswer,
  brownouts: Map<number, Brownout[]>,
  url: string,
  now: Date,
  days: number,
): CheckResult {
  const nowMs = now.getTime();
  const findings: Finding[] = [];
  for (const version of answer.versions) {
    const sunsetMs = Date.parse(version.sunset);
    const brownout = (brownouts.get(version.version) ?? []).find(
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
  return { consumer: answer.consumer, url, now, days, findings, failing: findings.filter(fails).length };
}
