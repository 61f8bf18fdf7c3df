/**
 * The one browser every browser suite uses: Debian's Chromium through playwright-core, never a
 * downloaded browser (`SESS_TEST_CHROMIUM` points at another distribution's build), launched
 * headless with the flags of a quiet, offline run.
 *
 * Whether a missing browser skips or fails a suite is the suite's (`describeWithChromium()` in
 * `test/page/browser-harness.ts`); this module only finds and launches it.
 *
 * @example
 * ```ts
 * const browser = await launchChromium();
 * ```
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Where the browser is: `SESS_TEST_CHROMIUM`, else Debian's `/usr/bin/chromium`. */
export const CHROMIUM: string = process.env.SESS_TEST_CHROMIUM || '/usr/bin/chromium';

/** Whether {@link CHROMIUM} exists. */
export const HAVE_CHROMIUM: boolean = existsSync(CHROMIUM);

/** Chromium flags for a quiet, offline headless run. */
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

/** Launch {@link CHROMIUM} with {@link CHROMIUM_ARGS}. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS] });
}
