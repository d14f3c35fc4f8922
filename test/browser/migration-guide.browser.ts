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
 * built gateway in front of the built backend, with version 1 declared as changes to version 2 (as
 * ops/versions.json declares it): the page says each declaration in a sentence. Chromium's own
 * Accept header gets the page. With JavaScript off it must show every change, load its style under
 * its own CSP, and load nothing else. The status page's link leads to it on the admin port.
 *
 * `MIGRATION_GUIDE_SCREENSHOT=docs/migration-guide.png npm run test:browser` also writes the screenshot
 * there (the picture of docs/client-documents.md#migration-guide).
 */
const screenshotCopy = process.env.MIGRATION_GUIDE_SCREENSHOT;

const dir = mkdtempSync(join(tmpdir(), 'migration-guide-browser-'));

let stack: ProcessStack;
let context: BrowserContext;
let page: Page;
let consoleErrors: string[];

/** The text of each declared change, as a reader sees it (spaces collapsed). */
async function declaredItems(): Promise<string[]> {
  return (await page.locator('ul.declared li').allTextContents()).map((text) => text.replace(/\s+/g, ' ').trim());
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
    const declared = [
      'renamed user_id → customer_id breaking The customer identifier under its old name.',
      'converted total (decimal) → total_cents (integer, × 100) breaking',
      'added currency compatible',
    ];
    const items = await declaredItems();
    expect(items).toHaveLength(2 * declared.length);
    items.forEach((item, i) => expect(item.startsWith(declared[i % declared.length] ?? '-'), item).toBe(true));
    // Nothing else differs: no table of the documents' differences.
    expect(await page.locator('table.changes').count()).toBe(0);
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
