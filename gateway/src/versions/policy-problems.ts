import type { Logger } from 'pino';
import type { Clock } from '@version-router/platform/clock';
import type { PolicyInForce } from './in-force.js';
import { BROWNOUT_NOTICE_MS, windowsTooSoon, type PolicyProblemRule } from './load-rules.js';

/** A brownout window of one version. */
interface VersionWindow {
  readonly version: number;
  readonly start: number;
  readonly end: number;
}

export interface PolicyProblems {
  /**
   * The rules the policy in force breaks at this instant (`api_version_policy_problems{rule}`, read at scrape time):
   * the default in force (moves included) past its sunset, whenever it passed; a brownout window found too close for its notice at
   * start, until it has ended or is no longer in the policy.
   */
  brokenNow(): ReadonlySet<PolicyProblemRule>;
  /**
   * Checks the policy read at start for brownout windows that start less than 48 hours from now and of which no
   * notice was recorded (no replica has seen the window when its notice came due): one error line each, and the
   * gauge. A reload cannot bring one (load-rules.ts refuses it).
   */
  checkStart(): Promise<void>;
}

const iso = (epochMs: number): string => new Date(epochMs).toISOString();

/**
 * The policy problems that never refuse a start (docs/policy-file.md#the-policy-file). `noticedWindows` answers which
 * windows of these versions some replica recorded a notice of (the notice store, shared by the fleet), as
 * `<version> <window start, ISO 8601>`; absent (an app that sends no notices), none is.
 */
export function createPolicyProblems({
  policies,
  clock,
  logger,
  noticedWindows,
}: {
  policies: PolicyInForce;
  clock: Clock;
  logger: Logger;
  noticedWindows?: (versions: readonly number[]) => Promise<ReadonlySet<string>>;
}): PolicyProblems {
  let late: readonly VersionWindow[] = [];

  const inForce = ({ version, start, end }: VersionWindow): boolean =>
    policies.current.policy.versions
      .find((entry) => entry.version === version)
      ?.brownouts?.some((window) => window.start === start && window.end === end) === true;

  return {
    brokenNow() {
      const nowMs = clock();
      const { policy } = policies.current;
      const broken = new Set<PolicyProblemRule>();
      const defaultVersion = policy.defaultAt(nowMs);
      const fallback = policy.versions.find(({ version }) => version === defaultVersion);
      if (fallback !== undefined && policy.phaseOf(fallback, nowMs) === 'removed')
        broken.add('default_version_removed');
      if (late.some((window) => window.end > nowMs && inForce(window))) broken.add('brownout_notice_late');
      return broken;
    },
    async checkStart() {
      const nowMs = clock();
      const soon = policies.current.policy.versions.flatMap((entry) =>
        windowsTooSoon(entry, nowMs).map((window): VersionWindow => ({ version: entry.version, ...window })),
      );
      if (soon.length === 0) return;
      let noticed: ReadonlySet<string>;
      try {
        noticed = (await noticedWindows?.([...new Set(soon.map(({ version }) => version))])) ?? new Set();
      } catch (err) {
        logger.warn(
          { err },
          'could not read the notice store to tell whether the brownout windows within 48 hours were noticed',
        );
        return;
      }
      late = soon.filter(({ version, start }) => !noticed.has(`${version} ${iso(start)}`));
      for (const { version, start, end } of late)
        logger.error(
          { rule: 'brownout_notice_late', version, start: iso(start), end: iso(end) },
          `version policy problem brownout_notice_late: version ${version}'s brownout ${iso(start)}..${iso(end)} ` +
            'starts less than 48 hours after this start and no notice of it was recorded, so its consumers are ' +
            `told less than 48 hours ahead; start it at ${iso(nowMs + BROWNOUT_NOTICE_MS)} or later and reload ` +
            'the policy (docs/runbook.md#4-brownouts)',
        );
    },
  };
}
