/**
 * The one browser every browser suite uses: Debian's Chromium through playwright-core, never a
 * downloaded browser (`SESS_TEST_CHROMIUM` points at another distribution's build), launched
 * headless with the flags of a quiet, offline run: the demo's own (`examples/demo/person.ts`).
 *
 * Whether a missing browser skips or fails a suite is the suite's (`describeWithChromium()` in
 * `test/page/browser-harness.ts`); this module only finds and launches it.
 *
 * @example
 * ```ts
 * const browser = await launchChromium();
 * ```
 */
import { type Browser, chromium } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumPath, haveChromium } from '../../examples/demo/person.js';

/** Where the browser is: `SESS_TEST_CHROMIUM`, else Debian's `/usr/bin/chromium` (as the demo finds it). */
export const CHROMIUM: string = chromiumPath();

/** Whether {@link CHROMIUM} exists. */
export const HAVE_CHROMIUM: boolean = haveChromium();

/** Launch {@link CHROMIUM} with {@link CHROMIUM_ARGS}. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS] });
}
