import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProcessStack, type ProcessStack } from '../e2e/process-stack.js';
import {
  dateOf,
  launchWithoutJavaScript,
  saveScreenshot,
  V1_ANNOUNCED,
  V1_SUNSET,
  writeDeprecatedV1Policy,
} from './chromium.js';

/**
 * The migration guide (`GET /versions/1/changes`) in a real browser (test/browser/chromium.ts), from the
 * built gateway in front of the built backend, whose OpenAPI documents it compares: Chromium's own
 * Accept header gets the page. With JavaScript off it must show every change, load its style under
 * its own CSP, and load nothing else. The status page's link leads to it on the admin port.
 *
 * `MIGRATION_GUIDE_SCREENSHOT=docs/migration-guide.png npm run test:browser` also writes the screenshot
 * there (the picture of docs/behaviour.md#migration-guide).
 */
const screenshotCopy = process.env.MIGRATION_GUIDE_SCREENSHOT;

const dir = mkdtempSync(join(tmpdir(), 'migration-guide-browser-'));

let stack: ProcessStack;
let context: BrowserContext;
let page: Page;
let consoleErrors: string[];

/** The texts of the cells of each row of the change tables. */
async function changeRows(): Promise<string[][]> {
  const trs = page.locator('table.changes tbody tr');
  const out: string[][] = [];
  for (let i = 0; i < (await trs.count()); i++)
    out.push((await trs.nth(i).locator('td').allTextContents()).map((text) => text.trim()));
  return out;
}

beforeAll(async () => {
  stack = await startProcessStack({ gatewayEnv: { API_VERSIONS_FILE: writeDeprecatedV1Policy(dir) } });
  ({ context, page, consoleErrors } = await launchWithoutJavaScript(dir, 1200));
  const res = await page.goto(`${stack.gatewayUrl}/versions/1/changes`);
  expect(res?.status()).toBe(200);
}, 120_000);

afterAll(async () => {
  await context?.close();
  await stack?.stop();
  rmSync(join(dir, 'profile'), { recursive: true, force: true });
});

describe('the migration guide in Chromium, JavaScript off', () => {
  it('shows what changes from v1 to v2, per operation, breaking changes marked', async () => {
    expect(await page.title()).toBe('Moving from v1 to v2');
    expect(await page.locator('p.meta').textContent()).toContain(
      `Version 1 is deprecated from ${dateOf(V1_ANNOUNCED)}; it is removed on ${dateOf(V1_SUNSET)}`,
    );
    expect(await page.locator('h2').allTextContents()).toEqual([
      'GET /v1/orders/{id} → GET /v2/orders/{id}',
      'GET /api/v1/orders/{id} → GET /api/v2/orders/{id}',
    ]);
    const fields = [
      ['removed', 'field', 'user_id', 'response 200 (application/json)', 'breaking'],
      ['removed', 'field', 'total', 'response 200 (application/json)', 'breaking'],
      ['added', 'field', 'customer_id', 'response 200 (application/json)', 'compatible'],
      ['added', 'field', 'total_cents', 'response 200 (application/json)', 'compatible'],
      ['added', 'field', 'currency', 'response 200 (application/json)', 'compatible'],
    ];
    expect((await changeRows()).map((row) => row.slice(0, 5))).toEqual([...fields, ...fields]);
  });

  it('applies its own inline style under its CSP, loads nothing else and logs no error', async () => {
    // A string, so it runs in the page (the test's TypeScript has no DOM types).
    expect(
      await page.evaluate<string>("getComputedStyle(document.querySelector('.tag.breaking')).backgroundColor"),
    ).toBe('rgb(253, 226, 225)');
    expect(await page.locator('script, link, img, iframe').count()).toBe(0);
    expect(consoleErrors).toEqual([]);
  });

  it('saves a screenshot of the page', async () => {
    await saveScreenshot(page, dir, 'migration-guide.png', 1200, screenshotCopy);
  });

  it('is what the status page\'s "what changes" link opens, on the admin port', async () => {
    await page.goto(`${stack.gatewayAdminUrl}/`);
    await page.locator('a', { hasText: 'what changes' }).click();
    await page.waitForURL(`${stack.gatewayAdminUrl}/versions/1/changes`);
    expect(await page.title()).toBe('Moving from v1 to v2');
    expect(consoleErrors).toEqual([]);
  });
});
