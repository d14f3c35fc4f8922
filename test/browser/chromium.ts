import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { ORDERS_V1_CHANGES } from '../../gateway/test/support/orders-v1.js';

/**
 * Debian's Chromium (`apt-get install -y chromium`), headless, driven by playwright-core, which downloads
 * no browser of its own. JavaScript is off: the gateway's pages must show everything without it.
 */
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--headless',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface BrowserWithoutScripts {
  context: BrowserContext;
  page: Page;
  /** What the page logged as errors (a style refused by the CSP shows here). */
  consoleErrors: string[];
}

/** A fresh profile under `dir`, one page of `width` × 700, JavaScript off. */
export async function launchWithoutJavaScript(dir: string, width = 1100): Promise<BrowserWithoutScripts> {
  const context = await chromium.launchPersistentContext(join(dir, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    javaScriptEnabled: false,
    viewport: { width, height: 700 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const consoleErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  return { context, page, consoleErrors };
}

/**
 * A full-page screenshot of `page`, saved in `dir` as `name` and checked to be a PNG `width` pixels wide; copied
 * to `copyTo` as well when that is set (the pictures in docs/ are made so). Returns the PNG's height.
 */
export async function saveScreenshot(
  page: Page,
  dir: string,
  name: string,
  width: number,
  copyTo: string | undefined,
): Promise<number> {
  const path = join(dir, name);
  await page.screenshot({ path, fullPage: true });
  const png = readFileSync(path);
  expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  // IHDR: width then height, big-endian, right after the signature and the chunk header.
  expect(png.readUInt32BE(16)).toBe(width);
  if (copyTo !== undefined) {
    const target = resolve(copyTo);
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(path, target);
  }
  process.stdout.write(`screenshot: ${path}\n`);
  return png.readUInt32BE(20);
}

export const DAY_MS = 86_400_000;
/** Midnight UTC today: the pages' policies are dated relative to it, so they always show a deprecation under way. */
const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
export const daysFromToday = (days: number): number => today + days * DAY_MS;
export const dateOf = (epochMs: number): string => new Date(epochMs).toISOString().slice(0, 10);

/**
 * v1 announced 30 days ago and removed in 180, v2 its successor: a deprecation under way on any day the pages are
 * tested.
 */
export const V1_ANNOUNCED = daysFromToday(-30);
export const V1_SUNSET = daysFromToday(180);

/** The policy file of that deprecation, written in `dir`; answers its path (the gateway's API_VERSIONS_FILE). */
export function writeDeprecatedV1Policy(dir: string): string {
  const path = join(dir, 'versions.json');
  const policy = {
    default_version: 1,
    versions: [
      {
        version: 1,
        status: 'deprecated',
        announced: dateOf(V1_ANNOUNCED),
        sunset: `${dateOf(V1_SUNSET)}T00:00:00Z`,
        successor: 2,
        // As ops/versions.json declares it: the backend serves only version 2, the gateway presents version 1.
        changes: ORDERS_V1_CHANGES,
      },
      { version: 2, status: 'current' },
    ],
  };
  writeFileSync(path, JSON.stringify(policy));
  return path;
}
