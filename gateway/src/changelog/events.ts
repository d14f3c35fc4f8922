import { keysRequiredFrom, type VersionEntry } from '../versions/policy-file.js';
import type { VersionPolicy } from '../versions/policy.js';

/** What happened to a version: announced as deprecated, a brownout window began, removed at its sunset. */
type VersionEventKind = 'deprecated' | 'brownout' | 'removed' | 'keys_required' | 'closed_to_new';
/** The version requests that name none get is scheduled to move (default_version_changes). */
type DefaultEventKind = 'default_version';
export type LifecycleEventKind = VersionEventKind | DefaultEventKind;

interface Window {
  readonly start: number;
  readonly end: number;
}

/** One entry of the changelog: an instant of a deprecated version's lifecycle in the policy in force. */
export type VersionEvent = {
  readonly version: number;
  /** When it happens (epoch ms): the announcement, the window's start, the sunset. It is listed from then on. */
  readonly at: number;
  readonly sunset: number;
  readonly successor: number;
  /**
   * A `tag:` URI (RFC 4151) made of the version, the kind and the instant only: the same event has the same id on
   * every replica, after every restart and reload, so a feed reader shows it once.
   */
  readonly id: string;
} & (
  | { readonly kind: 'deprecated'; /** Every brownout window the version has. */ readonly brownouts: readonly Window[] }
  | { readonly kind: 'brownout'; readonly window: Window }
  | { readonly kind: 'removed' }
  /**
   * Listed with the deprecation (at `announced`), so readers learn of it before it applies; `from`: when it applies
   * (-Infinity for `"consumer_key": "required"`, which always did).
   */
  | { readonly kind: 'keys_required' | 'closed_to_new'; readonly from: number }
);

/**
 * A scheduled move of the default: listed from its announcement (`at` is when it is listed), so readers learn of it
 * before it applies; its id names the instant it applies and the version it moves to, so moving either is a new entry.
 */
export interface DefaultVersionEvent {
  readonly kind: DefaultEventKind;
  readonly at: number;
  readonly id: string;
  /** When requests that name no version start getting `to`, and the version they got before. */
  readonly movesAt: number;
  readonly from: number;
  readonly to: number;
}

export type LifecycleEvent = VersionEvent | DefaultVersionEvent;

/** The tagging entity of every id: a fixed name and year, never anything of the file or the time of serving. */
const TAG_PREFIX = 'tag:version-router,2026:';
export const CHANGELOG_FEED_ID = `${TAG_PREFIX}changelog`;

/** Newest first; at one instant a removal before a brownout before a deprecation, then the higher version first. */
const KIND_ORDER: Record<LifecycleEventKind, number> = {
  removed: 2,
  default_version: 1.5,
  brownout: 1,
  closed_to_new: 0.2,
  keys_required: 0.1,
  deprecated: 0,
};

function eventsOf(entry: VersionEntry): VersionEvent[] {
  // The policy file refuses a deprecated version without all three (policy-file.ts); a current version has none.
  if (entry.announced === undefined || entry.sunset === undefined || entry.successor === undefined) return [];
  const { version, sunset, successor } = entry;
  const brownouts = entry.brownouts ?? [];
  const common = (kind: LifecycleEventKind, at: number, named = at) => ({
    version,
    at,
    sunset,
    successor,
    id: `${TAG_PREFIX}versions/${version}/${kind}/${Number.isFinite(named) ? new Date(named).toISOString() : 'always'}`,
  });
  // Rules on who may call are news for the anonymous callers first: announced with the deprecation, their id
  // naming the instant they apply from, so moving that instant is a new entry.
  const keysFrom = keysRequiredFrom(entry);
  const rules: VersionEvent[] = [];
  if (keysFrom !== undefined)
    rules.push({ kind: 'keys_required', ...common('keys_required', entry.announced, keysFrom), from: keysFrom });
  if (entry.closed_to_new !== undefined) {
    rules.push({
      kind: 'closed_to_new',
      ...common('closed_to_new', entry.announced, entry.closed_to_new),
      from: entry.closed_to_new,
    });
  }
  return [
    { kind: 'deprecated', ...common('deprecated', entry.announced), brownouts },
    ...rules,
    ...brownouts.map((window): VersionEvent => ({ kind: 'brownout', ...common('brownout', window.start), window })),
    { kind: 'removed', ...common('removed', sunset) },
  ];
}

/** The default's scheduled moves, each announced at its own `announced`. */
function defaultEvents(policy: VersionPolicy): DefaultVersionEvent[] {
  return policy.defaultChanges.map(({ at, to, announced }, index) => ({
    kind: 'default_version',
    at: announced,
    id: `${TAG_PREFIX}default_version/${new Date(at).toISOString()}/${to}`,
    movesAt: at,
    from: index === 0 ? policy.defaultAt(Number.NEGATIVE_INFINITY) : (policy.defaultChanges[index - 1]?.to ?? to),
    to,
  }));
}

/** The version an event is about, for the order of events at one instant: a move of the default, the one it leaves. */
const versionOf = (event: LifecycleEvent): number => (event.kind === 'default_version' ? event.from : event.version);

const byPolicy = new WeakMap<VersionPolicy, readonly LifecycleEvent[]>();

/** Every lifecycle event the policy schedules, announced or not, newest first; computed once per policy. */
export function lifecycleEvents(policy: VersionPolicy): readonly LifecycleEvent[] {
  let events = byPolicy.get(policy);
  if (events === undefined) {
    events = [...policy.versions.flatMap(eventsOf), ...defaultEvents(policy)].sort(
      (a, b) => b.at - a.at || KIND_ORDER[b.kind] - KIND_ORDER[a.kind] || versionOf(b) - versionOf(a),
    );
    byPolicy.set(policy, events);
  }
  return events;
}
