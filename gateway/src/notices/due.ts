import { ACTIVE_WINDOW_MS } from '../consumers/reports/version-consumers.js';
import type { VersionPolicy } from '../versions/policy.js';
import type { Channel } from './labels.js';
import { expiresAt, milestonesOf, type Milestone, type NoticeKind } from './milestones.js';

/** Who calls a version, as the scheduling needs it (consumers/reports/activity.ts says which calls count). */
export interface Recipient {
  consumerId: string;
  /**
   * Its last call of the version that still counts, fleet-wide (epoch ms): made after its last pin move, and a call
   * that named no version only while such a request of it still gets the version (consumers/reports/activity.ts);
   * -Infinity when none counts.
   */
  lastSeenMs: number;
  /**
   * The channels it can be reached on: e-mail with a contact address (and SMTP_URL set), webhook with a webhook URL.
   */
  channels: readonly Channel[];
}

/** One notice: what is claimed, sent and recorded once across the fleet. */
export interface NoticeKey {
  consumerId: string;
  version: number;
  milestone: NoticeKind;
  /** The brownout window's start for `brownout_in_48_hours`, else ''. */
  occasion: string;
  channel: Channel;
}

export interface DueNotice extends NoticeKey {
  /** When its milestone came due (epoch ms). */
  dueAt: number;
}

/** A notice's key as one string, for the set of those already recorded. */
export const noticeKeyText = ({ consumerId, version, milestone, occasion, channel }: NoticeKey): string =>
  `${consumerId}\n${version}\n${milestone}\n${occasion}\n${channel}`;

/**
 * The brownout windows some notice was recorded of, as `<version> <window start, ISO 8601>`, from the recorded keys
 * (noticeKeyText; a consumer id holds no line break).
 */
export function noticedBrownouts(recorded: ReadonlySet<string>): Set<string> {
  const windows = new Set<string>();
  for (const key of recorded) {
    const [, version, milestone, occasion] = key.split('\n');
    if (milestone === 'brownout_in_48_hours') windows.add(`${version} ${occasion}`);
  }
  return windows;
}

/**
 * The milestone a version's consumers are told of at `nowMs`: the latest one due that is still news (a brownout
 * notice is none once its window has ended); undefined before the announcement.
 */
export function currentMilestone(milestones: readonly Milestone[], nowMs: number): Milestone | undefined {
  let current: Milestone | undefined;
  for (const milestone of milestones) if (milestone.at <= nowMs && nowMs < expiresAt(milestone)) current = milestone;
  return current;
}

/** The versions whose consumers may have a notice due at `nowMs`: those with a current milestone. */
export function versionsWithNotices(policy: VersionPolicy, nowMs: number): number[] {
  return policy.versions
    .filter((entry) => currentMilestone(milestonesOf(entry), nowMs) !== undefined)
    .map(({ version }) => version);
}

export interface DueNotices {
  /** To be sent: the current milestone of each version, to each of its recipients on each of their channels. */
  send: DueNotice[];
  /**
   * To be recorded as skipped, never sent: the other due milestones of those recipients (a policy edited late, a
   * gateway that was down).
   */
  skip: DueNotice[];
}

/**
 * Which notices are due at `nowMs` and not recorded yet: per version, only the current milestone is sent (so a
 * policy edited late sends one notice, not every milestone already past), to the consumers that still call the
 * version (at `announced`: that ever called it), never to one done with it; the other milestones already due are
 * recorded as skipped for them. `recipients` holds each version's consumers, `recorded` the keys (noticeKeyText) of every notice already
 * recorded, whatever its status. Pure: the clock is `nowMs`.
 */
export function dueNotices(
  policy: VersionPolicy,
  nowMs: number,
  recipients: ReadonlyMap<number, readonly Recipient[]>,
  recorded: ReadonlySet<string>,
): DueNotices {
  const send: DueNotice[] = [];
  const skip: DueNotice[] = [];
  for (const entry of policy.versions) {
    const due = milestonesOf(entry).filter((milestone) => milestone.at <= nowMs);
    const current = currentMilestone(due, nowMs);
    if (current === undefined) continue;
    for (const recipient of recipients.get(entry.version) ?? []) {
      // An active consumer is told at every milestone; at `announced`, every consumer that ever called the version.
      const told =
        current.name === 'announced'
          ? recipient.lastSeenMs > Number.NEGATIVE_INFINITY
          : recipient.lastSeenMs >= nowMs - ACTIVE_WINDOW_MS;
      if (!told) continue;
      for (const channel of recipient.channels) {
        for (const milestone of due) {
          const notice: DueNotice = {
            consumerId: recipient.consumerId,
            version: entry.version,
            milestone: milestone.name,
            occasion: milestone.occasion,
            channel,
            dueAt: milestone.at,
          };
          if (recorded.has(noticeKeyText(notice))) continue;
          (milestone === current ? send : skip).push(notice);
        }
      }
    }
  }
  return { send, skip };
}
