/**
 * What the answer page's browser suites share: Debian's Chromium through playwright-core (never a
 * downloaded browser), a fresh phone per person (390×844, touch, its own cookies), the real local
 * runtime, and the agent's side of a Session through the documented HTTP API
 * (`docs/sess-api.md`). A suite calls {@link useBrowser} inside its `describe` and
 * {@link describeWithChromium} around it.
 *
 * Without `/usr/bin/chromium` (or `SESS_TEST_CHROMIUM`) a suite is skipped with a warning, except
 * under `CI`, where a missing browser fails.
 */
import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Answer, Surface } from '../../src/core/model/surface.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { CHROMIUM, HAVE_CHROMIUM, launchChromium } from '../support/chromium.js';
/** Where screenshots of every state go. */
export const SHOTS = 'test-results/page';
/** The phone every person uses. */
export const PHONE = { width: 390, height: 844 };

/**
 * `describe` for a browser suite: runs `body` when Chromium is there; otherwise warns and skips,
 * or fails under `CI`.
 */
export function describeWithChromium(name: string, body: () => void): void {
  if (!HAVE_CHROMIUM && process.env.CI) {
    describe(`${name} (CI)`, () => {
      it('needs Chromium', () => {
        throw new Error(`${CHROMIUM} is missing; CI must install it with scripts/ci-chromium.sh`);
      });
    });
    return;
  }
  if (!HAVE_CHROMIUM) {
    console.warn(`${name}: skipped, ${CHROMIUM} is missing (run bash scripts/ci-chromium.sh)`);
  }
  describe.skipIf(!HAVE_CHROMIUM)(
    `${name}${HAVE_CHROMIUM ? '' : ` (skipped: ${CHROMIUM} is missing; run bash scripts/ci-chromium.sh)`}`,
    // A browser on two busy CI cores is slow; no step waits on a timer, so a high ceiling costs nothing.
    { timeout: 90_000 },
    body,
  );
}

/** The agent's side of one Session, through the documented HTTP API. */
export interface AgentSession {
  id: string;
  url: string;
  answers(): Answer[];
  status(): string;
  publish(surface: Surface): Promise<void>;
  complete(): Promise<void>;
}

let keyCounter = 0;

/** `POST` to the runtime's API as the agent; a refusal throws with its body. */
export async function api(
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

/** Create a Session as the agent does. */
export async function createSession(
  sess: LocalSess,
  surface: Surface,
  expiresIn?: number,
): Promise<AgentSession> {
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

/**
 * A Session of `expiresIn` seconds whose link the runtime's clock then moves `advanceMs` past its
 * creation (a link of 20 hours or less lapses first; a longer one closes for good).
 */
export async function sessionAfter(
  sess: LocalSess,
  surface: Surface,
  expiresIn: number,
  advanceMs: number,
): Promise<AgentSession> {
  const session = await createSession(sess, surface, expiresIn);
  sess.clock.advance(advanceMs);
  return session;
}

/** Options of one phone. */
export interface PhoneOptions {
  javaScriptEnabled?: boolean;
  colorScheme?: 'light' | 'dark';
}

/** The browser and runtime of one suite. */
export interface BrowserSuite {
  readonly browser: Browser;
  readonly runtime: LocalSess;
  /** A fresh phone: its own cookies, a 390×844 touch screen; a dialog fails the test. */
  phone(options?: PhoneOptions): Promise<Page>;
  /** A screenshot of the whole page into {@link SHOTS}. */
  shot(page: Page, name: string): Promise<Buffer>;
  /** Nothing sticks out sideways on a phone. */
  expectFitsPhone(page: Page): Promise<void>;
  /** Keep a context to close after the suite. */
  track(context: BrowserContext): BrowserContext;
}

/** Launch Chromium and start a runtime for the suite around it; both close after it. */
export function useBrowser(): BrowserSuite {
  let browser: Browser | undefined;
  let runtime: LocalSess | undefined;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    [browser, runtime] = await Promise.all([launchChromium(), startLocalSess()]);
  });

  afterAll(async () => {
    await Promise.all(contexts.map((c) => c.close()));
    await browser?.close();
    await runtime?.close();
  });

  const suite: BrowserSuite = {
    get browser() {
      return browser!;
    },
    get runtime() {
      return runtime!;
    },
    track(context) {
      contexts.push(context);
      return context;
    },
    async phone(options = {}) {
      const context = suite.track(
        await browser!.newContext({
          viewport: PHONE,
          deviceScaleFactor: 1,
          isMobile: true,
          hasTouch: true,
          locale: 'en-GB',
          ...options,
        }),
      );
      const page = await context.newPage();
      page.on('dialog', (d) => {
        throw new Error(`unexpected dialog: ${d.message()}`);
      });
      return page;
    },
    shot: (page, name) => page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true }),
    async expectFitsPhone(page) {
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(width).toBeLessThanOrEqual(PHONE.width);
    },
  };
  return suite;
}
