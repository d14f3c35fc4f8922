import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { GatewayAppOptions } from '../../src/app.js';
import { problemAtReload } from '../../src/versions/load-rules.js';
import { addCalendarMonths, versionPolicyFileSchema } from '../../src/versions/policy-file.js';
import { idleNoticeStore } from '../notices/idle-store.js';
import { startStubBackend, type StubBackend } from '../support/stub-backend.js';
import { TODAY, V1_SUNSET, buildTestGateway, designPolicyFile, type TestGateway } from '../support/helpers.js';

const HOUR = 3_600_000;
const iso = (epochMs: number): string => new Date(epochMs).toISOString();
const withDefault = (version: number) => ({ ...designPolicyFile, default_version: version });
/** The shipped policy with brownout windows on v1. */
const withWindows = (...windows: [number, number][]) => ({
  ...designPolicyFile,
  versions: [
    {
      ...designPolicyFile.versions[0],
      brownouts: windows.map(([start, end]) => ({ start: iso(start), end: iso(end) })),
    },
    designPolicyFile.versions[1],
  ],
});

let gateway: TestGateway | undefined;
let stub: StubBackend;
beforeAll(async () => (stub = await startStubBackend()));
afterAll(() => stub.close());
afterEach(async () => {
  await gateway?.app.close();
  gateway = undefined;
});

describe('a removed default_version', () => {
  const problemLines = (g: TestGateway) => g.logs.filter((line) => line.rule !== undefined);

  it(
    'does not stop a start: the policy is served as written, one error line says why and what to do, the gauge ' +
      'and readiness',
    async () => {
      gateway = await buildTestGateway(stub.url, { now: V1_SUNSET + 1 });
      expect(problemLines(gateway)).toEqual([
        expect.objectContaining({
          level: 50,
          rule: 'default_version_removed',
          defaultVersion: 1,
          phase: 'removed',
          sunset: '2027-01-01T00:00:00.000Z',
          successor: 2,
          msg:
            'version policy problem default_version_removed: default_version 1 was removed on ' +
            '2027-01-01T00:00:00.000Z: every request that names no version gets 410; set default_version to v2 ' +
            '(its successor) and reload the policy (docs/runbook.md#move-the-default)',
        }),
      ]);
      const unnamed = await gateway.app.inject({ url: '/orders/ord-1001' });
      expect(unnamed.statusCode).toBe(410);
      expect(unnamed.json()).toEqual({
        error: 'version_removed',
        code: 410,
        details: 'version 1 was removed on Fri, 01 Jan 2027 00:00:00 GMT; use version 2',
      });
      expect(unnamed.headers.link).toBe('</v2/orders/ord-1001>; rel="successor-version"');
      expect((await gateway.app.inject({ url: '/v2/orders/ord-1001' })).statusCode).toBe(200);
      expect((await gateway.app.inject({ url: '/orders/ord-1001', headers: { 'api-version': '2' } })).statusCode).toBe(
        200,
      );
      expect(await gateway.metricLines('api_version_policy_problems')).toEqual([
        'api_version_policy_problems{rule="default_version_removed"} 1',
        'api_version_policy_problems{rule="brownout_notice_late"} 0',
      ]);
      expect((await (await gateway.admin()).inject({ url: '/readyz' })).statusCode).toBe(200);
    },
  );

  it('turns the gauge to 1 when the sunset passes while the gateway runs, and to 0 once the default moves', async () => {
    gateway = await buildTestGateway(stub.url, { now: V1_SUNSET - 1 });
    expect(await gateway.metricLines('api_version_policy_problems')).toContain(
      'api_version_policy_problems{rule="default_version_removed"} 0',
    );
    gateway.setNow(V1_SUNSET);
    expect(await gateway.metricLines('api_version_policy_problems')).toContain(
      'api_version_policy_problems{rule="default_version_removed"} 1',
    );
    gateway.setNextPolicy(withDefault(2));
    expect(await gateway.app.versionPolicies.reload()).toEqual({ ok: true });
    expect(await gateway.metricLines('api_version_policy_problems')).toContain(
      'api_version_policy_problems{rule="default_version_removed"} 0',
    );
  });

  it('is refused at a reload, and the policy in force stays', async () => {
    gateway = await buildTestGateway('http://127.0.0.1:9', { policy: withDefault(2) });
    gateway.setNow(V1_SUNSET + 1);
    gateway.setNextPolicy(designPolicyFile);
    expect(await gateway.app.versionPolicies.reload()).toEqual({
      ok: false,
      reason:
        'API_VERSIONS_FILE is invalid at default_version: default_version 1 was removed on ' +
        '2027-01-01T00:00:00.000Z: every request that names no version would get 410; set it to v2 (its ' +
        'successor) (docs/runbook.md#move-the-default)',
    });
    expect(gateway.app.versionPolicies.current.policy.defaultAt(V1_SUNSET + 1)).toBe(2);
    expect(await gateway.metricLines('api_version_policy_problems')).toContain(
      'api_version_policy_problems{rule="default_version_removed"} 0',
    );
  });
});

describe('a deprecated or removed default_version is said', () => {
  const warnings = (g: TestGateway) =>
    g.logs.filter((line) => line.level === 40 && String(line.msg).startsWith('default_version is'));

  it('in a warn line at load and at each reload, none while it is current', async () => {
    gateway = await buildTestGateway('http://127.0.0.1:9');
    expect(warnings(gateway)).toEqual([
      expect.objectContaining({
        defaultVersion: 1,
        phase: 'deprecated',
        sunset: '2027-01-01T00:00:00.000Z',
        successor: 2,
        msg:
          'default_version is deprecated: requests that name no version get a version that will be removed; move ' +
          'default_version before its sunset',
      }),
    ]);
    gateway.setNextPolicy({ ...designPolicyFile, deprecation_header: 'date' });
    expect((await gateway.app.versionPolicies.reload()).ok).toBe(true);
    expect(warnings(gateway)).toHaveLength(2);
    gateway.setNextPolicy(withDefault(2));
    expect((await gateway.app.versionPolicies.reload()).ok).toBe(true);
    expect(warnings(gateway)).toHaveLength(2);
  });

  it('when its sunset passes while the gateway runs: an error line naming the rule', async () => {
    gateway = await buildTestGateway('http://127.0.0.1:9', { now: V1_SUNSET - 5 });
    const running = gateway;
    running.setNow(V1_SUNSET);
    const said = () => running.logs.filter((line) => line.defaultVersion !== undefined);
    await vi.waitFor(
      () =>
        expect(said().map((line) => [line.level, line.phase])).toEqual([
          [40, 'deprecated'],
          [50, 'removed'],
        ]),
      {
        timeout: 2_000,
      },
    );
    expect(said()[1]).toMatchObject({
      rule: 'default_version_removed',
      msg:
        'version policy problem default_version_removed: default_version 1 was removed on 2027-01-01T00:00:00.000Z: ' +
        'every request that names no version gets 410; set default_version to v2 (its successor) and reload the ' +
        'policy (docs/runbook.md#move-the-default)',
    });
  });

  it('in the gauge api_version_default_info', async () => {
    gateway = await buildTestGateway('http://127.0.0.1:9');
    const metric = async () =>
      (await gateway!.registry.getSingleMetricAsString('api_version_default_info')).split('\n').at(-1);
    expect(await metric()).toBe('api_version_default_info{version="1",phase="deprecated"} 1');
    gateway.setNow(V1_SUNSET);
    expect(await metric()).toBe('api_version_default_info{version="1",phase="removed"} 1');
    gateway.setNextPolicy(withDefault(2));
    expect((await gateway.app.versionPolicies.reload()).ok).toBe(true);
    expect(await metric()).toBe('api_version_default_info{version="2",phase="current"} 1');
  });
});

describe("a brownout window's notice lead time", () => {
  it(
    'refuses at a reload a new window that starts within 48 hours, naming the window and the earliest ' + 'start',
    async () => {
      gateway = await buildTestGateway('http://127.0.0.1:9');
      gateway.setNextPolicy(withWindows([TODAY + 40_000, TODAY + HOUR]));
      expect(await gateway.app.versionPolicies.reload()).toEqual({
        ok: false,
        reason:
          'API_VERSIONS_FILE is invalid at versions.0.brownouts.0: version 1: new brownout ' +
          '2026-11-22T12:00:40.000Z..2026-11-22T13:00:00.000Z starts less than 48 hours after this reload, so its ' +
          'notice cannot go out 48 hours ahead; start it at 2026-11-24T12:00:00.000Z or later',
      });
      expect(gateway.app.versionPolicies.current.policy.versions[0]?.brownouts).toBeUndefined();
    },
  );

  it('accepts a window 48 hours ahead, and keeps it across later reloads once it is near', async () => {
    gateway = await buildTestGateway('http://127.0.0.1:9');
    const start = TODAY + 48 * HOUR;
    gateway.setNextPolicy(withWindows([start, start + HOUR]));
    expect(await gateway.app.versionPolicies.reload()).toEqual({ ok: true });
    gateway.setNow(start - HOUR);
    gateway.setNextPolicy({ ...withWindows([start, start + HOUR]), deprecation_header: 'date' });
    expect(await gateway.app.versionPolicies.reload()).toEqual({ ok: true });
    // A window that has already ended harms nobody.
    gateway.setNextPolicy(withWindows([TODAY, TODAY + HOUR], [start, start + HOUR]));
    expect(await gateway.app.versionPolicies.reload()).toEqual({ ok: true });
  });

  const noticesWith = (recorded: ReadonlySet<string>): GatewayAppOptions['notices'] => ({
    store: idleNoticeStore({ recorded: async () => new Set(recorded) }),
    config: { email: undefined, intervalMs: 60_000, publicBaseUrl: undefined, sendTimeoutMs: 1_000 },
  });
  const lateLines = (g: TestGateway) => g.logs.filter((line) => line.rule === 'brownout_notice_late');
  const lateGauge = async (g: TestGateway) =>
    (await g.metricLines('api_version_policy_problems')).find((line) => line.includes('brownout_notice_late'));

  it(
    'does not stop a start: a window within 48 hours that no notice was recorded of is served, said in an ' +
      'error line and the gauge until it ends',
    async () => {
      const [start, end] = [TODAY + 40_000, TODAY + HOUR];
      gateway = await buildTestGateway(stub.url, {
        policy: withWindows([start, end]),
        notices: noticesWith(new Set()),
      });
      expect(gateway.app.versionPolicies.current.policy.versions[0]?.brownouts).toHaveLength(1);
      expect(lateLines(gateway)).toEqual([
        expect.objectContaining({
          level: 50,
          version: 1,
          start: '2026-11-22T12:00:40.000Z',
          end: '2026-11-22T13:00:00.000Z',
          msg:
            "version policy problem brownout_notice_late: version 1's brownout " +
            '2026-11-22T12:00:40.000Z..2026-11-22T13:00:00.000Z starts less than 48 hours after this start and no ' +
            'notice of it was recorded, so its consumers are told less than 48 hours ahead; start it at ' +
            '2026-11-24T12:00:00.000Z or later and reload the policy (docs/runbook.md#4-brownouts)',
        }),
      ]);
      expect(await lateGauge(gateway)).toBe('api_version_policy_problems{rule="brownout_notice_late"} 1');
      gateway.setNow(start);
      expect((await gateway.app.inject({ url: '/v1/orders/ord-1001' })).statusCode).toBe(410);
      gateway.setNow(end);
      expect(await lateGauge(gateway)).toBe('api_version_policy_problems{rule="brownout_notice_late"} 0');
    },
  );

  it('clears the gauge once a reload takes the window out', async () => {
    gateway = await buildTestGateway(stub.url, {
      policy: withWindows([TODAY + HOUR, TODAY + 2 * HOUR]),
      notices: noticesWith(new Set()),
    });
    expect(await lateGauge(gateway)).toBe('api_version_policy_problems{rule="brownout_notice_late"} 1');
    gateway.setNextPolicy(designPolicyFile);
    expect(await gateway.app.versionPolicies.reload()).toEqual({ ok: true });
    expect(await lateGauge(gateway)).toBe('api_version_policy_problems{rule="brownout_notice_late"} 0');
  });

  it('says nothing at start for a window some replica recorded a notice of, nor for one 48 hours ahead', async () => {
    const noticed = TODAY + HOUR;
    const recorded = new Set([
      `acme\n1\nbrownout_in_48_hours\n${new Date(noticed).toISOString()}\nwebhook`,
      `acme\n1\nsunset_in_90_days\n\nwebhook`,
    ]);
    gateway = await buildTestGateway(stub.url, {
      policy: withWindows([noticed, noticed + HOUR], [TODAY + 48 * HOUR, TODAY + 49 * HOUR]),
      notices: noticesWith(recorded),
    });
    expect(lateLines(gateway)).toEqual([]);
    expect(await lateGauge(gateway)).toBe('api_version_policy_problems{rule="brownout_notice_late"} 0');
  });
});

describe('an announcement at a reload', () => {
  const DAY = 24 * HOUR;
  const day = (epochMs: number): string => iso(epochMs).slice(0, 10);
  /** v1 current (not announced), v2 current: the policy before v1's deprecation. */
  const beforeDeprecation = {
    default_version: 2,
    versions: [
      { version: 1, status: 'current' },
      { version: 2, status: 'current' },
    ],
  };
  const announcing = (announced: number, sunset: number) => ({
    default_version: 2,
    versions: [
      { version: 1, status: 'deprecated', announced: iso(announced), sunset: iso(sunset), successor: 2 },
      { version: 2, status: 'current' },
    ],
  });

  it('refuses a deprecation backdated before today, saying the earliest sunset an announcement made now allows', async () => {
    gateway = await buildTestGateway('http://127.0.0.1:9', { policy: beforeDeprecation });
    // Announced 3 months back with a sunset 3 months ahead: a 3-month retirement dressed as a 6-month one.
    const backdated = announcing(TODAY - 92 * DAY, TODAY + 92 * DAY);
    const earliestSunset = addCalendarMonths(Date.parse(day(TODAY)), 6);
    gateway.setNextPolicy(backdated);
    expect(await gateway.app.versionPolicies.reload()).toEqual({
      ok: false,
      reason:
        `API_VERSIONS_FILE is invalid at versions.0.announced: version 1: announced ${iso(TODAY - 92 * DAY)} is ` +
        'before this reload, and v1 is not announced in the policy in force: a deprecation is announced from the ' +
        `day it is made, never backdated; announce it on ${day(TODAY)} or later, with its sunset on ` +
        `${iso(earliestSunset)} or later`,
    });
    expect(gateway.app.versionPolicies.current.policy.versions[0]?.status).toBe('current');
    // Today's date (midnight UTC, hours ago) is an announcement made today; so is now.
    gateway.setNextPolicy(announcing(Date.parse(day(TODAY)), earliestSunset));
    expect(await gateway.app.versionPolicies.reload()).toEqual({ ok: true });
  });

  it('keeps an announcement already in force, and refuses moving it earlier into the past', async () => {
    gateway = await buildTestGateway('http://127.0.0.1:9');
    // The shipped v1, announced 2026-06-01: a reload that keeps it, or moves its sunset, is accepted.
    gateway.setNextPolicy({ ...designPolicyFile, deprecation_header: 'date' });
    expect(await gateway.app.versionPolicies.reload()).toEqual({ ok: true });
    gateway.setNextPolicy(announcing(Date.parse('2026-05-01'), Date.parse('2027-01-01T00:00:00Z')));
    expect(await gateway.app.versionPolicies.reload()).toMatchObject({
      ok: false,
      reason: expect.stringContaining(
        'invalid at versions.0.announced: version 1: announced moved from 2026-06-01T00:00:00.000Z to ' +
          '2026-05-01T00:00:00.000Z, before this reload',
      ) as unknown,
    });
  });

  it('is not checked at start: nothing there tells which announcement is new', async () => {
    gateway = await buildTestGateway('http://127.0.0.1:9', {
      policy: announcing(TODAY - 92 * DAY, TODAY + 92 * DAY),
    });
    expect(gateway.app.versionPolicies.current.policy.versions[0]?.status).toBe('deprecated');
  });
});

describe('a move of the default at a reload', () => {
  const DAY = 24 * HOUR;
  const withMove = (at: number, announced: number) => ({
    ...designPolicyFile,
    default_version_changes: [{ at: iso(at), to: 2, announced: iso(announced) }],
  });

  it('accepts a move ahead announced today, and keeps it at later reloads once it has passed', async () => {
    gateway = await buildTestGateway('http://127.0.0.1:9');
    gateway.setNextPolicy(withMove(TODAY + 10 * DAY, TODAY));
    expect(await gateway.app.versionPolicies.reload()).toEqual({ ok: true });
    gateway.setNow(TODAY + 11 * DAY);
    gateway.setNextPolicy({ ...withMove(TODAY + 10 * DAY, TODAY), deprecation_header: 'date' });
    expect(await gateway.app.versionPolicies.reload()).toEqual({ ok: true });
    expect(gateway.app.versionPolicies.current.policy.defaultAt(TODAY + 11 * DAY)).toBe(2);
  });

  it('refuses a new move due before now, or announced before today, saying when it may be', async () => {
    gateway = await buildTestGateway('http://127.0.0.1:9');
    gateway.setNextPolicy(withMove(TODAY - HOUR, TODAY - 10 * DAY));
    expect(await gateway.app.versionPolicies.reload()).toEqual({
      ok: false,
      reason:
        `API_VERSIONS_FILE is invalid at default_version_changes.0.at: default move to v2 at ${iso(TODAY - HOUR)} is ` +
        `not after this reload: schedule it after ${iso(TODAY)}, announced on ${iso(TODAY).slice(0, 10)} or later ` +
        '(to move the default at once, set default_version)',
    });
    gateway.setNextPolicy(withMove(TODAY + 10 * DAY, TODAY - 10 * DAY));
    expect(await gateway.app.versionPolicies.reload()).toEqual({
      ok: false,
      reason:
        `API_VERSIONS_FILE is invalid at default_version_changes.0.announced: default move to v2 at ` +
        `${iso(TODAY + 10 * DAY)}: announced ${iso(TODAY - 10 * DAY)} is before this reload; announce it on ` +
        `${iso(TODAY).slice(0, 10)} or later`,
    });
    expect(gateway.app.versionPolicies.current.policy.defaultChanges).toEqual([]);
  });

  it('judges a removed default by the move in force: a policy whose default has moved before the sunset loads', () => {
    const moved = versionPolicyFileSchema.parse(withMove(V1_SUNSET - DAY, V1_SUNSET - 30 * DAY));
    const asInForce = (file: typeof moved) => ({
      versions: file.versions,
      defaultChanges: file.default_version_changes ?? [],
    });
    expect(problemAtReload(moved, V1_SUNSET, asInForce(moved))).toBeUndefined();
    const late = versionPolicyFileSchema.parse(withMove(V1_SUNSET + DAY, V1_SUNSET - 30 * DAY));
    expect(problemAtReload(late, V1_SUNSET, asInForce(late))?.path).toBe('default_version');
  });
});
