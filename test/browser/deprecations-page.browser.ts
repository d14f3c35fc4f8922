import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../platform/test/support/eventually.mjs';
import { consumerWithKey } from '../consumers/support.js';
import { startProcessStack, type ProcessStack } from '../e2e/process-stack.js';
import {
  dateOf,
  DAY_MS,
  launchWithoutJavaScript,
  saveScreenshot,
  V1_SUNSET,
  writeDeprecatedV1Policy,
} from './chromium.js';

/**
 * A consumer's own deprecation report (`GET /deprecations`) in a real browser (test/browser/chromium.ts),
 * from the built gateway in front of the built backend: the consumer registered on the admin port, its
 * requests written to the shared ledger, its API-Key sent with every request of the browser, whose own
 * Accept header gets the page. With JavaScript off it must show every operation the consumer called with
 * the breaking changes that touch it, load its style under its own CSP, and load nothing else.
 *
 * `DEPRECATIONS_PAGE_SCREENSHOT=docs/deprecations-page.png npm run test:browser` also writes the screenshot there.
 */
const screenshotCopy = process.env.DEPRECATIONS_PAGE_SCREENSHOT;

const dir = mkdtempSync(join(tmpdir(), 'deprecations-browser-'));

/**
 * What the migration guide from v1 to v2 says breaks in an order (docs/client-documents.md#migration-guide): the policy's
 * declarations, as ops/versions.json declares them.
 */
const ORDER_BREAKING = ['renamed user_id → customer_id', 'converted total (decimal) → total_cents (integer, × 100)'];

let stack: ProcessStack;
let context: BrowserContext;
let page: Page;
let consoleErrors: string[];
let consumer: string;

async function send(path: string, headers: Record<string, string>): Promise<void> {
  expect((await fetch(`${stack.gatewayUrl}${path}`, { headers })).status, path).toBe(200);
}

/**
 * The cells of each operation row of v`version`'s table: operation as called, what to send instead, requests, last
 * call, breaking changes (each one).
 */
async function operationRows(version: number): Promise<string[][]> {
  const trs = page.locator(`table.operations[data-version="${version}"] tbody tr`);
  const out: string[][] = [];
  for (let i = 0; i < (await trs.count()); i++) {
    const tds = trs.nth(i).locator('td');
    const cells = (await tds.allTextContents()).slice(0, 4).map((text) => text.trim());
    const changes = await tds.nth(4).locator('li').allTextContents();
    out.push([...cells, ...(changes.length === 0 ? [(await tds.nth(4).textContent()) ?? ''] : changes)]);
  }
  return out;
}

beforeAll(async () => {
  stack = await startProcessStack({ gatewayEnv: { API_VERSIONS_FILE: writeDeprecatedV1Policy(dir) } });
  // The run's gateways share one store: a name of this test's own.
  const registered = await consumerWithKey(stack.gateway, `Browser Report ${process.pid}`);
  consumer = registered.id;
  const withKey = { 'api-key': registered.key };

  // v1 in three forms, and v2 (current: not in the report).
  for (let i = 0; i < 3; i++) await send('/v1/orders/ord-1001', withKey);
  await send('/api/v1/orders/ord-1002', withKey);
  for (let i = 0; i < 2; i++) await send('/orders/ord-1001', { ...withKey, 'api-version': '1' });
  await send('/v2/orders/ord-1001', withKey);
  // The counts reach the shared ledger within 10 s.
  await eventually(
    'the six v1 requests in the ledger',
    async () => {
      const report = (await (await fetch(`${stack.gatewayUrl}/deprecations`, { headers: withKey })).json()) as {
        versions: { operations: { requests: number }[] }[];
      };
      return report.versions[0]?.operations.reduce((sum, operation) => sum + operation.requests, 0) === 6;
    },
    { timeoutMs: 15_000 },
  );

  ({ context, page, consoleErrors } = await launchWithoutJavaScript(dir, 1100));
  await context.setExtraHTTPHeaders(withKey);
  const res = await page.goto(`${stack.gatewayUrl}/deprecations`);
  expect(res?.status()).toBe(200);
  expect(res?.headers()['content-type']).toBe('text/html; charset=utf-8');
}, 120_000);

afterAll(async () => {
  await context?.close();
  await stack?.stop();
  rmSync(join(dir, 'profile'), { recursive: true, force: true });
});

describe('the deprecation report in Chromium, JavaScript off', () => {
  it(
    'shows the deprecated version the consumer called, when it goes, and each operation with what breaks ' + 'it',
    async () => {
      expect(await page.title()).toBe(`Deprecations for ${consumer}`);
      expect(await page.locator('h1').textContent()).toBe(`Deprecations for ${consumer}`);
      expect(await page.locator('p.summary').textContent()).toBe(
        'You are on 1 version that is deprecated or removed, in 3 operations; breaking changes touch 3 of them.',
      );
      expect(await page.locator('section h2').allTextContents()).toEqual(['v1 deprecated']);
      // Days are counted from the instant the page was rendered, which it prints.
      const asOf = /As of (\S+ \S+) UTC/.exec((await page.locator('p.meta').textContent()) ?? '')?.[1];
      const days = Math.ceil((V1_SUNSET - Date.parse(`${asOf?.replace(' ', 'T')}Z`)) / DAY_MS);
      expect(await page.locator('section#v1 > p').textContent()).toBe(
        `Removed on ${dateOf(V1_SUNSET)} (in ${days} ${days === 1 ? 'day' : 'days'}). Move to v2: the migration ` +
          `guide ` +
          `lists every change.`,
      );
      const rows = await operationRows(1);
      expect(rows.map(([operation, instead, requests]) => [operation, instead, requests])).toEqual([
        ['GET /api/v1/orders/{id}', 'GET /api/v2/orders/{id}', '1'],
        ['GET /orders/{id} with API-Version: 1', 'GET /orders/{id} with API-Version: 2', '2'],
        ['GET /v1/orders/{id}', 'GET /v2/orders/{id}', '3'],
      ]);
      for (const row of rows) {
        expect(row[3]).toMatch(new RegExp(`^${dateOf(Date.now())} \\d\\d:\\d\\d UTC$`));
        expect(row.slice(4)).toEqual(ORDER_BREAKING);
      }
    },
  );

  it('applies its own inline style under its CSP, loads nothing else and logs no error', async () => {
    // Strings, so they run in the page (the test's TypeScript has no DOM types).
    expect(
      await page.evaluate<string>("getComputedStyle(document.querySelector('.phase-deprecated')).backgroundColor"),
    ).toBe('rgb(255, 241, 214)');
    expect(await page.evaluate<string>("getComputedStyle(document.querySelector('tr.must-change td')).boxShadow")).toBe(
      'rgb(196, 50, 43) 3px 0px 0px 0px inset',
    );
    expect(await page.locator('script, link, img, iframe').count()).toBe(0);
    expect(consoleErrors).toEqual([]);
  });

  it('saves a screenshot of the page', async () => {
    expect(await saveScreenshot(page, dir, 'deprecations-page.png', 1100, screenshotCopy)).toBeGreaterThan(300);
  });

  it('links the migration guide, which opens in the same browser', async () => {
    await page.locator('section#v1 a', { hasText: 'the migration guide' }).click();
    await page.waitForURL(`${stack.gatewayUrl}/versions/1/changes`);
    expect(await page.title()).toBe('Moving from v1 to v2');
    expect(consoleErrors).toEqual([]);
  });

  it('says the consumer is done with v1 when it made no call of it since the instant asked', async () => {
    // Registered on the admin port, it is pinned to v2: its requests that name no version do not get v1.
    const since = new Date(Date.now() + 60_000).toISOString();
    const res = await page.goto(`${stack.gatewayUrl}/deprecations?since=${since}`);
    expect(res?.status()).toBe(200);
    expect(await page.locator('section#v1 h2').textContent()).toBe('v1 deprecated done');
    expect(await page.locator('section#v1 > p').first().textContent()).toBe(
      'Nothing of yours is on v1 any more: nothing to change.',
    );
    expect(await page.locator('p.summary').textContent()).toBe(
      'You are done: nothing of yours is on a deprecated or removed version any more (1 version left).',
    );
    expect(await page.evaluate<string>("getComputedStyle(document.querySelector('.done')).backgroundColor")).toBe(
      'rgb(223, 243, 228)',
    );
    expect(consoleErrors).toEqual([]);
  });

  it('is refused without the key, as JSON', async () => {
    await context.setExtraHTTPHeaders({});
    const res = await page.goto(`${stack.gatewayUrl}/deprecations`);
    expect(res?.status()).toBe(401);
    expect(res?.headers()['www-authenticate']).toBe('API-Key');
    expect(await res?.json()).toEqual({ error: 'API key required', code: 401 });
  });
});
