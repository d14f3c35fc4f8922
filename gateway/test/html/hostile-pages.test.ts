import { describe, expect, it } from 'vitest';
import { createVersionUsage } from '../../src/accounting/usage.js';
import type { GuideChange, MigrationGuide } from '../../src/changes/guide.js';
import { renderGuidePage } from '../../src/changes/page.js';
import type { VersionReport } from '../../src/consumers/reports/model.js';
import { renderDeprecationsPage } from '../../src/consumers/reports/page.js';
import type { ConsumersOfVersion } from '../../src/consumers/reports/version-consumers.js';
import type { VersionNotices } from '../../src/notices/store.js';
import { noticesSection } from '../../src/status/notices.js';
import { renderStatusPage } from '../../src/status/page.js';
import { lifecyclePolicyFile, policyFrom, TODAY } from '../support/helpers.js';

/**
 * Every page the gateway serves, each text that reaches it from outside the code (what clients send, the consumer
 * registry, the policy, the API's documents, the notice records) set to one hostile string: the page must show it
 * as text, escaped, in every place, and keep its own markup as it is with harmless text.
 */
const HOSTILE: Record<string, string> = {
  script: '<script>alert(1)</script>',
  'attribute break-out': '"><img src=x onerror=alert(1)>',
  'single quote': "' onmouseover='alert(1)",
  entity: '&amp;&lt;',
  long: `${'a'.repeat(5_000)}<b>${'z'.repeat(5_000)}`,
  unicode: 'Zoë → 日本語 🦄 \u202egnp.exe',
  'control characters': 'tab\tline\nescape\u001b[2J\u0085',
};

/** How a page must show `text`: control characters as \xNN, then HTML's five special characters as entities. */
const shown = (text: string): string =>
  text
    .replace(/\p{Cc}/gu, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');

/** Each tag of the page, in order, with the names of its attributes (their values left out). */
const skeleton = (page: string): string[] =>
  [...page.matchAll(/<(\/?[A-Za-z!][\w-]*)([^>]*)>/g)].map(
    ([, name, attributes = '']) =>
      `${name}${[...attributes.replace(/="[^"]*"/g, '=').matchAll(/([\w-]+)=/g)].map(([, attribute]) => ` ${attribute}`).join('')}`,
  );

/** A value for each text a page takes: `field` names the place, so a test can find each one on the page. */
type Texts = (field: string) => string;

const HARMLESS: Texts = (field) => `harmless ${field}`;
const hostile =
  (text: string): Texts =>
  (field) =>
    `${field}:${text}`;

/**
 * The page `render` makes with `texts`, checked against the page made with harmless texts: the same tags with
 * the same attributes, no script or image of the texts' own, and each of `fields` shown escaped.
 */
function expectEscaped(render: (texts: Texts) => string, fields: readonly string[]): void {
  const harmless = skeleton(render(HARMLESS));
  for (const [kind, text] of Object.entries(HOSTILE)) {
    const texts = hostile(text);
    const page = render(texts);
    expect(skeleton(page), kind).toEqual(harmless);
    expect(page, kind).not.toMatch(/<script|<img|<b>/i);
    for (const field of fields) expect(page.includes(shown(texts(field))), `${kind}: ${field}`).toBe(true);
  }
}

/** Every text of a change in the guide, the sentence a declared change is said in included. */
const change = (texts: Texts, at: string, declared: GuideChange['change'] | undefined): GuideChange => ({
  change: (declared ?? texts(`${at} change`)) as GuideChange['change'],
  kind: texts(`${at} kind`) as GuideChange['kind'],
  name: texts(`${at} name`),
  where: texts(`${at} where`),
  breaking: true,
  description: texts(`${at} description`),
  ...(declared === undefined
    ? {}
    : {
        declared: true,
        to: texts(`${at} to`),
        from_type: texts(`${at} from type`),
        to_type: texts(`${at} to type`),
        factor: 100,
        values: { [texts(`${at} old value`)]: texts(`${at} new value`) },
      }),
});

const CHANGE_FIELDS = (at: string): string[] =>
  ['change', 'kind', 'name', 'where', 'description'].map((field) => `${at} ${field}`);
const DECLARED_FIELDS = (at: string): string[] => ['name', 'to', 'description'].map((field) => `${at} ${field}`);

describe('every page shows hostile texts escaped, its markup intact', () => {
  it('the migration guide: operations, call forms, found and declared changes (their names, values, types)', () => {
    const guide = (texts: Texts): MigrationGuide => ({
      version: 1,
      successor: 2,
      breaking_changes: 5,
      compatible_changes: 0,
      operations: [
        {
          method: texts('method'),
          path: texts('path'),
          successor_path: texts('successor path'),
          forms: [{ form: 'path', call: texts('call'), instead: texts('instead') }],
          changes: [
            change(texts, 'found', undefined),
            change(texts, 'renamed', 'renamed'),
            change(texts, 'converted', 'converted'),
            change(texts, 'mapped', 'mapped'),
          ],
        },
      ],
      other_changes: [change(texts, 'other', undefined)],
    });
    const entry = { version: 1, status: 'deprecated', announced: TODAY, sunset: TODAY + 86_400_000, successor: 2 };
    expectEscaped(
      (texts) => renderGuidePage(guide(texts), entry as Parameters<typeof renderGuidePage>[1]),
      [
        'method',
        'path',
        'successor path',
        'call',
        'instead',
        ...CHANGE_FIELDS('found'),
        ...CHANGE_FIELDS('other'),
        ...DECLARED_FIELDS('renamed'),
        ...DECLARED_FIELDS('converted'),
        'converted from type',
        'converted to type',
        'mapped name',
        'mapped description',
        'mapped old value',
        'mapped new value',
      ],
    );
  });

  it("a consumer's deprecation report: its id, the calls, what to send instead, the changes that break them", () => {
    const report = (texts: Texts): VersionReport => ({
      version: 1,
      phase: 'deprecated',
      sunset: new Date(TODAY + 30 * 86_400_000).toISOString(),
      successor: 2,
      changes: texts('guide link'),
      done: false,
      operations: [
        {
          operation: texts('operation'),
          form: 'path',
          call: texts('call'),
          instead: texts('instead'),
          requests: 3,
          last_seen: new Date(TODAY).toISOString(),
          breaking_changes: [change(texts, 'found', undefined), change(texts, 'renamed', 'renamed')],
        },
      ],
    });
    expectEscaped(
      (texts) =>
        renderDeprecationsPage(
          {
            consumer: texts('consumer id'),
            pinned_version: 1,
            requests_since: new Date(TODAY - 30 * 86_400_000).toISOString(),
            as_of: new Date(TODAY).toISOString(),
            versions: [report(texts)],
          },
          TODAY,
        ),
      [
        'consumer id',
        'guide link',
        'call',
        'instead',
        ...['change', 'kind', 'name', 'where'].map((field) => `found ${field}`),
        'renamed name',
        'renamed to',
      ],
    );
  });

  it(
    'the status page: the replica, anonymous consumers, registered ones (ids, names), those turned away, and the ' +
      'notices given up (consumer, milestone, occasion, channel, error)',
    () => {
      const policy = policyFrom(lifecyclePolicyFile);
      const page = (texts: Texts): string => {
        const usage = createVersionUsage(() => TODAY);
        usage.consumers.count(1, texts('anonymous consumer'), TODAY);
        const consumer = {
          id: texts('registered id'),
          name: texts('registered name'),
          contact_email: texts('contact'),
          webhook_url: texts('webhook'),
          pinned_version: null,
        };
        const registered = new Map<number, ConsumersOfVersion>([
          [
            1,
            {
              requests_since: new Date(TODAY - 30 * 86_400_000).toISOString(),
              consumers: [
                { ...consumer, requests: 7, last_seen: new Date(TODAY).toISOString(), active: true, done: false },
              ],
              refused: [
                {
                  ...consumer,
                  id: texts('refused id'),
                  refused: {
                    count: 2,
                    last_at: new Date(TODAY).toISOString(),
                  },
                },
              ],
            },
          ],
        ]);
        const notices: VersionNotices = {
          notified: new Set([texts('registered id')]),
          possiblyTwice: 1,
          failed: [
            {
              consumerId: texts('notice consumer'),
              version: 1,
              milestone: texts('milestone') as VersionNotices['failed'][number]['milestone'],
              occasion: texts('occasion'),
              channel: texts('channel') as VersionNotices['failed'][number]['channel'],
              attempts: 27,
              lastError: texts('last error'),
            },
          ],
        };
        return renderStatusPage({
          policy,
          usage,
          replica: texts('replica'),
          registered,
          nowMs: TODAY,
          noticeSections: noticesSection(policy, TODAY, registered, new Map([[1, notices]])),
          pinned: new Map([[1, 2]]),
          // A preview lists the same consumers once more, in its own table.
          atMs: TODAY + 86_400_000,
        });
      };
      expectEscaped(page, [
        'replica',
        'anonymous consumer',
        'registered id',
        'registered name',
        'refused id',
        'notice consumer',
        'milestone',
        'occasion',
        'channel',
        'last error',
      ]);
    },
  );
});
