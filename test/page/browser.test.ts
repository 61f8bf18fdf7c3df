/**
 * The answer page in a real browser (Debian's Chromium through playwright-core) at a phone
 * viewport: a person fills every field type found by its visible label, sees validation errors,
 * submits, waits, answers a follow-up, sees "done"; expired and lapsed links; a withdrawn question; an Ask answered by
 * two browsers. It runs against the real local runtime (`startLocalSess`): the agent's side speaks
 * the documented HTTP API (`docs/sess-api.md`), links lapse and expire on the runtime's clock.
 * Screenshots of every state go to `test-results/page/`.
 *
 * The browser, the phones and the agent's side come from `browser-harness.ts` (Chromium missing:
 * skipped, or failed under `CI`).
 */

import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import type { Answer, Surface } from '../../src/core/model/surface.js';
import { answerToForm } from '../../src/testing/page/index.js';
import { LIVE_SCRIPT } from '../../src/testing/page/live.js';
import {
  type AgentSession,
  api,
  createSession,
  describeWithChromium,
  sessionAfter,
  useBrowser,
} from './browser-harness.js';
import { FOLLOW_UP, hostileSurface, SHORT_ASK, TRIP } from './fixtures.js';

const DAY_MS = 86_400_000;

/** The page thanks the person: their answer was sent. */
const thanked = (page: Page) =>
  page.getByRole('heading', { name: 'Thanks — your answer was sent.' }).waitFor();

/** On the follow-up, the person books 14:30: thanked, and it is the Session's second answer. */
async function bookAt1430(page: Page, session: AgentSession): Promise<void> {
  await page.getByLabel('14:30').check();
  await page.getByRole('button', { name: 'Book it' }).click();
  await thanked(page);
  expect(session.answers()[1]).toEqual({ action: 'ok', values: { time: '1430' } });
}

describeWithChromium('answer page in a real browser', () => {
  const suite = useBrowser();
  const { phone, shot, expectFitsPhone } = suite;

  it('a person fills every field type by its label, fixes errors, and follows the Session to done', async () => {
    const session = await createSession(suite.runtime, TRIP);
    const page = await phone();
    const response = await page.goto(session.url);
    expect(response?.status()).toBe(200);
    await expect.poll(() => page.title()).toBe(TRIP.title);
    await expectFitsPhone(page);

    // What the agent sent is on the page.
    await page.getByRole('heading', { level: 1, name: TRIP.title }).waitFor();
    await page.getByRole('heading', { level: 2, name: 'Your booking' }).waitFor();
    expect(await page.getByText('Pickup at arrivals.').textContent()).toBe(
      'Pickup at arrivals.\nLook for the blue sign.',
    );
    expect(await page.locator('dl').textContent()).toContain('SQ 22');
    // Prefilled values.
    expect(await page.getByLabel('Notes for the driver').inputValue()).toBe('Ring twice\nthen wait');
    expect(await page.getByLabel('Child seat').isChecked()).toBe(true);
    await shot(page, '01-form');

    // Bad input first.
    await page.getByLabel('Full name').fill('A');
    await page.getByLabel('Number of bags').fill('9');
    await page.getByLabel('Tip in euros').fill('2.5');
    await page.getByRole('button', { name: 'Confirm' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    // Focus starts on the summary, so a screen reader reads it first.
    expect(await page.evaluate(() => document.activeElement?.getAttribute('role'))).toBe('alert');
    const summary = await alert.textContent();
    expect(summary).toContain('Please check 4 things');
    expect(summary).toContain('Full name: Use at least 2 characters (you have 1).');
    expect(summary).toContain('Number of bags: Enter a number from 0 to 5.');
    expect(summary).toContain('Car type: This is required. Choose one of the options.');
    expect(summary).toContain('How easy was booking? This is required. Choose a rating.');
    // Each message is tied to its control, and the person's input is kept.
    const name = page.getByLabel('Full name');
    expect(await name.getAttribute('aria-invalid')).toBe('true');
    expect(await name.inputValue()).toBe('A');
    expect(await page.getByLabel('Number of bags').inputValue()).toBe('9');
    expect(await page.getByLabel('Tip in euros').inputValue()).toBe('2.5');
    expect(await page.getByLabel('Notes for the driver').inputValue()).toBe('Ring twice\nthen wait');
    const description = await name.evaluate((el) =>
      (el.getAttribute('aria-describedby') ?? '')
        .split(' ')
        .map((id) => document.getElementById(id)?.textContent)
        .join(' | '),
    );
    expect(description).toBe('As printed on your passport. | Use at least 2 characters (you have 1).');
    // The summary links jump to the field.
    await alert.getByRole('link', { name: /^Car type/ }).click();
    expect(new URL(page.url()).hash).toMatch(/^#f\d+$/);
    await expectFitsPhone(page);
    await shot(page, '02-errors');
    expect(session.answers()).toEqual([]);

    // Now a good answer, every control found by its visible label.
    await name.fill('Ana Novak 😀');
    await page.getByLabel('Notes for the driver').fill('Ring twice\nthen wait\nby the café');
    await page.getByLabel('Number of bags').fill('3');
    await page.getByLabel('Tip in euros').fill('7.5');
    await page.getByLabel('Child seat').uncheck();
    await page.getByRole('group', { name: 'Car type' }).getByLabel('Minivan').check();
    const extras = page.getByRole('group', { name: 'Extras' });
    await extras.getByLabel('Bottled water').check();
    await extras.getByLabel('Phone charger').check();
    await page
      .getByRole('group', { name: 'How easy was booking?' })
      .getByRole('radio', { name: '4 of 5' })
      .check();
    const posted = page.waitForRequest((r) => r.method() === 'POST');
    await page.getByRole('button', { name: 'Confirm' }).click();
    const body = (await posted).postData() ?? '';

    await thanked(page);
    expect(await page.getByRole('status').textContent()).toContain('Waiting for the agent');
    await shot(page, '03-waiting');
    const expected: Answer = {
      action: 'confirm',
      values: {
        full_name: 'Ana Novak 😀',
        notes: 'Ring twice\nthen wait\nby the café',
        bags: 3,
        tip: 7.5,
        child_seat: false,
        car: 'van',
        extras: ['water', 'charger'],
        rating: 4,
      },
    };
    expect(session.answers()).toEqual([expected]);
    // answerToForm writes exactly what the browser posted, entry for entry.
    expect([...new URLSearchParams(body)]).toEqual([...answerToForm(TRIP, expected, 1)]);

    // The agent publishes a follow-up; the waiting page shows it in place (its watch, no reload).
    await session.publish(FOLLOW_UP);
    await page.getByRole('heading', { level: 1, name: FOLLOW_UP.title }).waitFor({ timeout: 10_000 });
    await shot(page, '04-follow-up');
    await bookAt1430(page, session);

    await session.complete();
    await page.reload();
    await page.getByRole('heading', { name: 'Done — the agent has your answer.' }).waitFor();
    await expectFitsPhone(page);
    await shot(page, '05-done');
  });

  it('works with JavaScript off, and a reject button sends its own action', async () => {
    const session = await createSession(suite.runtime, FOLLOW_UP);
    const page = await phone({ javaScriptEnabled: false });
    await page.goto(session.url);
    await page.getByLabel('15:00').check();
    await page.getByRole('button', { name: 'Book it' }).click();
    await thanked(page);
    expect(session.answers()).toEqual([{ action: 'ok', values: { time: '1500' } }]);

    const trip = await createSession(suite.runtime, TRIP);
    const page2 = await phone({ javaScriptEnabled: false });
    await page2.goto(trip.url);
    await page2.getByLabel('Full name').fill('Bo');
    await page2.getByLabel('Number of bags').fill('0');
    await page2.getByLabel('Sedan').check();
    await page2.getByRole('radio', { name: '1 of 5' }).check();
    await page2.getByRole('button', { name: 'Cancel transfer' }).click();
    await thanked(page2);
    expect(trip.answers()[0]?.action).toBe('cancel');
  });

  it('the waiting page shows the next step in place when the Session changes, without any timed reload', async () => {
    const session = await createSession(suite.runtime, SHORT_ASK);
    const page = await phone();
    const navigations: string[] = [];
    const watches: string[] = [];
    page.on('framenavigated', (f) => navigations.push(f.url()));
    page.on('request', (r) => {
      // The waiting page's watches (the form before it watches for a final state only).
      const url = new URL(r.url());
      if (url.pathname.endsWith('/state') && url.searchParams.get('status') === 'answered')
        watches.push(r.url());
    });
    await page.goto(session.url);
    await page.getByLabel('Monday').check();
    await page.getByRole('button', { name: 'Send' }).click();
    await thanked(page);
    const loaded = navigations.length;
    // Nothing reloads or polls while nothing changes: one watch request is held open.
    await expect.poll(() => suite.runtime.pendingWaits(session.id)).toBe(1);
    await page.waitForTimeout(1_500);
    expect(navigations).toHaveLength(loaded);
    expect(watches).toHaveLength(1);
    expect(await page.locator('meta[http-equiv="refresh" i]').count()).toBe(0);

    // A follow-up appears in the same document, and focus moves to its heading.
    await page.evaluate(() => {
      (window as { __samePage?: boolean }).__samePage = true;
    });
    await session.publish(FOLLOW_UP);
    const heading = page.getByRole('heading', { level: 1, name: FOLLOW_UP.title });
    await heading.waitFor({ timeout: 10_000 });
    expect(await page.title()).toBe(FOLLOW_UP.title);
    expect(await page.evaluate(() => (window as { __samePage?: boolean }).__samePage)).toBe(true);
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('H1');
    await bookAt1430(page, session);

    // Any change is picked up, not only a new revision: the agent completes, "done" appears.
    await page.evaluate(() => {
      (window as { __samePage?: boolean }).__samePage = true;
    });
    await session.complete();
    await page
      .getByRole('heading', { name: 'Done — the agent has your answer.' })
      .waitFor({ timeout: 10_000 });
    expect(await page.evaluate(() => (window as { __samePage?: boolean }).__samePage)).toBe(true);
    expect(suite.runtime.pendingWaits(session.id)).toBe(0);
  });

  it('without script, "Check for the next step" reaches the follow-up', async () => {
    const session = await createSession(suite.runtime, SHORT_ASK);
    const page = await phone({ javaScriptEnabled: false });
    await page.goto(session.url);
    await page.getByLabel('Tuesday').check();
    const waiting = page.waitForResponse((r) => r.request().method() === 'GET' && r.url() === session.url);
    await page.getByRole('button', { name: 'Send' }).click();
    const response = await waiting;
    expect(response.headers().refresh).toBeUndefined();
    await thanked(page);
    expect(await page.locator('meta[http-equiv="refresh" i]').count()).toBe(0);
    await session.publish(FOLLOW_UP);
    // Without script the page stays as it is until the person asks.
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(SHORT_ASK.title);
    await page.getByRole('link', { name: 'Check for the next step' }).click();
    await page.getByRole('heading', { level: 1, name: FOLLOW_UP.title }).waitFor();
    await page.getByLabel('15:00').check();
    await page.getByRole('button', { name: 'Book it' }).click();
    await thanked(page);
    expect(session.answers()).toEqual([
      { action: 'submit', values: { day: 'tue' } },
      { action: 'ok', values: { time: '1500' } },
    ]);
  });

  it('refuses a second tab once answered, and a stale tab after a follow-up, showing where things are', async () => {
    const session = await createSession(suite.runtime, FOLLOW_UP);
    const [first, second, third] = await Promise.all([phone(), phone(), phone()]);
    await Promise.all([first.goto(session.url), second.goto(session.url), third.goto(session.url)]);
    await first.getByLabel('14:30').check();
    await first.getByRole('button', { name: 'Book it' }).click();
    await thanked(first);

    await second.getByLabel('15:00').check();
    const refused = second.waitForResponse((r) => r.request().method() === 'POST');
    await second.getByRole('button', { name: 'Book it' }).click();
    expect((await refused).status()).toBe(409);
    await thanked(second);
    expect(session.answers()).toEqual([{ action: 'ok', values: { time: '1430' } }]);

    // The agent asks again; the third tab still shows the first form and is told the page changed.
    const next: Surface = { ...FOLLOW_UP, title: 'Pick a return time' };
    await session.publish(next);
    await third.getByLabel('15:00').check();
    const conflict = third.waitForResponse((r) => r.request().method() === 'POST');
    await third.getByRole('button', { name: 'Book it' }).click();
    expect((await conflict).status()).toBe(409);
    await third.getByRole('heading', { level: 1, name: next.title }).waitFor();
    expect(await third.getByRole('alert').textContent()).toContain('This page changed');
    await shot(third, '12-page-changed');
    expect(session.answers()).toHaveLength(1);
  });

  /** Open, on a fresh phone, a Session whose time passed; check its status, HTTP status and heading. */
  async function openPastItsTime(
    expiresIn: number,
    advanceMs: number,
    status: string,
    httpStatus: number,
    heading: string,
  ): Promise<[AgentSession, Page]> {
    const session = await sessionAfter(suite.runtime, SHORT_ASK, expiresIn, advanceMs);
    expect(session.status()).toBe(status);
    const page = await phone();
    expect((await page.goto(session.url))?.status()).toBe(httpStatus);
    await page.getByRole('heading', { name: heading }).waitFor();
    return [session, page];
  }

  it('shows a lapsed link with "Ask for more time", and a link closed for good without it', async () => {
    // A link of 20 hours or less lapses first and can be extended.
    const [lapsed, page] = await openPastItsTime(60, 61_000, 'lapsed', 200, 'This link has run out of time.');
    await expectFitsPhone(page);
    await shot(page, '06-lapsed');
    await page.getByRole('button', { name: 'Ask for more time' }).click();
    await page.getByRole('heading', { level: 1, name: SHORT_ASK.title }).waitFor();
    expect(lapsed.status()).toBe('active');
    await page.getByLabel('Tuesday').check();
    await page.getByRole('button', { name: 'Send' }).click();
    await thanked(page);
    expect(lapsed.answers()).toEqual([{ action: 'submit', values: { day: 'tue' } }]);

    // A longer link closes for good at its end: no button.
    const [, page2] = await openPastItsTime(72_001, 72_002_000, 'expired', 410, 'This link has expired.');
    expect(await page2.getByRole('button').count()).toBe(0);
    await expectFitsPhone(page2);
    await shot(page2, '07-expired');

    // A form left open past the end is refused on submit, not silently taken (without script: with
    // it, the form's watch shows the closed link in place before any submit).
    const late = await createSession(suite.runtime, SHORT_ASK);
    const page3 = await phone({ javaScriptEnabled: false });
    await page3.goto(late.url);
    await page3.getByLabel('Monday').check();
    suite.runtime.clock.advance(DAY_MS + 1_000);
    expect(late.status()).toBe('expired');
    const refused = page3.waitForResponse((r) => r.request().method() === 'POST');
    await page3.getByRole('button', { name: 'Send' }).click();
    expect((await refused).status()).toBe(410);
    await page3.getByRole('heading', { name: 'This link has expired.' }).waitFor();
    expect(late.answers()).toEqual([]);

    const unknown = await phone();
    expect((await unknown.goto(`${suite.runtime.origin}/s/nope`))?.status()).toBe(404);
    await unknown.getByRole('heading', { name: 'This link does not work.' }).waitFor();
  });

  it('a form left open when the agent withdraws shows it in place, without a reload, and keeps nothing to send', async () => {
    const session = await createSession(suite.runtime, SHORT_ASK);
    const page = await phone({ colorScheme: 'dark' });
    const navigations: string[] = [];
    page.on('framenavigated', (f) => navigations.push(f.url()));
    await page.goto(session.url);
    await page.getByLabel('Monday').check();
    const loaded = navigations.length;
    // The open form holds one watch, for a final state only.
    await expect.poll(() => suite.runtime.pendingWaits(session.id)).toBe(1);
    await page.evaluate(() => {
      (window as { __samePage?: boolean }).__samePage = true;
    });
    await api(suite.runtime, `/v1/sessions/${session.id}/withdraw`, { reason: 'We found a date.' }, 1);
    const heading = page.getByRole('heading', { name: 'This question was withdrawn.' });
    await heading.waitFor({ timeout: 10_000 });
    expect(await page.evaluate(() => (window as { __samePage?: boolean }).__samePage)).toBe(true);
    expect(navigations).toHaveLength(loaded);
    expect(await page.getByText('We found a date.').count()).toBe(1);
    expect(await page.getByRole('button').count()).toBe(0);
    expect(await page.getByRole('radio').count()).toBe(0);
    // Focus moves to the new heading, so a screen reader reads the change.
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('H1');
    expect(session.answers()).toEqual([]);
    expect(suite.runtime.pendingWaits(session.id)).toBe(0);
    await expectFitsPhone(page);
    await shot(page, '12-withdrawn-in-place');
  });

  it("an open form's watch that comes back unchanged keeps what the person typed and watches again", async () => {
    const session = await createSession(suite.runtime, SHORT_ASK);
    const page = await phone();
    const watches: string[] = [];
    let answered = false;
    // The first watch answers at once "nothing changed" (as the server does when its hold runs out).
    await page.route('**/state?*', async (route) => {
      watches.push(route.request().url());
      if (!answered) {
        answered = true;
        await route.fulfill({
          status: 200,
          contentType: 'application/json',
          body: '{"changed":false,"final":false}',
        });
      } else {
        await route.continue();
      }
    });
    await page.goto(session.url);
    await page.getByLabel('Monday').check();
    await expect.poll(() => watches.length).toBeGreaterThanOrEqual(2);
    expect(await page.getByLabel('Monday').isChecked()).toBe(true);
    expect(await page.getByRole('button', { name: 'Send' }).count()).toBe(1);
    // The kept form still sends what the person chose.
    await page.unroute('**/state?*');
    await page.getByRole('button', { name: 'Send' }).click();
    await thanked(page);
    expect(session.answers()).toEqual([{ action: 'submit', values: { day: 'mon' } }]);
  });

  it('without script, a form left open when the agent withdraws the question is refused on submit and says so', async () => {
    const session = await createSession(suite.runtime, SHORT_ASK);
    const page = await phone({ colorScheme: 'dark', javaScriptEnabled: false });
    await page.goto(session.url);
    await page.getByLabel('Monday').check();
    await api(suite.runtime, `/v1/sessions/${session.id}/withdraw`, { reason: 'We found a date.' }, 1);
    expect(session.status()).toBe('withdrawn');
    const refused = page.waitForResponse((r) => r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Send' }).click();
    expect((await refused).status()).toBe(410);
    await page.getByRole('heading', { name: 'This question was withdrawn.' }).waitFor();
    expect(await page.getByText('We found a date.').count()).toBe(1);
    expect(await page.getByRole('button').count()).toBe(0);
    expect(session.answers()).toEqual([]);
    await expectFitsPhone(page);
    await shot(page, '12-withdrawn');
    // Opened again later, the link shows the same page (410: it takes no answer).
    const again = await phone();
    expect((await again.goto(session.url))?.status()).toBe(410);
    await again.getByRole('heading', { name: 'This question was withdrawn.' }).waitFor();
  });

  it('an Ask gives two browsers their own page, asks for names, and refuses a third past the cap', async () => {
    const created = await api(suite.runtime, '/v1/asks', {
      interaction: SHORT_ASK,
      respondents: { max: 2, name: true },
    });
    const ask = { url: created.human_url as string, id: created.id as string };
    const [ana, bo, cy] = await Promise.all([phone(), phone(), phone()]);

    await ana.goto(ask.url);
    await ana.getByLabel('Your name').waitFor();
    await expectFitsPhone(ana);
    await shot(ana, '08-ask-name');
    await ana.getByRole('button', { name: 'Continue' }).click();
    const error = ana.getByRole('alert');
    expect(await error.textContent()).toContain('Enter your name');
    expect(await ana.getByLabel('Your name').getAttribute('aria-invalid')).toBe('true');
    await ana.getByLabel('Your name').fill('Ana');
    await ana.getByRole('button', { name: 'Continue' }).click();
    await ana.getByRole('heading', { level: 1, name: SHORT_ASK.title }).waitFor();

    await bo.goto(ask.url);
    await bo.getByLabel('Your name').fill('Bo');
    await bo.getByRole('button', { name: 'Continue' }).click();
    await bo.getByLabel('Monday').waitFor();
    expect(new URL(bo.url()).pathname).not.toBe(new URL(ana.url()).pathname);

    // Each answers on their own page; reopening the shared link comes back to it (cookie).
    await ana.getByLabel('Tuesday').check();
    await ana.getByRole('button', { name: 'Send' }).click();
    await bo.getByLabel('Monday').check();
    await bo.getByRole('button', { name: 'Send' }).click();
    await ana.getByRole('heading', { name: 'Done — the agent has your answer.' }).waitFor();
    await bo.getByRole('heading', { name: 'Done — the agent has your answer.' }).waitFor();
    await ana.goto(ask.url);
    await ana.getByRole('heading', { name: 'Done — the agent has your answer.' }).waitFor();

    const view = suite.runtime.asks.get(ask.id)!;
    expect(view.respondents.map((p) => [p.name, p.status, p.response?.answer])).toEqual([
      ['Ana', 'answered', { action: 'submit', values: { day: 'tue' } }],
      ['Bo', 'answered', { action: 'submit', values: { day: 'mon' } }],
    ]);
    expect(view.respondents[0]!.session_id).not.toBe(view.respondents[1]!.session_id);

    const full = await cy.goto(ask.url);
    expect(full?.status()).toBe(409);
    await cy.getByRole('heading', { name: 'This Ask is full.' }).waitFor();
    await shot(cy, '09-ask-full');
  });

  it('shows hostile text as text: nothing in it runs or becomes markup', async () => {
    // At most 60 code points, so Sess takes it for a heading, a label and an option label.
    const EVIL = `<script>__pwned=1</script><img src=x onerror="__pwned=2"><b>`;
    const surface = hostileSurface(EVIL, {
      fieldName: 'a',
      more: [
        {
          type: 'field',
          name: 'b',
          label: 'Pick',
          schema: { type: 'string', enum: ['x'], option_labels: { x: EVIL } },
        },
      ],
      action: { id: 'go', label: 'Go', intent: 'submit' },
    });
    const session = await createSession(suite.runtime, surface);
    const page = await phone();
    await page.goto(session.url);
    expect(await page.locator('h1').textContent()).toBe(EVIL);
    expect(await page.locator('h2').first().textContent()).toBe(EVIL);
    expect(await page.locator('p.text').textContent()).toBe(EVIL);
    expect(await page.locator('dd').textContent()).toBe(EVIL);
    expect(await page.getByRole('textbox', { name: EVIL, exact: true }).inputValue()).toBe(EVIL);
    expect(await page.getByRole('radio', { name: EVIL, exact: true }).count()).toBe(1);
    expect(await page.locator('img, b').count()).toBe(0);
    // The only script is the page's own watch, exactly as its CSP hash allows.
    expect(await page.locator('script').evaluateAll((els) => els.map((e) => e.textContent))).toEqual([
      LIVE_SCRIPT,
    ]);
    expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
    await expectFitsPhone(page);
    // Submitting the hostile prefilled value returns it unchanged.
    await page.getByRole('button', { name: 'Go' }).click();
    await thanked(page);
    expect(session.answers()).toEqual([{ action: 'go', values: { a: EVIL } }]);
  });

  it('can be answered with the keyboard alone, in a dark colour scheme', async () => {
    const session = await createSession(suite.runtime, TRIP);
    const page = await phone({ colorScheme: 'dark' });
    await page.goto(session.url);
    const background = await page.evaluate(
      () => getComputedStyle(document.querySelector('main')!).backgroundColor,
    );
    expect(background).toBe('rgb(22, 27, 34)');
    await shot(page, '11-dark');

    // Tab order follows the page: every control and both buttons are reachable.
    const order: string[] = [];
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press('Tab');
      order.push(
        await page.evaluate(() => {
          const el = document.activeElement as HTMLInputElement | HTMLButtonElement | null;
          return el ? `${el.tagName.toLowerCase()}:${el.name}` : '';
        }),
      );
    }
    expect(order).toEqual([
      'input:v:full_name',
      'textarea:v:notes',
      'input:v:bags',
      'input:v:tip',
      'input:v:child_seat',
      'input:v:car',
      'input:v:extras',
      'input:v:extras',
      'input:v:extras',
      'input:v:rating',
      'button:_action',
      'button:_action',
    ]);

    // Fill it in by keys only, from a freshly loaded page.
    await page.reload();
    await page.keyboard.press('Tab');
    await page.keyboard.type('Cy Lee');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.type('2');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space'); // untick the child seat
    await page.keyboard.press('Tab');
    await page.keyboard.press('ArrowDown'); // Sedan -> Minivan (arrows choose in a radio group)
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space'); // Bottled water
    for (let i = 0; i < 3; i++) await page.keyboard.press('Tab');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight'); // rating 1 -> 3
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter'); // Confirm
    await thanked(page);
    expect(session.answers()).toEqual([
      {
        action: 'confirm',
        values: {
          full_name: 'Cy Lee',
          notes: 'Ring twice\nthen wait',
          bags: 2,
          child_seat: false,
          car: 'van',
          extras: ['water'],
          rating: 3,
        },
      },
    ]);
  });

  it('fits a 360 px wide screen with long unbroken text', async () => {
    const long = 'x'.repeat(200);
    const surface: Surface = {
      ...TRIP,
      title: long.slice(0, 80),
      source: {
        kind: 'sess_surface',
        components: [
          ...TRIP.source.components,
          { type: 'text', text: long },
          { type: 'record', fields: { [long.slice(0, 40)]: long } },
          {
            type: 'field',
            name: 'r10',
            label: 'Rate 1 to 10',
            schema: { type: 'integer', format: 'rating', minimum: 1, maximum: 10 },
          },
        ],
      },
    };
    const session = await createSession(suite.runtime, surface);
    const context = await suite.browser.newContext({
      viewport: { width: 360, height: 740 },
      isMobile: true,
      hasTouch: true,
    });
    suite.track(context);
    const page = await context.newPage();
    await page.goto(session.url);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(360);
    await shot(page, '10-narrow-360');
    // Touch targets: every button is at least 44 px tall.
    for (const box of await page
      .getByRole('button')
      .evaluateAll((els) => els.map((e) => e.getBoundingClientRect().height))) {
      expect(box).toBeGreaterThanOrEqual(44);
    }
  });
});
