/**
 * `runDemo` in this process, with a person who answers by posting the page's form over HTTP
 * exactly as a browser without JavaScript does (`answerToForm`; the answer-page browser suite
 * proves it matches a real browser's post). No Chromium needed, so this runs everywhere.
 *
 * It checks what the demo promises beyond the happy path: a host's re-wait rule (four calls
 * without an answer, then "say continue"), the answer shown is the one the person sent, and a
 * failing person ends the demo with everything it started closed.
 */
import { describe, expect, it } from 'vitest';
import { DEMO_ASK, DemoError, type DemoPerson, followUpSurface, runDemo } from '../../examples/demo/demo.js';
import { buildAskSurface } from '../../src/core/model/ask-surface.js';
import { answerToForm } from '../../src/testing/page/index.js';
import { recorder } from './recorder.js';

/** POST the form a browser would send for `answer` at `revision`; the page answers 303 when accepted. */
async function post(
  link: string,
  surface: Parameters<typeof answerToForm>[0],
  answer: { action: string; values: Record<string, unknown> },
  revision: number,
): Promise<number> {
  const res = await fetch(link, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: answerToForm(surface, answer, revision).toString(),
    redirect: 'manual',
  });
  await res.arrayBuffer();
  return res.status;
}

const FIRST = { action: 'submit', values: { slot: '09:30', note: 'Agenda:\nhiring plan', urgency: 2 } };

describe('runDemo', { timeout: 60_000 }, () => {
  it('waits like a host (four calls, then asks to continue), shows the verified answers, publishes and completes', async () => {
    const out = recorder();
    let continued!: () => void;
    const continuePressed = new Promise<void>((resolve) => {
      continued = resolve;
    });
    let askedToContinue = 0;
    let waitingWhenAsked = -1;
    const statuses: number[] = [];
    let link = '';
    const person: DemoPerson = {
      async answer(url) {
        link = url;
        // The person answers only after the host said "the form is still open".
        await continuePressed;
        statuses.push(await post(url, buildAskSurface(DEMO_ASK), FIRST, 1));
        await out.seen(/published revision 2/);
        statuses.push(
          await post(url, followUpSurface('09:30', FIRST.values.note), { action: 'hold', values: {} }, 2),
        );
      },
      close: async () => {},
    };

    await runDemo(out, {
      person,
      waitMs: 100,
      askToContinue: async () => {
        askedToContinue += 1;
        waitingWhenAsked = out.lines.filter((l) => l.includes('still waiting')).length;
        continued();
      },
    });

    expect(statuses).toEqual([303, 303]);
    expect(askedToContinue).toBe(1);
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/s\/[A-Za-z0-9_-]+$/);
    expect(out.lines).toContain(`  Open this in your browser: ${link}`);
    // The first call and three more, all unanswered, before the host asked the person to continue.
    expect(waitingWhenAsked).toBe(4);
    const text = out.text();
    expect(text).toContain(
      [
        '  ✓ Verified answer (signed receipt checked, revision 1)',
        '    action: submit',
        '    slot: 09:30',
        '    note: Agenda: ⏎ hiring plan',
        '    urgency: 2',
      ].join('\n'),
    );
    expect(text).toContain('  ✓ Verified answer (signed receipt checked, revision 2)\n    action: hold');
    expect(text).toContain('  completed: no invite sent');
    expect(text).not.toMatch(/sk_local_|Bearer/);
    // Everything is closed: the link's server is gone.
    await expect(fetch(link)).rejects.toThrow();
  });

  it('a person who fails ends the demo with that failure, and closes what it started', async () => {
    const out = recorder();
    let link = '';
    const person: DemoPerson = {
      async answer(url) {
        link = url;
        throw new Error('the headless browser could not answer: test');
      },
      close: async () => {},
    };
    await expect(runDemo(out, { person, waitMs: 5_000 })).rejects.toThrow(
      'the headless browser could not answer: test',
    );
    expect(link).not.toBe('');
    await expect(fetch(link)).rejects.toThrow();
  });

  it('refuses a host it cannot serve before starting anything', async () => {
    const out = recorder();
    await expect(runDemo(out, { host: '192.0.2.7' })).rejects.toBeInstanceOf(DemoError);
    expect(out.lines).toEqual([]);
  });
});
