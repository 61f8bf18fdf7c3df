/**
 * The answer page's routes of the local Sess runtime: the Session link (`/s/{token}`: the page
 * of its current state, the form post, "ask for more time", and the page's watch), and the Ask
 * link (`/a/{token}`: a respondent's start, with a name when the Ask wants one, and the cap).
 *
 * The watch (`GET /s/{token}/state?revision=<n>&status=<status>`) is what an open page asks to
 * learn that its Session moved on: it holds the request until the Session is no longer at that
 * revision and status (any change: an answer, a follow-up, a completion, expiry, more time), or
 * for {@link PAGE_WATCH_MS}, then answers `{ "changed": boolean, "final": boolean }`.
 *
 * It decides which view a state shows and with which status code; drawing is `page/`'s job and
 * every transition the model's. It never logs.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SessionStatus } from '../../core/contract/ports.js';
import { FINAL_SESSION_STATUSES, SESSION_STATUSES } from '../../sess/wire.js';
import type { LocalModel } from '../model/model.js';
import type { AskRecord, SessionRecord } from '../model/records.js';
import { codePoints } from '../model/text.js';
import { ACTION_ERROR_KEY, formToAnswer, type PageView, renderPage, validateAnswer } from '../page/index.js';
import type { Route } from './api-routes.js';
import { closedSignal, readForm, redirect, sendHtml, sendPageJson } from './http-io.js';

/** Longest a page's watch request is held before it answers "not changed" (the page asks again). */
export const PAGE_WATCH_MS = 25_000;

/** The page's own paths for a Session. */
function sessionPaths(s: SessionRecord) {
  const page = `/s/${s.token}`;
  return {
    page,
    extend: `${page}/extend`,
    watch: (status: SessionStatus) => `${page}/state?revision=${s.revision}&status=${status}`,
  };
}

/** The withdrawn page; an empty reason shows none. */
function withdrawnView(title: string, reason: string | undefined): PageView {
  return reason === undefined || reason === ''
    ? { kind: 'withdrawn', title }
    : { kind: 'withdrawn', title, reason };
}

/** @internal The answer page's routes of a runtime. */
export function createPageRoutes(model: LocalModel, counts: { page: number }): Route {
  const sendPage = (
    res: ServerResponse,
    status: number,
    view: PageView,
    headers: Record<string, string> = {},
  ) => sendHtml(res, status, renderPage(view), headers);

  /** The page of a Session as it is now, with the status code that goes with it. */
  const currentPage = (
    s: SessionRecord,
    formExtra: { errors?: Record<string, string> } = {},
  ): [number, PageView] => {
    const surface = s.surfaces[s.revision - 1]!;
    const title = surface.title;
    const paths = sessionPaths(s);
    const status = model.status(s);
    switch (status) {
      case 'active':
        return [
          200,
          {
            kind: 'form',
            surface,
            revision: s.revision,
            actionUrl: paths.page,
            watchUrl: paths.watch(status),
            ...formExtra,
          },
        ];
      case 'answered':
        return [200, { kind: 'waiting', title, pageUrl: paths.page, watchUrl: paths.watch(status) }];
      case 'completed':
        return [200, { kind: 'done', title }];
      case 'lapsed':
        return [200, { kind: 'expired', title, extendUrl: paths.extend }];
      case 'expired':
        return [410, { kind: 'expired', title }];
      case 'withdrawn':
        return [410, withdrawnView(title, s.withdrawn?.reason)];
    }
  };

  /** Refuse a post that the Session can no longer take, showing where it is. */
  const refuse = (res: ServerResponse, s: SessionRecord, why: string) => {
    const [, view] = currentPage(s);
    sendPage(res, why === 'lapsed' || why === 'expired' || why === 'withdrawn' ? 410 : 409, view);
  };

  const submit = async (req: IncomingMessage, res: ServerResponse, s: SessionRecord) => {
    const form = await readForm(req);
    const status = model.status(s);
    if (status !== 'active') return refuse(res, s, status);
    const surface = s.surfaces[s.revision - 1]!;
    const revision = Number(form.get('_revision'));
    if (revision !== s.revision) {
      const [, view] = currentPage(s, {
        errors: { [ACTION_ERROR_KEY]: 'This page changed. Check it and send again.' },
      });
      return sendPage(res, 409, view);
    }
    const input = formToAnswer(surface, form);
    const check = validateAnswer(surface, input);
    if (!check.ok) {
      return sendPage(res, 422, {
        kind: 'form',
        surface,
        revision,
        actionUrl: sessionPaths(s).page,
        watchUrl: sessionPaths(s).watch('active'),
        values: input.values,
        errors: check.errors,
      });
    }
    const outcome = model.acceptAnswer(s, revision, check.answer);
    if (outcome === 'ok') return redirect(res, sessionPaths(s).page);
    return refuse(res, s, outcome);
  };

  const watch = async (res: ServerResponse, s: SessionRecord, q: URLSearchParams) => {
    const revision = Number(q.get('revision'));
    const status = q.get('status') as SessionStatus;
    if (!Number.isSafeInteger(revision) || !(SESSION_STATUSES as readonly string[]).includes(status)) {
      return sendPageJson(res, { changed: true, final: false });
    }
    const signal = closedSignal(res);
    if (!model.waits.changed(s, revision, status)) {
      await model.waits.wait(s, revision, status, PAGE_WATCH_MS, signal);
    }
    if (signal.aborted) return;
    const now = model.status(s);
    const changed = s.revision !== revision || now !== status;
    sendPageJson(res, { changed, final: FINAL_SESSION_STATUSES.has(now) });
  };

  const sessionLink = (req: IncomingMessage, res: ServerResponse, url: URL, token: string, sub?: string) => {
    const method = req.method ?? 'GET';
    const s = model.sessionTokens.get(token);
    if (s === undefined) return sendPage(res, 404, { kind: 'not_found' });
    if (sub === '/extend') {
      if (method !== 'POST') return sendPage(res, 405, { kind: 'not_found' }, { allow: 'POST' });
      const outcome = model.extend(s);
      if (outcome === 'ok') return redirect(res, sessionPaths(s).page);
      return refuse(res, s, outcome);
    }
    if (sub === '/state') {
      if (method !== 'GET') return sendPage(res, 405, { kind: 'not_found' }, { allow: 'GET' });
      return watch(res, s, url.searchParams);
    }
    if (method === 'GET') {
      const [status, view] = currentPage(s);
      return sendPage(res, status, view);
    }
    if (method === 'POST') return submit(req, res, s);
    return sendPage(res, 405, { kind: 'not_found' }, { allow: 'GET, POST' });
  };

  const cookieName = (a: AskRecord) => `sess_ask_${a.id}`;
  const respondentFromCookie = (req: IncomingMessage, a: AskRecord): SessionRecord | undefined => {
    const header = req.headers.cookie ?? '';
    for (const part of header.split(';')) {
      const [name, ...rest] = part.trim().split('=');
      if (name !== cookieName(a)) continue;
      const s = model.sessionTokens.get(rest.join('='));
      if (s?.ask?.askId === a.id) return s;
    }
    return undefined;
  };
  const startAndRedirect = (res: ServerResponse, a: AskRecord, name?: string) => {
    const s = model.startRespondent(a, name);
    if (s === 'full') return sendPage(res, 409, { kind: 'ask_full', title: a.surface.title });
    if (s === 'closed') return sendPage(res, 410, { kind: 'expired', title: a.surface.title });
    redirect(res, sessionPaths(s).page, {
      'set-cookie': `${cookieName(a)}=${s.token}; Path=/; HttpOnly; SameSite=Lax`,
    });
  };

  const askLink = async (req: IncomingMessage, res: ServerResponse, token: string) => {
    const a = model.askTokens.get(token);
    if (a === undefined) return sendPage(res, 404, { kind: 'not_found' });
    if (req.method !== 'GET' && req.method !== 'POST') {
      return sendPage(res, 405, { kind: 'not_found' }, { allow: 'GET, POST' });
    }
    const mine = respondentFromCookie(req, a);
    if (mine) return redirect(res, sessionPaths(mine).page);
    const title = a.surface.title;
    if (a.closed) return sendPage(res, 410, withdrawnView(title, a.closed.reason));
    if (model.clock.now() >= a.expiresAt) return sendPage(res, 410, { kind: 'expired', title });
    if (a.respondents.length >= a.max) return sendPage(res, 409, { kind: 'ask_full', title });
    if (req.method === 'GET') {
      if (a.requireName) return sendPage(res, 200, { kind: 'ask_name', title, actionUrl: `/a/${a.token}` });
      return startAndRedirect(res, a);
    }
    const form = await readForm(req);
    if (!a.requireName) return startAndRedirect(res, a);
    const name = (form.get('name') ?? '').trim();
    const length = codePoints(name);
    if (length === 0 || length > 200) {
      return sendPage(res, 422, {
        kind: 'ask_name',
        title,
        actionUrl: `/a/${a.token}`,
        error: length === 0 ? 'Enter your name.' : 'Your name can be at most 200 characters.',
      });
    }
    return startAndRedirect(res, a, name);
  };

  return async (req, res, url) => {
    const path = url.pathname;
    const session = /^\/s\/([A-Za-z0-9_-]+)(\/extend|\/state)?$/.exec(path);
    const ask = session ? null : /^\/a\/([A-Za-z0-9_-]+)$/.exec(path);
    if (!session && !ask) return sendPage(res, 404, { kind: 'not_found' });
    counts.page++;
    if (session) return sessionLink(req, res, url, session[1]!, session[2]);
    return askLink(req, res, ask![1]!);
  };
}
