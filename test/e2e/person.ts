/**
 * The person of the lifecycle suites: a phone in Debian's Chromium (through playwright-core, never
 * a downloaded browser) on the Sess link the agent showed, answering by visible labels and button
 * names, and reading what the page says by its visible text. It knows nothing of the agent or the
 * MCP face; the suite hands it links.
 *
 * The browser is launched once per suite (`usePerson()` in a `describeWithChromium` block of
 * `test/page/browser-harness.ts`, which fails a suite under `CI=true` when Chromium is missing).
 * Screenshots of what the person saw go to `test-results/e2e/`.
 */
import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { PHONE } from '../page/browser-harness.js';
import { CHROMIUM, HAVE_CHROMIUM, launchChromium } from '../support/chromium.js';
/** Where the lifecycle suites' screenshots go. */
export const E2E_SHOTS = 'test-results/e2e';

/** What the answer page says once an answer was sent, and once the question was withdrawn. */
export const PAGE_TEXT = {
  sent: 'Thanks — your answer was sent.',
  withdrawn: 'This question was withdrawn.',
} as const;

/** The person's phones of one suite. */
export interface Person {
  /** A fresh phone (its own cookies, 390×844, touch) on `url`; the page's status must be `status`. */
  open(url: string, status?: number): Promise<Page>;
  /**
   * Fill each field found by its visible label, press the button named `button`, and resolve
   * with the HTTP status of the form post.
   */
  answer(page: Page, fills: Record<string, string>, button: string): Promise<number>;
  /** A screenshot of the whole page into {@link E2E_SHOTS}. */
  shot(page: Page, name: string): Promise<void>;
}

/** Launch Chromium for the suite; every phone and the browser close after it. */
export function usePerson(): Person {
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];
  beforeAll(async () => {
    if (!HAVE_CHROMIUM) throw new Error(`${CHROMIUM} is missing`);
    mkdirSync(E2E_SHOTS, { recursive: true });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
    await browser?.close();
  });
  return {
    async open(url, status = 200) {
      if (browser === undefined) throw new Error('usePerson: the browser starts in beforeAll');
      const context = await browser.newContext({
        viewport: PHONE,
        isMobile: true,
        hasTouch: true,
        locale: 'en-GB',
      });
      contexts.push(context);
      const page = await context.newPage();
      page.on('dialog', (d) => {
        throw new Error(`unexpected dialog: ${d.message()}`);
      });
      const response = await page.goto(url);
      expect(response?.status()).toBe(status);
      return page;
    },
    async answer(page, fills, button) {
      for (const [label, value] of Object.entries(fills)) await page.getByLabel(label).fill(value);
      const posted = page.waitForResponse((r) => r.request().method() === 'POST');
      await page.getByRole('button', { name: button }).click();
      return (await posted).status();
    },
    async shot(page, name) {
      await page.screenshot({ path: `${E2E_SHOTS}/${name}.png`, fullPage: true });
    },
  };
}
