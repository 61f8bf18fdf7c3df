/**
 * The answer page in a real browser (Debian's Chromium through playwright-core) at a phone
 * viewport: a person fills every field type found by its visible label, sees validation errors,
 * submits, waits, answers a follow-up, sees "done"; expired and lapsed links; an Ask answered by
 * two browsers. It runs against the real local runtime (`startLocalSess`): the agent's side speaks
 * the documented HTTP API (`docs/sess-api.md`), links lapse and expire on the runtime's clock.
 * Screenshots of every state go to `test-results/page/`.
 *
 * Without `/usr/bin/chromium` (or `SESS_TEST_CHROMIUM`) the suite is skipped (run
 * `bash scripts/ci-chromium.sh`), except under `CI`, where a missing browser fails. It never
 * downloads a browser.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Answer, Surface } from '../../src/core/surface.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { answerToForm } from '../../src/testing/page/index.js';
import { FOLLOW_UP, SHORT_ASK, TRIP } from './fixtures.js';

// Debian's Chromium; SESS_TEST_CHROMIUM points elsewhere (another distribution's build).
const CHROMIUM = process.env.SESS_TEST_CHROMIUM || '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const SHOTS = 'test-results/page';
const PHONE = { width: 390, height: 844 };
const DAY_MS = 86_400_000;

let keyCounter = 0;

/** The agent's side of one Session, through the documented HTTP API. */
interface AgentSession {
  id: string;
  url: string;
  answers(): Answer[];
  status(): string;
  publish(surface: Surface): Promise<void>;
  complete(): Promise<void>;
}

async function api(
  sess: LocalSess,
  path: string,
  body: unknown,
  ifMatch?: number,
): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${sess.apiKey}`,
    'content-type': 'application/json',
    'idempotency-key': `page-test-${++keyCounter}`,
  };
  if (ifMatch !== undefined) headers['if-match'] = `"${ifMatch}"`;
  const res = await fetch(`${sess.origin}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function createSession(sess: LocalSess, surface: Surface, expiresIn?: number): Promise<AgentSession> {
  const created = await api(sess, '/v1/sessions', {
    interaction: surface,
    ...(expiresIn === undefined ? {} : { expires_in: expiresIn }),
  });
  const id = created.id as string;
  const view = () => sess.sessions.get(id)!.view;
  const mutate = async (what: 'revisions' | 'complete', extra: object) => {
    const v = view();
    const event = v.responses.find((r) => r.revision === v.revision)!;
    await api(
      sess,
      `/v1/sessions/${id}/${what}`,
      { response_event_id: event.event_id, ...extra },
      v.revision,
    );
  };
  return {
    id,
    url: created.human_url as string,
    answers: () => view().responses.map((r) => r.answer as Answer),
    status: () => view().status,
    publish: (next) => mutate('revisions', { interaction: next }),
    complete: () => mutate('complete', {}),
  };
}

if (!HAVE_CHROMIUM && !process.env.CI) {
  console.warn(`answer-page browser suite skipped: ${CHROMIUM} is missing (run bash scripts/ci-chromium.sh)`);
}
if (!HAVE_CHROMIUM && process.env.CI) {
  describe('answer page in a browser (CI)', () => {
    it('needs Chromium', () => {
      throw new Error(`${CHROMIUM} is missing; CI must install it with scripts/ci-chromium.sh`);
    });
  });
}

describe.skipIf(!HAVE_CHROMIUM)(
  `answer page in a real browser${HAVE_CHROMIUM ? '' : ` (skipped: ${CHROMIUM} is missing; run bash scripts/ci-chromium.sh)`}`,
  // A browser on two busy CI cores is slow; no step waits on a timer, so a high ceiling costs nothing.
  { timeout: 90_000 },
  () => {
    let browser: Browser;
    let runtime: LocalSess;
    const contexts: BrowserContext[] = [];

    beforeAll(async () => {
      mkdirSync(SHOTS, { recursive: true });
      [browser, runtime] = await Promise.all([
        chromium.launch({
          executablePath: CHROMIUM,
          args: [
            '--headless',
            '--no-sandbox',
            '--disable-gpu',
            '--no-first-run',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
            '--disable-quic',
          ],
        }),
        startLocalSess(),
      ]);
    });

    afterAll(async () => {
      await Promise.all(contexts.map((c) => c.close()));
      await browser?.close();
      await runtime?.close();
    });

    /** A fresh phone: its own cookies, a 390×844 touch screen. */
    async function phone(
      options: { javaScriptEnabled?: boolean; colorScheme?: 'light' | 'dark' } = {},
    ): Promise<Page> {
      const context = await browser.newContext({
        viewport: PHONE,
        deviceScaleFactor: 1,
        isMobile: true,
        hasTouch: true,
        locale: 'en-GB',
        ...options,
      });
      contexts.push(context);
      const page = await context.newPage();
      page.on('dialog', (d) => {
        throw new Error(`unexpected dialog: ${d.message()}`);
      });
      return page;
    }

    const shot = (page: Page, name: string) =>
      page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });

    /** Nothing sticks out sideways on a phone. */
    async function expectFitsPhone(page: Page): Promise<void> {
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(width).toBeLessThanOrEqual(PHONE.width);
    }

    it('a person fills every field type by its label, fixes errors, and follows the Session to done', async () => {
      const session = await createSession(runtime, TRIP);
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

      await page.getByRole('heading', { name: 'Thanks — your answer was sent.' }).waitFor();
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

      // The agent publishes a follow-up; the waiting page picks it up by itself (meta refresh).
      await session.publish(FOLLOW_UP);
      await page.getByRole('heading', { level: 1, name: FOLLOW_UP.title }).waitFor({ timeout: 10_000 });
      await shot(page, '04-follow-up');
      await page.getByLabel('14:30').check();
      await page.getByRole('button', { name: 'Book it' }).click();
      await page.getByRole('heading', { name: 'Thanks — your answer was sent.' }).waitFor();
      expect(session.answers()[1]).toEqual({ action: 'ok', values: { time: '1430' } });

      await session.complete();
      await page.reload();
      await page.getByRole('heading', { name: 'Done — the agent has your answer.' }).waitFor();
      await expectFitsPhone(page);
      await shot(page, '05-done');
    });

    it('works with JavaScript off, and a reject button sends its own action', async () => {
      const session = await createSession(runtime, FOLLOW_UP);
      const page = await phone({ javaScriptEnabled: false });
      await page.goto(session.url);
      await page.getByLabel('15:00').check();
      await page.getByRole('button', { name: 'Book it' }).click();
      await page.getByRole('heading', { name: 'Thanks — your answer was sent.' }).waitFor();
      expect(session.answers()).toEqual([{ action: 'ok', values: { time: '1500' } }]);

      const trip = await createSession(runtime, TRIP);
      const page2 = await phone({ javaScriptEnabled: false });
      await page2.goto(trip.url);
      await page2.getByLabel('Full name').fill('Bo');
      await page2.getByLabel('Number of bags').fill('0');
      await page2.getByLabel('Sedan').check();
      await page2.getByRole('radio', { name: '1 of 5' }).check();
      await page2.getByRole('button', { name: 'Cancel transfer' }).click();
      await page2.getByRole('heading', { name: 'Thanks — your answer was sent.' }).waitFor();
      expect(trip.answers()[0]?.action).toBe('cancel');
    });

    it('refuses a second tab once answered, and a stale tab after a follow-up, showing where things are', async () => {
      const session = await createSession(runtime, FOLLOW_UP);
      const [first, second, third] = await Promise.all([phone(), phone(), phone()]);
      await Promise.all([first.goto(session.url), second.goto(session.url), third.goto(session.url)]);
      await first.getByLabel('14:30').check();
      await first.getByRole('button', { name: 'Book it' }).click();
      await first.getByRole('heading', { name: 'Thanks — your answer was sent.' }).waitFor();

      await second.getByLabel('15:00').check();
      const refused = second.waitForResponse((r) => r.request().method() === 'POST');
      await second.getByRole('button', { name: 'Book it' }).click();
      expect((await refused).status()).toBe(409);
      await second.getByRole('heading', { name: 'Thanks — your answer was sent.' }).waitFor();
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

    it('shows a lapsed link with "Ask for more time", and a link closed for good without it', async () => {
      // A link of 20 hours or less lapses first and can be extended.
      const lapsed = await createSession(runtime, SHORT_ASK, 60);
      runtime.clock.advance(61_000);
      expect(lapsed.status()).toBe('lapsed');
      const page = await phone();
      expect((await page.goto(lapsed.url))?.status()).toBe(200);
      await page.getByRole('heading', { name: 'This link has run out of time.' }).waitFor();
      await expectFitsPhone(page);
      await shot(page, '06-lapsed');
      await page.getByRole('button', { name: 'Ask for more time' }).click();
      await page.getByRole('heading', { level: 1, name: SHORT_ASK.title }).waitFor();
      expect(lapsed.status()).toBe('active');
      await page.getByLabel('Tuesday').check();
      await page.getByRole('button', { name: 'Send' }).click();
      await page.getByRole('heading', { name: 'Thanks — your answer was sent.' }).waitFor();
      expect(lapsed.answers()).toEqual([{ action: 'submit', values: { day: 'tue' } }]);

      // A longer link closes for good at its end: no button.
      const closed = await createSession(runtime, SHORT_ASK, 72_001);
      runtime.clock.advance(72_002_000);
      expect(closed.status()).toBe('expired');
      const page2 = await phone();
      expect((await page2.goto(closed.url))?.status()).toBe(410);
      await page2.getByRole('heading', { name: 'This link has expired.' }).waitFor();
      expect(await page2.getByRole('button').count()).toBe(0);
      await expectFitsPhone(page2);
      await shot(page2, '07-expired');

      // A form left open past the end is refused on submit, not silently taken.
      const late = await createSession(runtime, SHORT_ASK);
      const page3 = await phone();
      await page3.goto(late.url);
      await page3.getByLabel('Monday').check();
      runtime.clock.advance(DAY_MS + 1_000);
      expect(late.status()).toBe('expired');
      const refused = page3.waitForResponse((r) => r.request().method() === 'POST');
      await page3.getByRole('button', { name: 'Send' }).click();
      expect((await refused).status()).toBe(410);
      await page3.getByRole('heading', { name: 'This link has expired.' }).waitFor();
      expect(late.answers()).toEqual([]);

      const unknown = await phone();
      expect((await unknown.goto(`${runtime.origin}/s/nope`))?.status()).toBe(404);
      await unknown.getByRole('heading', { name: 'This link does not work.' }).waitFor();
    });

    it('an Ask gives two browsers their own page, asks for names, and refuses a third past the cap', async () => {
      const created = await api(runtime, '/v1/asks', {
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

      const view = runtime.asks.get(ask.id)!;
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
      const surface: Surface = {
        mode: 'interactive',
        title: EVIL,
        description: EVIL,
        source: {
          kind: 'sess_surface',
          components: [
            { type: 'heading', text: EVIL },
            { type: 'text', text: EVIL },
            { type: 'record', label: EVIL, fields: { key: EVIL } },
            {
              type: 'field',
              name: 'a',
              label: EVIL,
              description: EVIL,
              schema: { type: 'string' },
              value: EVIL,
            },
            {
              type: 'field',
              name: 'b',
              label: 'Pick',
              schema: { type: 'string', enum: ['x'], option_labels: { x: EVIL } },
            },
          ],
        },
        actions: [{ id: 'go', label: 'Go', intent: 'submit' }],
      };
      const session = await createSession(runtime, surface);
      const page = await phone();
      await page.goto(session.url);
      expect(await page.locator('h1').textContent()).toBe(EVIL);
      expect(await page.locator('h2').first().textContent()).toBe(EVIL);
      expect(await page.locator('p.text').textContent()).toBe(EVIL);
      expect(await page.locator('dd').textContent()).toBe(EVIL);
      expect(await page.getByRole('textbox', { name: EVIL, exact: true }).inputValue()).toBe(EVIL);
      expect(await page.getByRole('radio', { name: EVIL, exact: true }).count()).toBe(1);
      expect(await page.locator('img, b, script').count()).toBe(0);
      expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
      await expectFitsPhone(page);
      // Submitting the hostile prefilled value returns it unchanged.
      await page.getByRole('button', { name: 'Go' }).click();
      await page.getByRole('heading', { name: 'Thanks — your answer was sent.' }).waitFor();
      expect(session.answers()).toEqual([{ action: 'go', values: { a: EVIL } }]);
    });

    it('can be answered with the keyboard alone, in a dark colour scheme', async () => {
      const session = await createSession(runtime, TRIP);
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
      await page.getByRole('heading', { name: 'Thanks — your answer was sent.' }).waitFor();
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
      const session = await createSession(runtime, surface);
      const context = await browser.newContext({
        viewport: { width: 360, height: 740 },
        isMobile: true,
        hasTouch: true,
      });
      contexts.push(context);
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
  },
);
