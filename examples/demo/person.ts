/**
 * The `--auto` person: Debian's Chromium, headless, through playwright-core, at a phone viewport.
 * It opens the link, fills the demo's fields by their visible labels, sends, stays on the page
 * until the follow-up shows (the waiting page shows it in place), answers that, and stays until the
 * page says "Done".
 *
 * It never downloads a browser: without one at {@link chromiumPath} the demo says so and stops.
 * It reports steps as fixed sentences; it writes no link and no page content anywhere.
 */
import { existsSync } from 'node:fs';
import type { DemoOutput, DemoPerson } from './demo.js';
import { DEMO_QUESTION, FOLLOW_UP_TITLE } from './demo.js';

/** Where Chromium is looked for: `SESS_TEST_CHROMIUM`, else Debian's `/usr/bin/chromium`. */
export function chromiumPath(): string {
  return process.env.SESS_TEST_CHROMIUM || '/usr/bin/chromium';
}

/** Is there a Chromium to drive? */
export function haveChromium(): boolean {
  return existsSync(chromiumPath());
}

/** Chromium flags for a quiet, offline headless run (the package's browser tests use them too). */
export const CHROMIUM_ARGS: readonly string[] = Object.freeze([
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
]);

/** How long one page step may take before the person gives up (a busy CI core is slow). */
const STEP_TIMEOUT_MS = 30_000;

/** Launch headless Chromium and return a person who answers the demo's two questions. */
export async function launchAutoPerson(out: DemoOutput): Promise<DemoPerson> {
  // Loaded here so that a demo without --auto never pays for playwright-core.
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: chromiumPath(), args: [...CHROMIUM_ARGS] });
  const context = await browser.newContext({
    viewport: { width: 390, height: 844 },
    isMobile: true,
    hasTouch: true,
    locale: 'en-GB',
  });
  context.setDefaultTimeout(STEP_TIMEOUT_MS);
  return {
    async answer(link) {
      try {
        await answerBoth(link);
      } catch (error) {
        // Playwright's messages can quote the page's address; the link stays out of stderr.
        const message = error instanceof Error ? (error.message.split('\n')[0] ?? '') : 'unknown failure';
        throw new Error(
          `the headless browser could not answer: ${message.replace(/https?:\/\/\S+/g, '<link>')}`,
        );
      }
    },
    async close() {
      await context.close().catch(() => {});
      await browser.close();
    },
  };

  async function answerBoth(link: string): Promise<void> {
    const page = await context.newPage();
    await page.goto(link);
    await page.getByRole('heading', { level: 1, name: DEMO_QUESTION }).waitFor();
    await page.getByRole('group', { name: 'Time' }).getByLabel('13:00 – 13:30').check();
    await page.getByLabel('Anything to prepare?').fill('Bring the new onboarding mock-ups.');
    await page
      .getByRole('group', { name: 'How urgent is it?' })
      .getByRole('radio', { name: '4 of 5' })
      .check();
    out.line('  [browser] picks 13:00, writes a note, rates 4 of 5 and presses Send');
    await page.getByRole('button', { name: 'Send' }).click();

    // The waiting page shows the follow-up in place once the agent publishes it (the agent can be
    // so quick that "Thanks" is replaced at once, so the person waits for the next step only).
    await page.getByRole('heading', { level: 1, name: FOLLOW_UP_TITLE }).waitFor();
    out.line('  [browser] the follow-up showed up by itself; presses "Send invite"');
    await page.getByRole('button', { name: 'Send invite' }).click();

    await page.getByRole('heading', { name: 'Done — the agent has your answer.' }).waitFor();
    out.line('  [browser] the page says "Done — the agent has your answer."');
  }
}
