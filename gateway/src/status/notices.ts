import type { ConsumerUsageReader } from '../consumers/store/consumer-store.js';
import { escapeText } from '../html/self-contained.js';
import { ACTIVE_WINDOW_MS } from '../consumers/reports/version-consumers.js';
import type { NoticeStore } from '../notices/store.js';
import type { VersionPolicy } from '../versions/policy.js';

/** Where the page reads who was told: the fleet's shared records, not this replica's memory. */
export interface NoticesStatusSources {
  store: NoticeStore;
  consumers: ConsumerUsageReader;
}

/**
 * The status page's part on deprecation notices: per deprecated or removed version, how many of the consumers
 * that called it in the last 30 days have been sent a notice about it, which notices were given up (and why),
 * and how many may have arrived twice. Fleet-wide figures, read from the shared store.
 */
export async function noticesSection(policy: VersionPolicy, nowMs: number, { store, consumers }: NoticesStatusSources): Promise<string> {
  const sections: string[] = [];
  for (const entry of policy.versions) {
    const phase = policy.phaseOf(entry, nowMs);
    if (phase === 'current') continue;
    const heading = `<h2 id="notices-v${entry.version}">Notices about v${entry.version}</h2>`;
    let active: string[];
    let notices: Awaited<ReturnType<NoticeStore['ofVersion']>>;
    try {
      const rows = await consumers.consumersOf(entry.version, nowMs - ACTIVE_WINDOW_MS);
      active = rows.filter(({ last_seen }) => Date.parse(last_seen) >= nowMs - ACTIVE_WINDOW_MS).map(({ consumer }) => consumer.id);
      notices = await store.ofVersion(entry.version);
    } catch {
      sections.push(`${heading}\n<p class="note">Unknown: the consumer store cannot be read.</p>`);
      continue;
    }
    const notified = active.filter((id) => notices.notified.has(id)).length;
    const lines = [
      heading,
      `<p class="notices" data-version="${entry.version}">Notified <strong>${notified}</strong> of <strong>${active.length}</strong> active consumers (those that called v${entry.version} in the last 30 days).</p>`,
    ];
    if (notices.possiblyTwice > 0) {
      lines.push(`<p class="note">${notices.possiblyTwice} sent notices may have reached their consumer twice, with the same id: a replica stopped during their delivery.</p>`);
    }
    if (notices.failed.length > 0) {
      const rows = notices.failed
        .map(
          (failed) =>
            `<tr><td class="consumer">${escapeText(failed.consumerId)}</td><td>${failed.milestone}${failed.occasion === '' ? '' : ` ${escapeText(failed.occasion)}`}</td>` +
            `<td>${failed.channel}</td><td class="num">${failed.attempts}</td><td class="wrap">${escapeText(failed.lastError)}</td></tr>`,
        )
        .join('\n');
      lines.push(
        `<table class="notice-failures" data-version="${entry.version}">
<caption>Notices given up after 24 h of retries (the latest ${notices.failed.length}).</caption>
<thead><tr><th>consumer</th><th>milestone</th><th>channel</th><th class="num">attempts</th><th>last error</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>`,
      );
    }
    sections.push(lines.join('\n'));
  }
  return sections.join('\n');
}
