import { describe, expect, it } from 'vitest';
import {
  dueNotices,
  noticeKeyText,
  versionsWithNotices,
  type DueNotice,
  type Recipient,
} from '../../src/notices/due.js';
import { milestonesOf } from '../../src/notices/milestones.js';
import { at, designPolicyFile, lifecyclePolicyFile, policyFrom } from '../support/helpers.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;
/**
 * v1 of lifecyclePolicyFile: announced 2026-06-01, sunset 2027-01-01, brownouts on 12-01 10:00-12:00 and 12-08
 * 10:00-16:00.
 */
const policy = policyFrom(lifecyclePolicyFile);
const v1 = policy.versions[0]!;

/** Each milestone of v1 and when it is due. */
const DUE = {
  announced: at('2026-06-01T00:00:00Z'),
  sunset_in_90_days: at('2026-10-03T00:00:00Z'),
  brownout_1: at('2026-11-29T10:00:00Z'),
  sunset_in_30_days: at('2026-12-02T00:00:00Z'),
  brownout_2: at('2026-12-06T10:00:00Z'),
  sunset_in_7_days: at('2026-12-25T00:00:00Z'),
  removed: at('2027-01-01T00:00:00Z'),
};
const WINDOW_1 = '2026-12-01T10:00:00.000Z';
const WINDOW_2 = '2026-12-08T10:00:00.000Z';

const recipient = (consumerId: string, lastSeenMs: number, channels: Recipient['channels'] = ['email']): Recipient => ({
  consumerId,
  lastSeenMs,
  channels,
});
const forV1 = (...recipients: Recipient[]) => new Map([[1, recipients]]);
/** The recorded keys of acme's e-mails of these milestones (none of them a brownout). */
const recordedOf = (...milestones: DueNotice['milestone'][]) =>
  new Set(
    milestones.map((milestone) =>
      noticeKeyText({ consumerId: 'acme', version: 1, milestone, occasion: '', channel: 'email' }),
    ),
  );
/** A notice as [consumer, milestone, occasion, channel], for short expectations. */
const brief = ({ consumerId, milestone, occasion, channel }: DueNotice) => [consumerId, milestone, occasion, channel];

describe('milestonesOf', () => {
  it(
    "lists a deprecated version's milestones by the instant each is due: announced, sunset − 90/30/7 days, each " +
      "window's start − 48 h, the sunset",
    () => {
      expect(
        milestonesOf(v1).map(({ name, at: dueAt, occasion }) => [name, new Date(dueAt).toISOString(), occasion]),
      ).toEqual([
        ['announced', '2026-06-01T00:00:00.000Z', ''],
        ['sunset_in_90_days', '2026-10-03T00:00:00.000Z', ''],
        ['brownout_in_48_hours', '2026-11-29T10:00:00.000Z', WINDOW_1],
        ['sunset_in_30_days', '2026-12-02T00:00:00.000Z', ''],
        ['brownout_in_48_hours', '2026-12-06T10:00:00.000Z', WINDOW_2],
        ['sunset_in_7_days', '2026-12-25T00:00:00.000Z', ''],
        ['removed', '2027-01-01T00:00:00.000Z', ''],
      ]);
    },
  );

  it('has none for a current version', () => {
    expect(milestonesOf(policy.versions[1]!)).toEqual([]);
  });

  it(
    'announces a window starting within 48 h of the announcement with it, and sends the announcement (every ' +
      'consumer ever) at that instant',
    () => {
      const early = policyFrom({
        ...designPolicyFile,
        versions: [
          {
            ...designPolicyFile.versions[0],
            brownouts: [{ start: '2026-06-02T00:00:00Z', end: '2026-06-02T01:00:00Z' }],
          },
          designPolicyFile.versions[1],
        ],
      });
      expect(
        milestonesOf(early.versions[0]!)
          .slice(0, 2)
          .map(({ name, at: dueAt }) => [name, dueAt]),
      ).toEqual([
        ['brownout_in_48_hours', DUE.announced],
        ['announced', DUE.announced],
      ]);
      const { send, skip } = dueNotices(
        early,
        DUE.announced,
        forV1(recipient('old', DUE.announced - 400 * DAY)),
        new Set(),
      );
      expect(send.map(brief)).toEqual([['old', 'announced', '', 'email']]);
      expect(skip.map(brief)).toEqual([['old', 'brownout_in_48_hours', '2026-06-02T00:00:00.000Z', 'email']]);
    },
  );
});

describe('dueNotices', () => {
  it('sends every milestone at its instant and not a millisecond before, when the checks keep up', () => {
    const recorded = new Set<string>();
    const consumer = recipient('acme', 0);
    const sent: string[] = [];
    for (const [name, dueAt] of Object.entries(DUE)) {
      const active = { ...consumer, lastSeenMs: dueAt - DAY };
      expect(dueNotices(policy, dueAt - 1, forV1(active), recorded).send, `${name} before it is due`).toEqual([]);
      const { send, skip } = dueNotices(policy, dueAt, forV1(active), recorded);
      expect(skip).toEqual([]);
      expect(send).toHaveLength(1);
      expect(send[0]).toMatchObject({ consumerId: 'acme', version: 1, channel: 'email', dueAt });
      sent.push(`${send[0]!.milestone} ${send[0]!.occasion}`.trim());
      for (const notice of send) recorded.add(noticeKeyText(notice));
      expect(dueNotices(policy, dueAt + HOUR, forV1(active), recorded), `${name} again`).toEqual({
        send: [],
        skip: [],
      });
    }
    expect(sent).toEqual([
      'announced',
      'sunset_in_90_days',
      `brownout_in_48_hours ${WINDOW_1}`,
      'sunset_in_30_days',
      `brownout_in_48_hours ${WINDOW_2}`,
      'sunset_in_7_days',
      'removed',
    ]);
  });

  it(
    'sends only the latest milestone due when the policy is edited late, and records the earlier ones as ' + 'skipped',
    () => {
      const now = at('2026-12-03T09:00:00Z');
      const { send, skip } = dueNotices(
        policy,
        now,
        forV1(recipient('acme', now - HOUR, ['email', 'webhook'])),
        new Set(),
      );
      expect(send.map(brief)).toEqual([
        ['acme', 'sunset_in_30_days', '', 'email'],
        ['acme', 'sunset_in_30_days', '', 'webhook'],
      ]);
      expect(skip.map(brief)).toEqual([
        ['acme', 'announced', '', 'email'],
        ['acme', 'sunset_in_90_days', '', 'email'],
        ['acme', 'brownout_in_48_hours', WINDOW_1, 'email'],
        ['acme', 'announced', '', 'webhook'],
        ['acme', 'sunset_in_90_days', '', 'webhook'],
        ['acme', 'brownout_in_48_hours', WINDOW_1, 'webhook'],
      ]);
    },
  );

  it('records nothing twice: a recorded notice is neither sent nor skipped again', () => {
    const now = at('2026-12-03T09:00:00Z');
    const { send, skip } = dueNotices(
      policy,
      now,
      forV1(recipient('acme', now)),
      recordedOf('announced', 'sunset_in_30_days'),
    );
    expect(send).toEqual([]);
    expect(skip.map(brief)).toEqual([
      ['acme', 'sunset_in_90_days', '', 'email'],
      ['acme', 'brownout_in_48_hours', WINDOW_1, 'email'],
    ]);
  });

  describe('brownout windows', () => {
    it(
      'tells of each window 48 h before its start, each its own notice (keyed by the window), until the window ' +
        'ends',
      () => {
        const inside = at('2026-12-01T11:00:00Z');
        const recorded = recordedOf('announced', 'sunset_in_90_days');
        expect(dueNotices(policy, inside, forV1(recipient('acme', inside)), recorded).send.map(brief)).toEqual([
          ['acme', 'brownout_in_48_hours', WINDOW_1, 'email'],
        ]);
        expect(
          dueNotices(policy, DUE.brownout_2, forV1(recipient('acme', DUE.brownout_2)), recorded).send.map(brief),
        ).toEqual([['acme', 'brownout_in_48_hours', WINDOW_2, 'email']]);
      },
    );

    it('never sends a notice of a window that has ended: skipped, and the milestone before it is the one due', () => {
      const ended = at('2026-12-01T12:00:00Z');
      const { send, skip } = dueNotices(policy, ended, forV1(recipient('acme', ended)), new Set());
      expect(send.map(brief)).toEqual([['acme', 'sunset_in_90_days', '', 'email']]);
      expect(skip.map(brief)).toEqual([
        ['acme', 'announced', '', 'email'],
        ['acme', 'brownout_in_48_hours', WINDOW_1, 'email'],
      ]);
    });
  });

  describe('recipients', () => {
    it('at announced: every consumer that ever called the version, however long ago', () => {
      const now = DUE.announced + HOUR;
      const { send } = dueNotices(
        policy,
        now,
        forV1(recipient('years-ago', at('2020-01-01T00:00:00Z')), recipient('today', now - HOUR)),
        new Set(),
      );
      expect(send.map(brief)).toEqual([
        ['years-ago', 'announced', '', 'email'],
        ['today', 'announced', '', 'email'],
      ]);
    });

    it(
      'at every later milestone: only those that called it in the 30 days before the check (30 days exactly ' +
        'included)',
      () => {
        const now = DUE.sunset_in_90_days + HOUR;
        const { send, skip } = dueNotices(
          policy,
          now,
          forV1(
            recipient('thirty-days', now - 30 * DAY),
            recipient('thirty-days-and-a-second', now - 30 * DAY - 1_000),
            recipient('yesterday', now - DAY),
          ),
          new Set(),
        );
        expect(send.map(brief)).toEqual([
          ['thirty-days', 'sunset_in_90_days', '', 'email'],
          ['yesterday', 'sunset_in_90_days', '', 'email'],
        ]);
        // Nothing is recorded for a consumer that is not told: it is told of the milestone due when it calls again.
        expect(skip.map(({ consumerId }) => consumerId)).toEqual(['thirty-days', 'yesterday']);
      },
    );

    it('after the sunset: the consumers still calling the removed version in the last 30 days get `removed`', () => {
      const now = DUE.removed + 40 * DAY;
      const { send } = dueNotices(
        policy,
        now,
        forV1(recipient('still-calling', now - DAY), recipient('moved', DUE.removed - DAY)),
        new Set(),
      );
      expect(send.map(brief)).toEqual([['still-calling', 'removed', '', 'email']]);
    });

    it('on each channel the consumer has, and on none without one', () => {
      const now = DUE.announced + HOUR;
      const { send } = dueNotices(
        policy,
        now,
        forV1(
          recipient('both', now, ['email', 'webhook']),
          recipient('hook', now, ['webhook']),
          recipient('none', now, []),
        ),
        new Set(),
      );
      expect(send.map(brief)).toEqual([
        ['both', 'announced', '', 'email'],
        ['both', 'announced', '', 'webhook'],
        ['hook', 'announced', '', 'webhook'],
      ]);
    });
  });

  it('has nothing due before the announcement, for a current version, or for versions without recipients', () => {
    const early = DUE.announced - 1;
    expect(dueNotices(policy, early, forV1(recipient('acme', early)), new Set())).toEqual({ send: [], skip: [] });
    expect(dueNotices(policy, DUE.removed, new Map([[2, [recipient('acme', DUE.removed)]]]), new Set())).toEqual({
      send: [],
      skip: [],
    });
    expect(dueNotices(policy, DUE.removed, new Map(), new Set())).toEqual({ send: [], skip: [] });
  });
});

describe('versionsWithNotices', () => {
  it(
    'names the versions with a milestone due: none before the announcement, v1 from then on, never a current ' + 'one',
    () => {
      expect(versionsWithNotices(policy, DUE.announced - 1)).toEqual([]);
      expect(versionsWithNotices(policy, DUE.announced)).toEqual([1]);
      expect(versionsWithNotices(policy, DUE.removed + 365 * DAY)).toEqual([1]);
    },
  );
});
