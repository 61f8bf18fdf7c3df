/**
 * Acting as a person on the local Sess runtime's answer page: answering a Session link exactly as
 * a browser posts the form, asking for more time, opening a page, and starting an Ask respondent —
 * every one a real HTTP request to the runtime's own page, so it is counted and faulted as any.
 *
 * It changes no state directly (the page routes do) and reads only the links' tokens.
 */
import type { LocalModel } from '../model/model.js';
import { answerToForm, validateAnswer } from '../page/index.js';
import type { LocalSess, PageResponse } from './runtime-types.js';

/** The token of a Session (`s`) or Ask (`a`) link of the runtime at `origin`. */
export function tokenOf(origin: string, humanUrl: string, kind: 's' | 'a'): string | undefined {
  try {
    const url = new URL(humanUrl, origin);
    const m = new RegExp(`^/${kind}/([A-Za-z0-9_-]+)$`).exec(url.pathname);
    return m?.[1];
  } catch {
    return undefined;
  }
}

/** One request to the page, as a browser that does not follow redirects sends it. */
async function pageRequest(origin: string, path: string, init: RequestInit): Promise<PageResponse> {
  const res = await fetch(new URL(path, origin), { ...init, redirect: 'manual' });
  const html = await res.text();
  const out: PageResponse = { status: res.status, html };
  const location = res.headers.get('location');
  if (location !== null) out.location = location;
  const cookie = res.headers.get('set-cookie');
  if (cookie !== null) out.cookie = cookie.split(';')[0]!;
  return out;
}

/** What the page answers to an answer it accepted: a redirect to the page that follows. */
const ACCEPTED = 303;

/**
 * `submitAnswer` did not get the status it expected (by default: the answer was not accepted).
 * Its message has the status and the page's own error text, never the answer's values.
 */
export class AnswerRefusedError extends Error {
  override readonly name = 'AnswerRefusedError';
  constructor(
    /** The page's status (422 for an answer refused before it was posted). */
    readonly status: number,
    /** What the page says, one message per problem. */
    readonly pageErrors: readonly string[],
  ) {
    super(
      `submitAnswer: the page answered ${status}${pageErrors.length > 0 ? `: ${pageErrors.join(' ')}` : ''} ` +
        '(pass { expectStatus } to test a refusal).',
    );
  }
}

/** The page's error lines: each field's and the button's message, else its status heading. */
function pageErrors(html: string): string[] {
  const text = (inner: string) =>
    inner
      .replace(/<[^>]*>/g, '')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&amp;/g, '&')
      .trim();
  const errors = [...html.matchAll(/<p class="error"[^>]*>([\s\S]*?)<\/p>/g)].map((m) => text(m[1]!));
  if (errors.length > 0) return errors;
  // A page in a state that takes no answer (withdrawn, expired, answered already) says so in its
  // status heading.
  const status = /<h2[^>]*>([\s\S]*?)<\/h2>/.exec(html);
  return status === null ? [] : [text(status[1]!)];
}

/** The person's side of a {@link LocalSess}. */
export function personActions(
  model: LocalModel,
  origin: string,
): Pick<LocalSess, 'submitAnswer' | 'extend' | 'openPage' | 'startRespondent'> {
  return {
    async submitAnswer(humanUrl, answer, opts = {}) {
      const token = tokenOf(origin, humanUrl, 's');
      const s = token === undefined ? undefined : model.sessionTokens.get(token);
      if (s === undefined) throw new TypeError('submitAnswer: not a Session link of this runtime');
      const revision = opts.revision ?? s.revision;
      const surface = s.surfaces[revision - 1] ?? s.surfaces[s.revision - 1]!;
      if (opts.expectStatus === undefined) {
        // What the page would refuse is refused here, with the page's own messages.
        const check = validateAnswer(surface, answer);
        if (!check.ok) throw new AnswerRefusedError(422, Object.values(check.errors));
      }
      const res = await pageRequest(origin, `/s/${s.token}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: answerToForm(surface, answer, revision).toString(),
      });
      if (res.status !== (opts.expectStatus ?? ACCEPTED))
        throw new AnswerRefusedError(res.status, pageErrors(res.html));
      return res;
    },
    async extend(humanUrl) {
      const token = tokenOf(origin, humanUrl, 's');
      if (token === undefined) throw new TypeError('extend: not a Session link of this runtime');
      return pageRequest(origin, `/s/${token}/extend`, { method: 'POST' });
    },
    openPage(url, opts = {}) {
      return pageRequest(origin, url, opts.cookie === undefined ? {} : { headers: { cookie: opts.cookie } });
    },
    async startRespondent(askUrl, opts = {}) {
      const token = tokenOf(origin, askUrl, 'a');
      if (token === undefined) throw new TypeError('startRespondent: not an Ask link of this runtime');
      const res =
        opts.name === undefined
          ? await pageRequest(origin, `/a/${token}`, {})
          : await pageRequest(origin, `/a/${token}`, {
              method: 'POST',
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
              body: new URLSearchParams({ name: opts.name }).toString(),
            });
      return res.status === 303 && res.location
        ? { ...res, humanUrl: new URL(res.location, origin).href }
        : res;
    },
  };
}
