/**
 * The answer page passes an accessibility audit in every state: axe-core (WCAG 2.0/2.1 A and AA
 * rules) in real Chromium at a phone viewport, in the light and the dark colour scheme, on the
 * form, the form with validation errors, waiting for the agent, a follow-up, done, a lapsed and
 * an expired link, an unknown link, an Ask's name page and a full Ask. Any serious or critical
 * violation fails; every finding is printed as one `[axe]` line per state.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import {
  type AgentSession,
  api,
  createSession,
  describeWithChromium,
  sessionAfter,
  useBrowser,
} from './browser-harness.js';
import { FOLLOW_UP, SHORT_ASK, TRIP } from './fixtures.js';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];
const SCHEMES = ['light', 'dark'] as const;

interface Finding {
  id: string;
  impact: string | null;
  targets: string[];
}

/** Run axe on the page as it is now: its violations, and how many rules it checked and passed. */
async function audit(page: Page): Promise<{ findings: Finding[]; passed: number }> {
  await page.evaluate(AXE_SOURCE);
  return page.evaluate(async (tags) => {
    const axe = (window as unknown as { axe: { run(ctx: Document, opts: object): Promise<unknown> } }).axe;
    const result = (await axe.run(document, { runOnly: { type: 'tag', values: tags } })) as {
      violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[];
      passes: unknown[];
    };
    const findings = result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      targets: v.nodes.map((n) => n.target.join(' ')),
    }));
    return { findings, passed: result.passes.length };
  }, WCAG_TAGS);
}

describeWithChromium('answer page accessibility audit (axe-core, WCAG 2.1 A/AA)', () => {
  const suite = useBrowser();
  const ANSWER = { action: 'submit', values: { day: 'mon' } };

  /** A page of a Session answered once, after the agent's `then`. */
  const answered = (then: (session: AgentSession) => Promise<void>) => async (page: Page) => {
    const session = await createSession(suite.runtime, SHORT_ASK);
    await suite.runtime.submitAnswer(session.url, ANSWER);
    await then(session);
    await page.goto(session.url);
  };
  /** A page of a Session of `expiresIn` seconds, `advanceMs` later on the runtime's clock. */
  const pastItsTime = (expiresIn: number, advanceMs: number) => async (page: Page) => {
    await page.goto((await sessionAfter(suite.runtime, SHORT_ASK, expiresIn, advanceMs)).url);
  };

  /** Each state: bring a fresh phone to it, and the heading that proves it is there. */
  const states: [string, (page: Page) => Promise<void>, string][] = [
    [
      'form',
      async (page) => void (await page.goto((await createSession(suite.runtime, TRIP)).url)),
      TRIP.title,
    ],
    [
      'validation errors',
      async (page) => {
        await page.goto((await createSession(suite.runtime, TRIP)).url);
        await page.getByRole('button', { name: 'Confirm' }).click();
      },
      'Please check 4 things',
    ],
    ['waiting', answered(async () => {}), 'Thanks — your answer was sent.'],
    ['follow-up', answered((session) => session.publish(FOLLOW_UP)), FOLLOW_UP.title],
    ['done', answered((session) => session.complete()), 'Done — the agent has your answer.'],
    ['lapsed', pastItsTime(60, 61_000), 'This link has run out of time.'],
    ['expired', pastItsTime(72_001, 72_002_000), 'This link has expired.'],
    [
      'withdrawn',
      async (page) => {
        const session = await createSession(suite.runtime, SHORT_ASK);
        await api(suite.runtime, `/v1/sessions/${session.id}/withdraw`, { reason: 'We found a date.' }, 1);
        await page.goto(session.url);
      },
      'This question was withdrawn.',
    ],
    [
      'withdrawn while the form is open (in place)',
      async (page) => {
        const session = await createSession(suite.runtime, SHORT_ASK);
        await page.goto(session.url);
        await page.getByRole('button', { name: 'Send' }).waitFor();
        await expect.poll(() => suite.runtime.pendingWaits(session.id)).toBe(1);
        await api(suite.runtime, `/v1/sessions/${session.id}/withdraw`, { reason: 'We found a date.' }, 1);
      },
      'This question was withdrawn.',
    ],
    [
      'unknown link',
      async (page) => void (await page.goto(`${suite.runtime.origin}/s/nope`)),
      'This link does not work.',
    ],
    [
      'Ask name',
      async (page) => {
        const ask = await api(suite.runtime, '/v1/asks', {
          interaction: SHORT_ASK,
          respondents: { max: 2, name: true },
        });
        await page.goto(ask.human_url as string);
      },
      SHORT_ASK.title,
    ],
    [
      'Ask full',
      async (page) => {
        const ask = await api(suite.runtime, '/v1/asks', { interaction: SHORT_ASK, respondents: { max: 1 } });
        await suite.runtime.startRespondent(ask.human_url as string);
        await page.goto(ask.human_url as string);
      },
      'This Ask is full.',
    ],
  ];

  for (const scheme of SCHEMES) {
    it.each(states)(`%s (${scheme}): no serious or critical violation`, async (name, reach, heading) => {
      const page = await suite.phone({ colorScheme: scheme });
      await reach(page);
      await page.getByRole('heading', { name: heading }).first().waitFor();
      const { findings, passed } = await audit(page);
      // The audit really ran: a page of this kind passes well over ten WCAG rules.
      expect(passed).toBeGreaterThan(10);
      console.log(
        `[axe] ${name} (${scheme}): ${findings.length === 0 ? 'no violations' : findings.map((f) => `${f.id} (${f.impact}) at ${f.targets.join(', ')}`).join('; ')}`,
      );
      expect(findings.filter((f) => f.impact === 'serious' || f.impact === 'critical')).toEqual([]);
    });
  }
});
