import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ordersDocument } from '../../gateway/test/support/documents.js';
import { ORDERS_V1_CHANGES } from '../../gateway/test/support/orders-v1.js';
import { designPolicyFile, TODAY } from '../../gateway/test/support/helpers.js';
import { runCheck } from '../src/check/run.js';
import { startLiveGateway, type LiveGateway } from './live-gateway.js';

/** v1 declared as what changed to v2: the orders' user_id renamed, total converted, currency added. */
const DECLARED_POLICY = {
  ...designPolicyFile,
  versions: [{ ...designPolicyFile.versions[0], changes: ORDERS_V1_CHANGES }, designPolicyFile.versions[1]],
};
const SINCE = new Date(TODAY - 30 * 86_400_000).toISOString();

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

async function check(live: LiveGateway, argv: string[], apiKey = live.key): Promise<Outcome> {
  const outcome = { code: -1, stdout: '', stderr: '' };
  outcome.code = await runCheck({
    argv: ['--url', live.url, ...argv],
    env: { API_KEY: apiKey },
    now: () => new Date(TODAY),
    fetch: globalThis.fetch,
    stdout: (text) => void (outcome.stdout += text),
    stderr: (text) => void (outcome.stderr += text),
  });
  return outcome;
}

describe('version-router-check --preview <n>, a consumer reading GET /v1/orders/{id} declared as changes', () => {
  let live: LiveGateway;
  beforeAll(async () => {
    live = await startLiveGateway({ policy: DECLARED_POLICY });
    const res = await fetch(`${live.url}/v1/orders/ord-1`, { headers: { 'api-key': live.key } });
    expect(res.status).toBe(200);
    await live.gateway.app.consumers.ledger.flush();
  });
  afterAll(() => live.close());

  it('prints `review` with the rename and the conversion, and exits 0 (text)', async () => {
    const outcome = await check(live, ['--preview', '2']);
    expect(outcome).toEqual({
      code: 0,
      stderr: '',
      stdout: [
        `version-router-check --preview 2: consumer acme at ${live.url}, from v1 to v2, calls since ${SINCE}`,
        `call GET /v1/orders/{id} (1 request, last ${new Date(TODAY).toISOString()}): send GET /v2/orders/{id}`,
        'CHANGE GET /v1/orders/{id} (v1→v2): user_id is now customer_id [breaking]',
        'CHANGE GET /v1/orders/{id} (v1→v2): total is now total_cents (x100) [breaking]',
        'change GET /v1/orders/{id} (v1→v2): added field currency',
        'REVIEW: review: breaking changes touch the calls acme made.',
        '',
      ].join('\n'),
    });
  });

  it('prints `safe` for a consumer that never called the orders (markdown), and exits 0', async () => {
    const outcome = await check(live, ['--preview', '2', '--format', 'markdown'], live.idleKey);
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toContain('### ✅ Moving to API v2: safe: no breaking change touches the calls idle made');
    expect(outcome.stdout).toMatch(/\n\d+ other changes? on operations it did not call\.\n$/);
  });

  it('writes a JUnit report with a passed case per call (junit)', async () => {
    const outcome = await check(live, ['--preview', '2', '--format', 'junit']);
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toContain('<testsuites name="version-router-check" tests="1" failures="0" errors="0">');
    expect(outcome.stdout).toContain(
      '<testcase classname="version-router.preview.v2" name="GET /v1/orders/{id}">\n      <system-out>' +
        'GET /v1/orders/{id} (v1→v2): user_id is now customer_id [breaking]\n',
    );
  });

  it.each([
    [['--preview', 'two'], 'version-router-check: --preview must be a version number (2), not "two" (see --help)\n'],
    [['--preview', '0'], 'version-router-check: --preview must be a version number (2), not "0" (see --help)\n'],
    [
      ['--preview', '5'],
      `version-router-check: GET ${'URL'}/consumer/upgrade-preview answered 422 unsupported version: versions a ` +
        'preview from v1 may name: 1, 2\n',
    ],
  ])('exits 2 with one line for %j', async (argv, stderr) => {
    const outcome = await check(live, argv);
    expect(outcome).toEqual({ code: 2, stdout: '', stderr: stderr.replace('URL', live.url) });
  });

  it('exits 2 when the gateway refuses the key', async () => {
    const outcome = await check(live, ['--preview', '2'], 'vr_not-a-key');
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toMatch(/^version-router-check: the gateway refused the key in API_KEY \(401 /);
  });
});

describe('version-router-check --preview <n>, a consumer calling an operation n does not have', () => {
  let live: LiveGateway;
  beforeAll(async () => {
    live = await startLiveGateway();
    const v2 = ordersDocument(2);
    const paths = Object.entries(v2.paths as Record<string, unknown>).filter(([path]) => !path.includes('/orders'));
    live.backend.documents.set('/v2/openapi.json', JSON.stringify({ ...v2, paths: Object.fromEntries(paths) }));
    const res = await fetch(`${live.url}/v1/orders/ord-1`, { headers: { 'api-key': live.key } });
    expect(res.status).toBe(200);
    await live.gateway.app.consumers.ledger.flush();
  });
  afterAll(() => live.close());

  it.each(['text', 'markdown', 'junit'])('exits 1 on `blocked`, naming the call (%s)', async (format) => {
    const outcome = await check(live, ['--preview', '2', '--format', format]);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toBe('');
    const expected = {
      text: 'BLOCKED GET /v1/orders/{id}: v2 does not have it\n',
      markdown: '❌ `GET /v1/orders/{id}`: v2 does not have it.',
      junit: '<failure type="blocked" message="v2 does not have GET /v1/orders/{id}">',
    }[format];
    expect(outcome.stdout).toContain(expected);
  });
});
