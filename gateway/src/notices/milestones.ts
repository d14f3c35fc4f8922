import type { VersionEntry } from '../versions/policy-file.js';

/** The moments of a deprecation at which the consumers of a version are told (the metric's label values). */
export const MILESTONES = [
  'announced',
  'sunset_in_90_days',
  'sunset_in_30_days',
  'sunset_in_7_days',
  'brownout_in_48_hours',
  'removed',
] as const;
export type MilestoneName = (typeof MILESTONES)[number];

/**
 * Every kind of notice (the metric's `milestone` label values): the milestones of a deprecation, and `pin_moved`, the
 * consumer's pin moved by the platform team.
 */
export const NOTICE_KINDS = [...MILESTONES, 'pin_moved'] as const;
export type NoticeKind = (typeof NOTICE_KINDS)[number];

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const BROWNOUT_NOTICE_MS = 48 * HOUR_MS;

const SUNSET_IN: readonly (readonly [MilestoneName, number])[] = [
  ['sunset_in_90_days', 90],
  ['sunset_in_30_days', 30],
  ['sunset_in_7_days', 7],
];

/** One milestone of one version: when it comes due, and for a brownout, which window it announces. */
export interface Milestone {
  readonly name: MilestoneName;
  /**
   * When it is due (epoch ms): the announcement, sunset − N days, a window's start − 48 h (never before the
   * announcement), the sunset.
   */
  readonly at: number;
  /** What tells two milestones of one name apart: the window's start (RFC 3339) for a brownout, '' for the others. */
  readonly occasion: string;
  /** The brownout window a `brownout_in_48_hours` announces. */
  readonly window?: { readonly start: number; readonly end: number };
}

/** Due milestones after this are no news: a brownout notice after its window has ended. */
export const expiresAt = (milestone: Milestone): number => milestone.window?.end ?? Number.POSITIVE_INFINITY;

/**
 * Every milestone of a deprecated version, by the instant it comes due; none for a current version (the policy file
 * refuses a deprecated one without announced, sunset and successor). At one instant the one earlier in MILESTONES
 * comes last, so it is the one sent: an announcement reaches every consumer that ever called the version, a
 * brownout notice only the recent ones, and the announcement names the windows ahead too.
 */
export function milestonesOf(entry: VersionEntry): Milestone[] {
  const { announced, sunset } = entry;
  if (entry.status !== 'deprecated' || announced === undefined || sunset === undefined) return [];
  const milestones: Milestone[] = [
    { name: 'announced', at: announced, occasion: '' },
    // A sunset is at least 6 months after its announcement, so each of these comes after it.
    ...SUNSET_IN.map(([name, days]): Milestone => ({ name, at: sunset - days * DAY_MS, occasion: '' })),
    ...(entry.brownouts ?? []).map((window): Milestone => ({
      name: 'brownout_in_48_hours',
      // A window within 48 h of the announcement is announced with it.
      at: Math.max(announced, window.start - BROWNOUT_NOTICE_MS),
      occasion: new Date(window.start).toISOString(),
      window: { start: window.start, end: window.end },
    })),
    { name: 'removed', at: sunset, occasion: '' },
  ];
  const rank = (milestone: Milestone): number => MILESTONES.indexOf(milestone.name);
  return milestones.sort((a, b) => a.at - b.at || rank(b) - rank(a));
}
