import type { FastifyBaseLogger } from 'fastify';
import { html, join, type Html } from '../html/template.js';
import type { NoticeStore, VersionNotices } from '../notices/store.js';
import type { VersionPolicy } from '../versions/policy.js';
import { withinStoreWait, type RegisteredConsumers, type StoreUnavailable } from './registered.js';

/** Each deprecated or removed version's notice figures, or word that the store could not be read. */
export type NoticeFigures = ReadonlyMap<number, VersionNotices> | StoreUnavailable;

/** The versions the notices part covers: those deprecated or removed at `nowMs`. */
const noticeVersions = (policy: VersionPolicy, nowMs: number): number[] =>
  policy.versions.filter((entry) => policy.phaseOf(entry, nowMs) !== 'current').map(({ version }) => version);

/**
 * The notice figures of every deprecated or removed version from the store every replica shares, under the
 * page's wait for the store (registered.ts): a store that fails or does not answer in time leaves them unknown.
 */
export async function readNoticeFigures(
  store: NoticeStore,
  policy: VersionPolicy,
  nowMs: number,
  log: FastifyBaseLogger,
): Promise<NoticeFigures> {
  const versions = noticeVersions(policy, nowMs);
  const figures = await withinStoreWait(
    Promise.all(versions.map((version) => store.ofVersion(version))),
    log,
    'notice figures are',
  );
  if (figures === 'store unavailable') return figures;
  return new Map(versions.map((version, i) => [version, figures[i] as VersionNotices]));
}

/**
 * The status page's part on deprecation notices: per deprecated or removed version, how many of the consumers
 * that called it in the last 30 days have been sent a notice about it, which notices were given up (and why),
 * and how many may have arrived twice. Fleet-wide figures, read from the shared store: the active consumers are
 * the registered ones the page already read (those last seen within the window), the rest `readNoticeFigures`.
 */
export function noticesSection(
  policy: VersionPolicy,
  nowMs: number,
  registered: RegisteredConsumers,
  figures: NoticeFigures,
): Html {
  const sections: Html[] = [];
  for (const version of noticeVersions(policy, nowMs)) {
    const heading = html`<h2 id="notices-v${version}">Notices about v${version}</h2>`;
    const consumers = registered === 'store unavailable' ? undefined : registered.get(version)?.consumers;
    const notices = figures === 'store unavailable' ? undefined : figures.get(version);
    if (consumers === undefined || notices === undefined) {
      sections.push(html`${heading}
<p class="note">Unknown: the consumer store cannot be read.</p>`);
      continue;
    }
    const active = consumers.filter((consumer) => consumer.active).map(({ id }) => id);
    const notified = active.filter((id) => notices.notified.has(id)).length;
    const lines = [
      heading,
      html`<p class="notices" data-version="${version}">Notified <strong>${notified}</strong> of <strong>${active.length}</strong> active consumers (those still calling v${version}: a call in the last 30 days, after their last pin move, that would still get v${version}).</p>`,
    ];
    if (notices.possiblyTwice > 0)
      lines.push(
        html`<p class="note">${notices.possiblyTwice} sent notices may have reached their consumer twice, with the same id: a replica stopped during their delivery.</p>`,
      );
    if (notices.failed.length > 0) {
      const rows = notices.failed.map((failed) => {
        const occasion = failed.occasion === '' ? '' : ` ${failed.occasion}`;
        return html`<tr><td class="consumer">${failed.consumerId}</td><td>${failed.milestone}${occasion}</td><td>${failed.channel}</td><td class="num">${failed.attempts}</td><td class="wrap">${failed.lastError}</td></tr>`;
      });
      lines.push(html`<table class="notice-failures" data-version="${version}">
<caption>Notices given up after 24 h of retries (the latest ${notices.failed.length}).</caption>
<thead><tr><th>consumer</th><th>milestone</th><th>channel</th><th class="num">attempts</th><th>last error</th></tr></thead>
<tbody>
${join(rows)}
</tbody>
</table>`);
    }
    sections.push(join(lines));
  }
  return join(sections);
}
