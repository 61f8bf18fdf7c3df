/**
 * The demo as a person at the terminal runs it (no `--auto`): they open the printed link in a real
 * browser and answer both questions while the demo's agent waits. After `sess_complete` the demo
 * keeps the answer page up until the open page has fetched its final state, so the browser ends on
 * "Done", as the terminal says, rather than on "Waiting for the agent to carry on".
 *
 * Needs Debian's Chromium (`/usr/bin/chromium` or `SESS_TEST_CHROMIUM`): skipped without it,
 * except under `CI`, where a missing browser fails.
 */
import { describe, expect, it } from 'vitest';
import { type DemoOutput, runDemo } from '../../examples/demo/demo.js';
import { haveChromium, launchAutoPerson } from '../../examples/demo/person.js';
import { recorder } from './recorder.js';

const LINK = /^ {2}Open this in your browser: (http:\/\/127\.0\.0\.1:\d+\/s\/[A-Za-z0-9_-]+)$/;

describe('the demo without --auto, answered in a real browser', () => {
  it.skipIf(!haveChromium() && !process.env.CI)(
    'ends with the page saying "Done": the runtime stays up until the page has its final state',
    async () => {
      if (!haveChromium())
        throw new Error('Chromium is missing; CI must install it with scripts/ci-chromium.sh');
      const out = recorder();
      const browserLines: DemoOutput = { line: () => {} };
      const person = await launchAutoPerson(browserLines);
      try {
        const demo = runDemo(out, { waitMs: 2_000 });
        const [, link] = await out.first(LINK);
        // The person at the terminal: opens the link, answers, answers the follow-up, and watches
        // the page until it says "Done" (it gives up after 30 s on a page that never changes).
        const answered = person.answer(link!);
        await Promise.all([demo, answered]);
        expect(out.lines).toContain('  (keeping the page up until it shows "Done", at most 10 s)');
        expect(out.lines.some((line) => line.includes('on your phone'))).toBe(false);
      } finally {
        await person.close();
      }
    },
    90_000,
  );
});
