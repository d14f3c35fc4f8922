import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORDERS_V1_CHANGES } from '../../gateway/test/support/orders-v1.js';
import { startProcessStack, type ProcessStack } from '../e2e/process-stack.js';
import { DAY_MS, dateOf, daysFromToday, launchWithoutJavaScript, saveScreenshot } from './chromium.js';

/**
 * The admin status page in a real browser (test/browser/chromium.ts). The built gateway and backend run
 * as processes (`npm run test:browser` builds first) with a policy whose dates are relative to today,
 * so the page always shows a deprecated v1 with a brownout ahead. With JavaScript switched off the
 * page must still show everything, load its style under its own CSP, and reload itself.
 *
 * The screenshot is saved in the test's temp dir; `STATUS_PAGE_SCREENSHOT=docs/status-page.png npm run
 * test:browser` also writes it there (the picture of docs/runbook.md#the-status-page).
 */
const screenshotCopy = process.env.STATUS_PAGE_SCREENSHOT;

const dir = mkdtempSync(join(tmpdir(), 'status-page-browser-'));
const announced = daysFromToday(-30);
const sunset = daysFromToday(180);
const brownoutStart = daysFromToday(7) + 10 * 3_600_000;
const defaultMovesAt = daysFromToday(20);
const policy = {
  default_version: 1,
  default_version_changes: [{ at: `${dateOf(defaultMovesAt)}T00:00:00Z`, to: 2, announced: dateOf(daysFromToday(-1)) }],
  versions: [
    {
      version: 1,
      status: 'deprecated',
      announced: dateOf(announced),
      sunset: `${dateOf(sunset)}T00:00:00Z`,
      successor: 2,
      // As ops/versions.json declares it: the backend serves only version 2, the gateway presents version 1.
      changes: ORDERS_V1_CHANGES,
      brownouts: [
        { start: new Date(brownoutStart).toISOString(), end: new Date(brownoutStart + 2 * 3_600_000).toISOString() },
      ],
    },
    { version: 2, status: 'current' },
  ],
};

let stack: ProcessStack;
let context: BrowserContext;
let page: Page;
let consoleErrors: string[];

/** One request with exactly these headers (Node's client adds no User-Agent); resolves with the status. */
function send(path: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const req = request(`${stack.gatewayUrl}${path}`, { headers }, (res) => {
      res.resume();
      res.once('end', () => resolvePromise(res.statusCode ?? 0));
    });
    req.once('error', reject);
    req.end();
  });
}

async function sendTimes(times: number, path: string, headers: Record<string, string> = {}): Promise<void> {
  for (let i = 0; i < times; i++) expect(await send(path, headers)).toBe(200);
}

/** The texts of the cells of each row of `selector`'s body. */
async function rows(selector: string): Promise<string[][]> {
  const trs = page.locator(`${selector} tbody tr`);
  const out: string[][] = [];
  for (let i = 0; i < (await trs.count()); i++)
    out.push((await trs.nth(i).locator('td').allTextContents()).map((text) => text.trim()));
  return out;
}

beforeAll(async () => {
  const policyPath = join(dir, 'versions.json');
  writeFileSync(policyPath, JSON.stringify(policy));
  stack = await startProcessStack({ gatewayEnv: { API_VERSIONS_FILE: policyPath } });

  // 21 requests on v1 (three consumers and one that names itself nowhere), 29 on v2.
  await sendTimes(12, '/v1/orders/ord-1001', { 'x-client-id': 'acme-billing', 'user-agent': 'acme-http/2.1' });
  await sendTimes(6, '/orders/ord-1002', { 'user-agent': 'legacy-mobile/4.2 (iOS)' });
  await sendTimes(2, '/api/v1/orders/ord-1001', { 'x-client-id': 'partner-sync' });
  await sendTimes(1, '/v1/orders/ord-1002');
  await sendTimes(20, '/v2/orders/ord-1001', { 'x-client-id': 'storefront' });
  await sendTimes(9, '/orders/ord-1001', { 'api-version': '2', 'x-client-id': 'storefront' });

  ({ context, page, consoleErrors } = await launchWithoutJavaScript(dir));
  const res = await page.goto(`${stack.gatewayAdminUrl}/`);
  expect(res?.status()).toBe(200);
}, 120_000);

afterAll(async () => {
  await context?.close();
  await stack?.stop();
  // The profile goes; the screenshot stays in the temp dir for a person to look at.
  rmSync(join(dir, 'profile'), { recursive: true, force: true });
});

describe('the status page in Chromium, JavaScript off', () => {
  it("shows each version's lifecycle, requests and share", async () => {
    expect(await page.title()).toBe('API versions');
    expect(await page.locator('h1').textContent()).toBe('API versions');
    // Days are counted from the instant the page was rendered, which it prints.
    const asOf = /As of (\S+ \S+) UTC/.exec((await page.locator('p.meta').textContent()) ?? '')?.[1];
    const renderedAt = Date.parse(`${asOf?.replace(' ', 'T')}Z`);
    const versions = await rows('#versions');
    expect(versions).toEqual([
      [
        'v1 (default)',
        'deprecated',
        dateOf(announced),
        dateOf(sunset),
        // Rounded up, as every place that counts days left does (docs/versions.md#days-left).
        String(Math.ceil((sunset - renderedAt) / DAY_MS)),
        'v2 · what changes',
        `${dateOf(brownoutStart)} 10:00 UTC for 2 h (in ${Math.floor((brownoutStart - renderedAt) / DAY_MS)} d)`,
        '21',
        '6',
        '42.0 %',
      ],
      ['v2', 'current', '—', '—', '—', '—', '—', '29', '0', '58.0 %'],
    ]);
    const meters = page.locator('#versions meter');
    expect([await meters.nth(0).getAttribute('value'), await meters.nth(1).getAttribute('value')]).toEqual([
      '0.4200',
      '0.5800',
    ]);
  });

  it('says when the default moves, and how many recent requests it moves', async () => {
    expect(await page.locator('#default-version-change').textContent()).toMatch(
      new RegExp(
        `^The default version moves from v1 to v2 on ${dateOf(defaultMovesAt)} \\(in \\d+ d; announced ` +
          `${dateOf(daysFromToday(-1))}\\): from then on a request that names no version gets v2\\. 6 requests in ` +
          'the last 5 minutes named no version and got v1; their answers carry API-Default-Version-Change until ' +
          'then\\. Consumers pinned with a key keep their pin\\.$',
      ),
    );
  });

  it('lists the consumers of the deprecated version, heaviest first', async () => {
    expect(await page.locator('#consumers-v1').textContent()).toBe('Anonymous top consumers of v1 (deprecated)');
    const consumers = (await rows('table.consumers[data-version="1"]')).map((row) => row.slice(0, 3));
    expect(consumers).toEqual([
      ['1', 'acme-billing', '12'],
      ['2', 'legacy-mobile/4.2 (iOS)', '6'],
      ['3', 'partner-sync', '2'],
      ['4', 'unknown', '1'],
    ]);
    expect(await page.locator('table.consumers td time').first().textContent()).toMatch(/^\d+ (s|min) ago$/);
  });

  it('applies its own inline style under its CSP, loads nothing else and logs no error', async () => {
    // A string, so it runs in the page (the test's TypeScript has no DOM types).
    const background = await page.evaluate<string>(
      "getComputedStyle(document.querySelector('.phase-deprecated')).backgroundColor",
    );
    expect(background).toBe('rgb(255, 241, 214)');
    expect(await page.locator('script, link, img, iframe').count()).toBe(0);
    expect(consoleErrors).toEqual([]);
  });

  it('saves a screenshot of the page', async () => {
    expect(await saveScreenshot(page, dir, 'status-page.png', 1100, screenshotCopy)).toBeGreaterThan(300);
  });

  it('reloads itself within about 10 s and then shows the new requests', async () => {
    await sendTimes(5, '/v2/orders/ord-1001', { 'x-client-id': 'storefront' });
    await page.waitForEvent('load', { timeout: 30_000 });
    expect(page.url()).toBe(`${stack.gatewayAdminUrl}/`);
    expect((await rows('#versions')).map((row) => row.slice(7))).toEqual([
      ['21', '6', '38.2 %'],
      ['34', '0', '61.8 %'],
    ]);
  }, 45_000);

  it('shows markup sent as X-Client-Id or User-Agent as text, and runs none of it', async () => {
    const clientId = '<script>document.title="pwned"</script>';
    const userAgent = '<img src=x onerror="document.title=\'pwned\'">';
    expect(await send('/v1/orders/ord-1001', { 'x-client-id': clientId })).toBe(200);
    expect(await send('/v1/orders/ord-1001', { 'user-agent': userAgent })).toBe(200);
    await page.reload();
    expect(await page.title()).toBe('API versions');
    expect(await page.locator('script, img').count()).toBe(0);
    const shown = await page.locator('table.consumers td.consumer').allTextContents();
    expect(shown).toEqual(expect.arrayContaining([clientId, userAgent]));
  });

  it("previews the sunset with ?at=: v1 removed then, and what that does to today's consumers", async () => {
    const res = await page.goto(`${stack.gatewayAdminUrl}/?at=${dateOf(sunset)}`);
    expect(res?.status()).toBe(200);
    const [v1] = await rows('#versions');
    expect(v1?.slice(1, 5)).toEqual(['removed', dateOf(announced), dateOf(sunset), 'removed']);
    expect(await page.locator('#preview').textContent()).toBe(
      `At ${dateOf(sunset)}: what the policy does to today's consumers`,
    );
    expect((await rows('table.preview[data-version="1"]')).slice(0, 2)).toEqual([
      ['acme-billing', 'no key', 'refused: v1 removed (410 version_removed)'],
      ['legacy-mobile/4.2 (iOS)', 'no key', 'refused: v1 removed (410 version_removed)'],
    ]);
    expect(await page.locator('p.notices-due').textContent()).toContain(`removed (${dateOf(sunset)})`);
    expect(await page.locator('script, link, img, iframe').count()).toBe(0);
    expect(consoleErrors).toEqual([]);
    await page.goto(`${stack.gatewayAdminUrl}/`);
    expect((await rows('#versions'))[0]?.[1]).toBe('deprecated');
  });

  // Last: its consumer and requests would change what the tests above count.
  it("shows a registered consumer's verdict for moving to v2, linking its upgrade preview", async () => {
    const created = await fetch(`${stack.gatewayAdminUrl}/consumers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'order-reader', name: 'Order Reader', version: 1 }),
    });
    expect(created.status).toBe(201);
    const issued = await fetch(`${stack.gatewayAdminUrl}/consumers/order-reader/keys`, { method: 'POST' });
    const { key } = (await issued.json()) as { key: string };
    await sendTimes(2, '/v1/orders/ord-1001', { 'api-key': key });
    // The ledger is written every few seconds: the page shows the consumer once its calls are.
    const verdict = page.locator('table.registered[data-version="1"] td.verdict');
    await expect
      .poll(
        async () => {
          await page.goto(`${stack.gatewayAdminUrl}/`);
          return (await verdict.count()) > 0 ? verdict.first().textContent() : null;
        },
        { timeout: 20_000, interval: 1_000 },
      )
      .toBe('review');
    expect(await verdict.first().locator('a').getAttribute('href')).toBe(
      '/consumers/order-reader/upgrade-preview?to=2',
    );
    expect(await page.locator('table.registered[data-version="1"] thead th').last().textContent()).toBe('moving to v2');
  });
});
