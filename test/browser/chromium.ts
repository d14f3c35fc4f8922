import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

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
