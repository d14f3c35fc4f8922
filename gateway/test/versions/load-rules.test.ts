import { afterEach, describe, expect, it, vi } from 'vitest';
import { problemAtLoad, refusedAtStart } from '../../src/versions/load-rules.js';
import { versionPolicyFileSchema } from '../../src/versions/policy-file.js';
import { TODAY, V1_SUNSET, buildTestGateway, configErrorOf, designPolicyFile, type TestGateway } from '../helpers.js';

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
afterEach(async () => {
  await gateway?.app.close();
  gateway = undefined;
});

describe('a removed default_version', () => {
  it('is refused at start with the file and the JSON path, in one line', () => {
    const file = versionPolicyFileSchema.parse(designPolicyFile);
    expect(
      configErrorOf(() => {
        const refused = refusedAtStart(file, 'ops/versions.json', V1_SUNSET);
        if (refused !== undefined) throw refused;
      }),
    ).toBe(
      'API_VERSIONS_FILE: ops/versions.json is invalid at default_version: default_version 1 was removed on ' +
        '2027-01-01T00:00:00.000Z: every request that names no version would get 410; set it to v2 (its successor) ' +
        '(docs/runbook.md#move-the-default)',
    );
    expect(refusedAtStart(file, 'ops/versions.json', V1_SUNSET - 1)).toBeUndefined();
    expect(problemAtLoad(versionPolicyFileSchema.parse(withDefault(2)), V1_SUNSET)).toBeUndefined();
  });

  it('is refused at a reload, and the policy in force stays', async () => {
    gateway = await buildTestGateway('http://127.0.0.1:9', { policy: withDefault(2) });
    gateway.setNow(V1_SUNSET + 1);
    gateway.setNextPolicy(designPolicyFile);
    expect(gateway.app.versionPolicies.reload()).toEqual({
      ok: false,
      reason:
        'API_VERSIONS_FILE is invalid at default_version: default_version 1 was removed on ' +
        '2027-01-01T00:00:00.000Z: every request that names no version would get 410; set it to v2 (its ' +
        'successor) (docs/runbook.md#move-the-default)',
    });
    expect(gateway.app.versionPolicies.current.policy.defaultVersion).toBe(2);
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
    expect(gateway.app.versionPolicies.reload().ok).toBe(true);
    expect(warnings(gateway)).toHaveLength(2);
    gateway.setNextPolicy(withDefault(2));
    expect(gateway.app.versionPolicies.reload().ok).toBe(true);
    expect(warnings(gateway)).toHaveLength(2);
  });

  it('when its sunset passes while the gateway runs', async () => {
    gateway = await buildTestGateway('http://127.0.0.1:9', { now: V1_SUNSET - 5 });
    const running = gateway;
    running.setNow(V1_SUNSET);
    await vi.waitFor(() => expect(warnings(running).map((line) => line.phase)).toEqual(['deprecated', 'removed']), {
      timeout: 2_000,
    });
    expect(warnings(running)[1]?.msg).toBe(
      'default_version is removed: every request that names no version gets 410; move default_version',
    );
  });

  it('in the gauge api_version_default_info', async () => {
    gateway = await buildTestGateway('http://127.0.0.1:9');
    const metric = async () =>
      (await gateway!.registry.getSingleMetricAsString('api_version_default_info')).split('\n').at(-1);
    expect(await metric()).toBe('api_version_default_info{version="1",phase="deprecated"} 1');
    gateway.setNow(V1_SUNSET);
    expect(await metric()).toBe('api_version_default_info{version="1",phase="removed"} 1');
    gateway.setNextPolicy(withDefault(2));
    expect(gateway.app.versionPolicies.reload().ok).toBe(true);
    expect(await metric()).toBe('api_version_default_info{version="2",phase="current"} 1');
  });
});

describe("a brownout window's notice lead time", () => {
  it(
    'refuses at a reload a new window that starts within 48 hours, naming the window and the earliest ' + 'start',
    async () => {
      gateway = await buildTestGateway('http://127.0.0.1:9');
      gateway.setNextPolicy(withWindows([TODAY + 40_000, TODAY + HOUR]));
      expect(gateway.app.versionPolicies.reload()).toEqual({
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
    expect(gateway.app.versionPolicies.reload()).toEqual({ ok: true });
    gateway.setNow(start - HOUR);
    gateway.setNextPolicy({ ...withWindows([start, start + HOUR]), deprecation_header: 'date' });
    expect(gateway.app.versionPolicies.reload()).toEqual({ ok: true });
    // A window that has already ended harms nobody.
    gateway.setNextPolicy(withWindows([TODAY, TODAY + HOUR], [start, start + HOUR]));
    expect(gateway.app.versionPolicies.reload()).toEqual({ ok: true });
  });

  it('is not checked at start: nothing there tells which window is new', async () => {
    gateway = await buildTestGateway('http://127.0.0.1:9', { policy: withWindows([TODAY + 40_000, TODAY + HOUR]) });
    expect(gateway.app.versionPolicies.current.policy.versions[0]?.brownouts).toHaveLength(1);
  });
});
