import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumerWithKey } from '../../gateway/test/support/memory-store.js';
import { BROWNOUT_START, lifecyclePolicyFile, TODAY, V1_SUNSET } from '../../gateway/test/support/helpers.js';
import { judge } from '../src/check/findings.js';
import { formatResult } from '../src/check/format.js';
import { runCheck } from '../src/check/run.js';
import { USAGE } from '../src/check/args.js';
import { startLiveGateway, type LiveGateway } from './live-gateway.js';
import { startTamperingProxy, type TamperingProxy } from './tampering-proxy.js';

let live: LiveGateway;
beforeAll(async () => {
  live = await startLiveGateway({ policy: lifecyclePolicyFile });
  // acme calls v1's order twice in the path form, once under /api and once naming v1 in API-Version, and v2 once.
  const calls: [string, Record<string, string>][] = [
    ['/v1/orders/ord-1', {}],
    ['/v1/orders/ord-2', {}],
    ['/api/v1/orders/ord-1', {}],
    ['/orders/ord-1', { 'api-version': '1' }],
    ['/v2/orders/ord-1', {}],
  ];
  for (const [path, headers] of calls) {
    const res = await fetch(`${live.url}${path}`, { headers: { 'api-key': live.key, ...headers } });
    expect(res.status, path).toBe(200);
  }
  await live.gateway.app.consumers.ledger.flush();
});
afterAll(async () => {
  await live.close();
});

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * version-router-check with these arguments and API_KEY (acme's unless given), the gateway's clock at `now`, the
 * check's machine's at `machineNow` (`now` unless given).
 */
async function check(
  argv: string[],
  options: { apiKey?: string | undefined; now?: number; machineNow?: number; timeoutMs?: number } = {},
): Promise<Outcome> {
  const { now = TODAY, machineNow = now, timeoutMs } = options;
  const apiKey = 'apiKey' in options ? options.apiKey : live.key;
  live.gateway.setNow(now);
  const outcome = { code: -1, stdout: '', stderr: '' };
  outcome.code = await runCheck({
    argv,
    env: apiKey === undefined ? {} : { API_KEY: apiKey },
    now: () => new Date(machineNow),
    fetch: globalThis.fetch,
    stdout: (text) => void (outcome.stdout += text),
    stderr: (text) => void (outcome.stderr += text),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });
  return outcome;
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const DAY = 86_400_000;
const BREAKING = 'removed field user_id; removed field total';
/** 30 days back from TODAY: what the check counts by default (acme registered long before). */
const SINCE = new Date(TODAY - 30 * DAY).toISOString();

describe('version-router-check against the gateway', () => {
  it('exits 0 and says so when nothing is removed, browned out or sunsets within --days (text)', async () => {
    const outcome = await check(['--url', live.url, '--days', '5']);
    expect(outcome).toEqual({
      code: 0,
      stderr: '',
      stdout: [
        `version-router-check: consumer acme at ${live.url}, 2026-11-22T12:00:00.000Z, calls since ${SINCE}`,
        `ok   GET /api/v1/orders/{id} (v1, 1 request): deprecated, sunsets 2027-01-01T00:00:00.000Z, in 40 days; ` +
          `move to v2, send GET /api/v2/orders/{id}: ${live.url}/versions/1/changes`,
        `     breaking: ${BREAKING}`,
        `ok   GET /orders/{id} with API-Version: 1 (v1, 1 request): deprecated, sunsets 2027-01-01T00:00:00.000Z, ` +
          `in 40 days; move to v2, send GET /orders/{id} with API-Version: 2: ${live.url}/versions/1/changes`,
        `     breaking: ${BREAKING}`,
        `ok   GET /v1/orders/{id} (v1, 2 requests): deprecated, sunsets 2027-01-01T00:00:00.000Z, in 40 days; move ` +
          `to v2, send GET /v2/orders/{id}: ${live.url}/versions/1/changes`,
        `     breaking: ${BREAKING}`,
        'OK: no operation acme called is removed, browned out now, or sunsets or is browned out within 5 days.',
        '',
      ].join('\n'),
    });
  });

  it('exits 1 when a called operation is browned out within --days (90 by default; markdown)', async () => {
    const outcome = await check(['--url', `${live.url}/`, '--format', 'markdown']);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toBe('');
    const row = (call: string, instead: string): string =>
      `| ❌ | \`${call}\` | v1 | browned out 2026-12-01T10:00:00.000Z to 2026-12-01T12:00:00.000Z, in 9 days: ` +
      `answered 410 Gone then; sunsets 2027-01-01T00:00:00.000Z, in 40 days | [v2](` +
      `${live.url}/versions/1/changes): \`${instead}\` | removed field user_id<br>removed field total |`;
    expect(outcome.stdout).toBe(
      [
        '### ❌ API deprecations: 3 operations to change now',
        '',
        `Consumer \`acme\` on ${live.url}, checked 2026-11-22T12:00:00.000Z, calls since ${SINCE}. An operation ` +
          `fails the check when it is removed, browned out now, or sunsets or is browned out within 90 days.`,
        '',
        '| | Call | Version | Status | Move to | Breaking changes |',
        '|---|---|---|---|---|---|',
        row('GET /api/v1/orders/{id}', 'GET /api/v2/orders/{id}'),
        row('GET /orders/{id} with API-Version: 1', 'GET /orders/{id} with API-Version: 2'),
        row('GET /v1/orders/{id}', 'GET /v2/orders/{id}'),
        '',
      ].join('\n'),
    );
  });

  it('exits 1 during a brownout whatever --days says (junit)', async () => {
    const now = BROWNOUT_START + 3_600_000;
    const outcome = await check(['--url', live.url, '--days', '0', '--format', 'junit'], { now });
    expect(outcome.code).toBe(1);
    const status =
      'browned out now, until 2026-12-01T12:00:00.000Z: answered 410 Gone; sunsets 2027-01-01T00:00:00.000Z, in 31 ' +
      'days';
    const testcase = (call: string, instead: string): string =>
      [
        `    <testcase classname="version-router.v1" name="${call}">`,
        `      <failure type="browned-out" message="${status}">${call} (v1): ${status}`,
        `move to v2, send ${instead}: ${live.url}/versions/1/changes`,
        'breaking: removed field user_id',
        'breaking: removed field total</failure>',
        '    </testcase>',
      ].join('\n');
    expect(outcome.stdout).toBe(
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<testsuites name="version-router-check" tests="3" failures="3" errors="0">',
        '  <testsuite name="API deprecations of acme" tests="3" failures="3" errors="0" ' +
          'timestamp="2026-12-01T11:00:00.000Z">',
        testcase('GET /api/v1/orders/{id}', 'GET /api/v2/orders/{id}'),
        testcase('GET /orders/{id} with API-Version: 1', 'GET /orders/{id} with API-Version: 2'),
        testcase('GET /v1/orders/{id}', 'GET /v2/orders/{id}'),
        '  </testsuite>',
        '</testsuites>',
        '',
      ].join('\n'),
    );
  });

  it('exits 1 once the version is removed, for calls within --since', async () => {
    const outcome = await check(['--url', live.url, '--days', '0', '--since', '60d'], { now: V1_SUNSET });
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toContain(
      `FAIL GET /v1/orders/{id} (v1, 2 requests): removed on 2027-01-01T00:00:00.000Z: answered 410 Gone; move to ` +
        `v2, send GET /v2/orders/{id}: ${live.url}/versions/1/changes\n`,
    );
    expect(
      outcome.stdout.endsWith(
        'FAILED: 3 operations acme called are removed, browned out now, or sunsets or is browned out within 0 days.\n',
      ),
    ).toBe(true);
  });

  it('exits 0 for a consumer that calls no deprecated version, in each format', async () => {
    const text = await check(['--url', live.url], { apiKey: live.idleKey });
    expect(text).toEqual({
      code: 0,
      stderr: '',
      stdout:
        `version-router-check: consumer idle at ${live.url}, 2026-11-22T12:00:00.000Z, calls since ${SINCE}\nOK: ` +
        `idle calls no deprecated or removed version.\n`,
    });
    const markdown = await check(['--url', live.url, '--format', 'markdown'], { apiKey: live.idleKey });
    expect(markdown.code).toBe(0);
    expect(markdown.stdout).toMatch(
      /^### ✅ API deprecations: nothing to change within 90 days\n[^]*\n`idle` calls no deprecated or removed version\.\n$/,
    );
    const junit = await check(['--url', live.url, '--format', 'junit'], { apiKey: live.idleKey });
    expect(junit.code).toBe(0);
    expect(junit.stdout).toContain('<testsuites name="version-router-check" tests="1" failures="0" errors="0">');
    expect(junit.stdout).toContain(
      '<testcase classname="version-router" name="idle calls no deprecated or removed version"/>',
    );
  });

  it('exits 2 with one line for a refused key', async () => {
    expect(await check(['--url', live.url], { apiKey: 'vr_nonsense' })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'version-router-check: the gateway refused the key in API_KEY (401 invalid API key)\n',
    });
  });

  it('exits 2 with one line for an unreachable gateway', async () => {
    const port = await closedPort();
    expect(await check(['--url', `http://127.0.0.1:${port}`])).toEqual({
      code: 2,
      stdout: '',
      stderr: `version-router-check: cannot reach http://127.0.0.1:${port}/deprecations: ECONNREFUSED\n`,
    });
  });
});

describe('version-router-check reads what the consumer still calls', () => {
  it('fails minutes before a brownout within --days, though the sunset is further away', async () => {
    const outcome = await check(['--url', live.url, '--days', '30'], { now: BROWNOUT_START - 5 * 60_000 });
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toContain(
      'FAIL GET /v1/orders/{id} (v1, 2 requests): browned out 2026-12-01T10:00:00.000Z to 2026-12-01T12:00:00.000Z, ' +
        'in less than a day: answered 410 Gone then; sunsets 2027-01-01T00:00:00.000Z, in 31 days;',
    );
    // --days 0: only what is removed or browned out now fails.
    expect((await check(['--url', live.url, '--days', '0'], { now: BROWNOUT_START - 5 * 60_000 })).code).toBe(0);
  });

  it('passes after the sunset for a consumer whose last call is older than the window read (30 days)', async () => {
    const after = await check(['--url', live.url, '--days', '0'], { now: V1_SUNSET + DAY });
    expect(after.code).toBe(0);
    expect(after.stdout).toContain(`calls since ${new Date(V1_SUNSET + DAY - 30 * DAY).toISOString()}\n`);
    expect((await check(['--url', live.url, '--days', '0', '--since', '60d'], { now: V1_SUNSET + DAY })).code).toBe(1);
    expect(
      (
        await check(['--url', live.url, '--days', '0', '--since', new Date(TODAY - DAY).toISOString()], {
          now: V1_SUNSET + DAY,
        })
      ).code,
    ).toBe(1);
  });

  it("judges on the gateway's clock, not the machine's: a rehearsal's removal fails a check run today", async () => {
    const moved = await check(['--url', live.url, '--days', '0', '--since', '60d'], {
      now: V1_SUNSET + DAY,
      machineNow: TODAY,
    });
    expect(moved.code).toBe(1);
    expect(moved.stdout).toContain(
      `version-router-check: consumer acme at ${live.url}, ${new Date(V1_SUNSET + DAY).toISOString()}, calls since ` +
        `${new Date(V1_SUNSET + DAY - 60 * DAY).toISOString()}\n`,
    );
    expect(moved.stdout).toContain('FAIL GET /v1/orders/{id} (v1, 2 requests): removed on 2027-01-01T00:00:00.000Z');
    // The default window is the gateway's own 30 days back on its clock: nothing called since, the check passes.
    const window = await check(['--url', live.url, '--days', '0'], { now: V1_SUNSET + DAY, machineNow: TODAY });
    expect(window.code).toBe(0);
    expect(window.stdout).toContain(`calls since ${new Date(V1_SUNSET + DAY - 30 * DAY).toISOString()}\n`);
  });

  it('says a consumer that moved its pin off v1 and calls it no more is done, and passes', async () => {
    const { key: apiKey } = await consumerWithKey(live.gateway.consumerStore, 'mover', {
      pinned_version: 1,
      nowMs: TODAY - 60 * DAY,
    });
    await live.gateway.app.consumers.keys.refresh();
    live.gateway.setNow(TODAY);
    const bare = await fetch(`${live.url}/orders/ord-1`, { headers: { 'api-key': apiKey } });
    expect(bare.status).toBe(200);
    await live.gateway.app.consumers.ledger.flush();
    const before = await check(['--url', live.url], { apiKey });
    expect(before.code).toBe(1);
    expect(before.stdout).toContain('FAIL GET /orders/{id} naming no version (your pin: v1) (v1, 1 request)');
    expect(before.stdout).toContain(
      'FAILED: mover is pinned to a version that stops serving requests within 90 days (a brownout or its sunset).',
    );

    live.gateway.setNow(TODAY + 60_000);
    const moved = await fetch(`${live.url}/consumer/version`, {
      method: 'PUT',
      headers: { 'api-key': apiKey },
      body: '{"version":2}',
    });
    expect(moved.status).toBe(200);
    const after = await check(['--url', live.url], { apiKey, now: TODAY + 120_000 });
    expect(after).toEqual({
      code: 0,
      stderr: '',
      stdout: [
        `version-router-check: consumer mover at ${live.url}, ${new Date(TODAY + 120_000).toISOString()}, calls ` +
          `since ${new Date(TODAY + 60_000).toISOString()}`,
        `done v1: mover made no call of it since ${new Date(TODAY + 60_000).toISOString()}, and its requests that ` +
          'name no version get another version',
        'OK: mover calls no deprecated or removed version.',
        '',
      ].join('\n'),
    });
    const markdown = await check(['--url', live.url, '--format', 'markdown'], { apiKey, now: TODAY + 120_000 });
    expect(markdown.stdout).toContain(`\n✅ Done with v1: mover made no call of it since`);
    const junit = await check(['--url', live.url, '--format', 'junit'], { apiKey, now: TODAY + 120_000 });
    expect(junit.stdout).toContain('<testcase classname="version-router.v1" name="done with v1">');
  });
});

describe("version-router-check fails closed on the gateway's answers", () => {
  let proxy: TamperingProxy;
  beforeAll(async () => {
    proxy = await startTamperingProxy(live.url);
  });
  afterAll(async () => {
    await proxy.close();
  });

  const oneLine = (outcome: Outcome, line: string) =>
    expect(outcome).toEqual({ code: 2, stdout: '', stderr: `version-router-check: ${line}\n` });

  it('exits 2 with one line when the report stalls half-way', async () => {
    proxy.tamper.set('/deprecations', { stall: true });
    const outcome = await check(['--url', proxy.url], { timeoutMs: 1_000 });
    oneLine(
      outcome,
      `GET ${proxy.url}/deprecations answered 200, but the body did not arrive whole within 1000 ms (The operation ` +
        'was aborted due to timeout)',
    );
  });

  it('exits 2 with one line when the report breaks off (a reset)', async () => {
    proxy.tamper.set('/deprecations', { reset: true });
    oneLine(
      await check(['--url', proxy.url]),
      `GET ${proxy.url}/deprecations answered 200, but the body broke off (ECONNRESET)`,
    );
  });

  it('exits 2 with one line when the version list stalls or breaks off', async () => {
    proxy.tamper.delete('/deprecations');
    proxy.tamper.set('/versions', { reset: true });
    oneLine(
      await check(['--url', proxy.url]),
      `GET ${proxy.url}/versions answered 200, but the body broke off (ECONNRESET)`,
    );
    proxy.tamper.set('/versions', { stall: true });
    oneLine(
      await check(['--url', proxy.url], { timeoutMs: 1_000 }),
      `GET ${proxy.url}/versions answered 200, but the body did not arrive whole within 1000 ms (The operation was ` +
        'aborted due to timeout)',
    );
    proxy.tamper.delete('/versions');
  });

  const version = {
    version: 1,
    phase: 'deprecated',
    sunset: '2027-01-01T00:00:00.000Z',
    successor: 2,
    changes: '/versions/1/changes',
    operations: [{ operation: 'GET /v1/orders/{id}', requests: 2, last_seen: '', breaking_changes: [] }],
  };
  const operation = version.operations[0];
  it.each([
    ['not JSON', '{"consumer":'],
    ['an array', '[]'],
    ['no consumer', JSON.stringify({ versions: [] })],
    ['versions that are no list', JSON.stringify({ consumer: 'acme', versions: {} })],
    ['a version that is null', JSON.stringify({ consumer: 'acme', versions: [null] })],
    ['a sunset that is no date', JSON.stringify({ consumer: 'acme', versions: [{ ...version, sunset: 'soon' }] })],
    ['an unknown phase', JSON.stringify({ consumer: 'acme', versions: [{ ...version, phase: 'gone' }] })],
    ['a successor that is text', JSON.stringify({ consumer: 'acme', versions: [{ ...version, successor: 'v2' }] })],
    [
      'requests that are text',
      JSON.stringify({ consumer: 'acme', versions: [{ ...version, operations: [{ ...operation, requests: '2' }] }] }),
    ],
    [
      'a breaking change that is null',
      JSON.stringify({
        consumer: 'acme',
        versions: [{ ...version, operations: [{ ...operation, breaking_changes: [null] }] }],
      }),
    ],
    ['a pin that is text', JSON.stringify({ consumer: 'acme', pinned_version: 'v1', versions: [] })],
  ])('exits 2 with one line for a report with %s', async (what, body) => {
    proxy.tamper.set('/deprecations', { body });
    oneLine(
      await check(['--url', proxy.url]),
      what === 'not JSON'
        ? `GET ${proxy.url}/deprecations answered 200 without JSON`
        : `GET ${proxy.url}/deprecations answered JSON that is not a deprecation report`,
    );
    proxy.tamper.delete('/deprecations');
  });

  it.each([
    ['no list', '{"versions":null}'],
    ['an entry that is null', '{"versions":[null]}'],
    [
      'a brownout that is no window',
      '{"versions":[{"version":1,"phase":"deprecated","sunset":null,"brownouts":[{}]}]}',
    ],
  ])('exits 2 with one line for a version list with %s', async (_what, body) => {
    proxy.tamper.set('/versions', { body });
    oneLine(await check(['--url', proxy.url]), `GET ${proxy.url}/versions answered JSON that is not a version list`);
    proxy.tamper.delete('/versions');
  });
});

describe("version-router-check and the consumer's pin", () => {
  /** A consumer of the live gateway pinned to `version`, which never called a version. */
  async function pinnedTo(version: number): Promise<{ id: string; apiKey: string }> {
    const id = `pinned-to-${version}`;
    const { key } = await consumerWithKey(live.gateway.consumerStore, id, {
      pinned_version: version,
      nowMs: TODAY - 60 * DAY,
    });
    await live.gateway.app.consumers.keys.refresh();
    return { id, apiKey: key };
  }

  it('exits 1 when the pin names a version the policy no longer lists, in each format', async () => {
    const { id, apiKey } = await pinnedTo(7);
    const pin =
      'pinned to v7, which the gateway no longer lists: a request that names no version is answered 406 Not ' +
      'Acceptable; pin one of v1, v2 (PUT /consumer/version)';
    expect(await check(['--url', live.url, '--days', '0'], { apiKey })).toEqual({
      code: 1,
      stderr: '',
      stdout: [
        `version-router-check: consumer ${id} at ${live.url}, 2026-11-22T12:00:00.000Z, calls since ${SINCE}`,
        `FAIL ${pin}`,
        `FAILED: ${id} is pinned to a version that serves no request.`,
        '',
      ].join('\n'),
    });
    const markdown = await check(['--url', live.url, '--format', 'markdown'], { apiKey });
    expect(markdown.code).toBe(1);
    expect(markdown.stdout).toContain('### ❌ API deprecations: the pin to change now\n');
    expect(markdown.stdout).toContain(`\n❌ Pin: ${pin}\n`);
    const junit = await check(['--url', live.url, '--format', 'junit'], { apiKey });
    expect(junit.code).toBe(1);
    expect(junit.stdout).toContain('<testsuites name="version-router-check" tests="1" failures="1" errors="0">');
    expect(junit.stdout).toContain(
      `    <testcase classname="version-router.pin" name="pinned to v7">\n      <failure type="pin-unlisted" ` +
        `message="${pin}">${pin}</failure>\n    </testcase>`,
    );
  });

  it('exits 1 when the pin names a version browned out or sunsetting within --days, or removed', async () => {
    const { apiKey } = await pinnedTo(1);
    expect((await check(['--url', live.url, '--days', '0'], { apiKey })).code).toBe(0);
    const soon = await check(['--url', live.url, '--days', '30'], { apiKey });
    expect(soon.code).toBe(1);
    expect(soon.stdout.split('\n').slice(1, 2)).toEqual([
      'FAIL pinned to v1, browned out 2026-12-01T10:00:00.000Z to 2026-12-01T12:00:00.000Z: a request that names no ' +
        'version is answered 410 Gone then; pin one of v2 (PUT /consumer/version)',
    ]);
    expect(soon.stdout).toContain(
      'FAILED: pinned-to-1 is pinned to a version that stops serving requests within 30 days (a brownout or its sunset).',
    );
    const removed = await check(['--url', live.url, '--days', '0'], { apiKey, now: V1_SUNSET });
    expect(removed.code).toBe(1);
    expect(removed.stdout.split('\n')[1]).toBe(
      'FAIL pinned to v1, removed on 2027-01-01T00:00:00.000Z: a request that names no version is answered 410 ' +
        'Gone; pin one of v2 (PUT /consumer/version)',
    );
  });
});

describe('version-router-check command line', () => {
  it('prints its usage for --help and exits 0', async () => {
    expect(await check(['--help'], { apiKey: undefined })).toEqual({ code: 0, stdout: USAGE, stderr: '' });
  });

  it.each([
    [['--url', 'http://x', '--verbose'], "Unknown option '--verbose'"],
    [[], '--url <gateway> is required'],
    [['--url', 'ftp://x'], '--url must be an http:// or https:// URL, not "ftp://x"'],
    [['--url', 'not a url'], '--url must be an http:// or https:// URL, not "not a url"'],
    [['--url', 'http://x', '--days=-1'], '--days must be a whole number of days, not "-1"'],
    [['--url', 'http://x', '--days', 'soon'], '--days must be a whole number of days, not "soon"'],
    [['--url', 'http://x', '--format', 'html'], '--format must be one of text, markdown, junit, not "html"'],
    [
      ['--url', 'http://x', '--since', 'last week'],
      '--since must be a span back (30d, 12h), a date (2026-11-01) or an RFC 3339 date-time (2026-11-01T09:00:00Z), ' +
        'not "last week"',
    ],
    [['--url', 'http://x', 'extra'], "Unexpected argument 'extra'"],
  ])('%j → exit 2: %s', async (argv, reason) => {
    const outcome = await check(argv);
    expect(outcome.code).toBe(2);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr).toMatch(
      new RegExp(`^version-router-check: ${reason.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.* \\(see --help\\)\\n$`),
    );
  });

  it('exits 2 without API_KEY', async () => {
    expect(await check(['--url', live.url], { apiKey: undefined })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'version-router-check: API_KEY is not set: give the consumer key the gateway issued\n',
    });
  });
});

describe('version-router-check against a gateway whose report names no call', () => {
  it('names the operation and the successor only', () => {
    const answer = {
      consumer: 'acme',
      versions: [
        {
          version: 1,
          phase: 'deprecated' as const,
          sunset: '2027-01-01T00:00:00.000Z',
          successor: 2,
          changes: '/versions/1/changes',
          operations: [{ operation: 'GET /v1/orders/{id}', requests: 2, last_seen: '', breaking_changes: [] }],
        },
      ],
    };
    const result = judge(answer, new Map(), 'https://api.example.com', new Date(TODAY), 30);
    expect(formatResult(result, 'text').split('\n')[1]).toBe(
      'ok   GET /v1/orders/{id} (v1, 2 requests): deprecated, sunsets 2027-01-01T00:00:00.000Z, in 40 days; move to ' +
        'v2: https://api.example.com/versions/1/changes',
    );
  });
});
