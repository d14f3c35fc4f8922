import { Feed } from 'feed';
import { html } from '../html/template.js';
import { CHANGELOG_PATH } from '../versions/discovery.js';
import { changesPath, type VersionPolicy } from '../versions/policy.js';
import { readableInstant } from '../versions/readable-instant.js';
import { CHANGELOG_FEED_ID, lifecycleEvents, type LifecycleEvent } from './events.js';

export interface RenderedChangelog {
  /** The Atom 1.0 document. */
  readonly xml: string;
  /** When the next scheduled event becomes due and the feed changes (epoch ms), if one is scheduled. */
  readonly nextChangeAt: number | undefined;
}

const windowText = ({ start, end }: { start: number; end: number }): string =>
  `${readableInstant(start)} to ${readableInstant(end)}`;

function titleOf(event: LifecycleEvent): string {
  switch (event.kind) {
    case 'default_version':
      return `Requests that name no version get v${event.to} from ${readableInstant(event.movesAt)}`;
    case 'deprecated':
      return `v${event.version} deprecated: removed on ${readableInstant(event.sunset)}`;
    case 'brownout':
      return `v${event.version} brownout: ${windowText(event.window)}`;
    case 'removed':
      return `v${event.version} removed: use v${event.successor}`;
    case 'keys_required':
      return Number.isFinite(event.from)
        ? `v${event.version} requires an API key from ${readableInstant(event.from)}`
        : `v${event.version} requires an API key`;
    case 'closed_to_new':
      return `v${event.version} closed to new consumers from ${readableInstant(event.from)}`;
  }
}

/** What a person reads: when, what a request gets then, and what to move to. Plain text. */
function summaryOf(event: LifecycleEvent): string {
  if (event.kind === 'default_version')
    return (
      `From ${readableInstant(event.movesAt)} a request that names no version (a bare path without API-Version) ` +
      `gets version ${event.to} instead of version ${event.from}. Until then their answers carry ` +
      `API-Default-Version-Change: ${event.to}. Name version ${event.from} in your requests to keep it; a ` +
      `consumer pinned with an API key keeps its pin.`
    );
  const { version, sunset, successor } = event;
  const move = `Its successor is version ${successor}.`;
  switch (event.kind) {
    case 'deprecated': {
      const brownouts =
        event.brownouts.length === 0
          ? ''
          : ` Brownouts before then (every request answered 410 during each): ` +
            `${event.brownouts.map(windowText).join(', ')}.`;
      return (
        `Version ${version} is deprecated as of ${readableInstant(event.at)} and will be removed on ` +
        `${readableInstant(sunset)}; from then on every request for it is answered 410.${brownouts} ${move}`
      );
    }
    case 'brownout':
      return (
        `From ${windowText(event.window)} every request for version ${version} is answered 410, a reminder ` +
        `that it will be removed on ${readableInstant(sunset)}. ${move}`
      );
    case 'removed':
      return (
        `Version ${version} was removed on ${readableInstant(sunset)}: every request for it is answered 410. ` +
        `${move}`
      );
    case 'keys_required': {
      const from = Number.isFinite(event.from) ? `From ${readableInstant(event.from)}` : 'Now';
      return (
        `${from} every request for version ${version} needs an API key in the API-Key header; one without is ` +
        `answered 401. ${move}`
      );
    }
    case 'closed_to_new':
      return (
        `From ${readableInstant(event.from)} version ${version} takes no new consumers: an API key that has ` +
        `not called it before is answered 403. ${move}`
      );
  }
}

/** Where an entry links: the migration guide between the versions it is about, else the version list. */
function linkOf(event: LifecycleEvent, policy: VersionPolicy): { path: string; text: string } {
  if (event.kind !== 'default_version')
    return {
      path: changesPath(event.version),
      text: `What changes from version ${event.version} to version ${event.successor}`,
    };
  const left = policy.versions.find(({ version }) => version === event.from);
  return left?.successor === event.to
    ? { path: changesPath(event.from), text: `What changes from version ${event.from} to version ${event.to}` }
    : { path: '/versions', text: 'The versions and their phases' };
}

/**
 * The changelog at `nowMs`: one entry per lifecycle event of the policy whose instant has come, newest first.
 * `origin` (`http://host:port`, from the request) makes the links absolute, as Atom readers expect; the ids
 * and dates depend on the events alone.
 */
export function renderChangelog(policy: VersionPolicy, nowMs: number, origin: string): RenderedChangelog {
  const scheduled = lifecycleEvents(policy);
  const due = scheduled.filter((event) => event.at <= nowMs);
  const upcoming = scheduled.filter((event) => event.at > nowMs).at(-1);
  const feed = new Feed({
    id: CHANGELOG_FEED_ID,
    title: 'API versions: changelog',
    description:
      'Deprecations, brownouts and removals of the API versions, and moves of the default version, from the version ' +
      'policy in force.',
    // A feed without events has never changed: the epoch, rather than the time of serving.
    updated: new Date(due[0]?.at ?? 0),
    feed: `${origin}${CHANGELOG_PATH}`,
    link: `${origin}/versions`,
    author: { name: 'API gateway' },
    generator: false,
  });
  for (const event of due) {
    const link = linkOf(event, policy);
    const guide = `${origin}${link.path}`;
    const summary = summaryOf(event);
    feed.addItem({
      id: event.id,
      title: titleOf(event),
      link: guide,
      date: new Date(event.at),
      published: new Date(event.at),
      description: summary,
      content: html`<p>${summary}</p>
<p><a href="${guide}">${link.text}</a></p>`.toString(),
    });
  }
  return { xml: feed.atom1(), nextChangeAt: upcoming?.at };
}
