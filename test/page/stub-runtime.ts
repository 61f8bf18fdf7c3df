/**
 * A test double of the local runtime's page routes (`/s/{token}`, `/a/{token}`, as
 * `docs/sess-api.md` "The answer page" describes them), built only from the answer-page module.
 * The browser suite runs against it when the real runtime (`startLocalSess`) is not there, and
 * it pins down how the page module is meant to be mounted. It is a stand-in, not the runtime: no
 * API, no receipts, no clock.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Answer, Surface } from '../../src/core/surface.js';
import { formToAnswer, type PageView, renderPage, validateAnswer } from '../../src/testing/page/index.js';

type Status = 'active' | 'answered' | 'lapsed' | 'completed' | 'expired';

interface StubSession {
  revision: number;
  surfaces: Surface[];
  status: Status;
  answers: Answer[];
  /** Set for an Ask respondent's page: completed as soon as it is answered. */
  respondent?: { askToken: string; name?: string };
}

interface StubAsk {
  surface: Surface;
  max: number;
  name: boolean;
  respondents: string[];
}

/** The double's handle on a Session, for the test playing the agent. */
export interface StubSessionHandle {
  url: string;
  answers(): Answer[];
  status(): Status;
  publish(surface: Surface): void;
  complete(): void;
  lapse(): void;
  expire(): void;
}

/** The double's handle on an Ask. */
export interface StubAskHandle {
  url: string;
  respondents(): { name?: string; status: Status; answers: Answer[] }[];
}

/** A running double. */
export interface StubRuntime {
  origin: string;
  createSession(surface: Surface): StubSessionHandle;
  createAsk(surface: Surface, options: { max: number; name?: boolean }): StubAskHandle;
  close(): Promise<void>;
}

const token = () => randomBytes(12).toString('base64url');

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(
  res: ServerResponse,
  status: number,
  view: PageView,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(renderPage(view));
}

function redirect(res: ServerResponse, location: string, headers: Record<string, string> = {}): void {
  res.writeHead(303, { location, ...headers });
  res.end();
}

/** Start the double on 127.0.0.1 (random port). */
export async function startStubRuntime(): Promise<StubRuntime> {
  const sessions = new Map<string, StubSession>();
  const asks = new Map<string, StubAsk>();

  const pageView = (t: string, s: StubSession): PageView => {
    const surface = s.surfaces[s.revision - 1]!;
    switch (s.status) {
      case 'active':
        return { kind: 'form', surface, revision: s.revision, actionUrl: `/s/${t}` };
      case 'answered':
        return { kind: 'waiting', title: surface.title };
      case 'completed':
        return { kind: 'done', title: surface.title };
      case 'lapsed':
        return { kind: 'expired', title: surface.title, extendUrl: `/s/${t}/extend` };
      case 'expired':
        return { kind: 'expired', title: surface.title };
    }
  };

  const startRespondent = (askToken: string, ask: StubAsk, name?: string): string | undefined => {
    if (ask.respondents.length >= ask.max) return undefined;
    const t = token();
    sessions.set(t, {
      revision: 1,
      surfaces: [ask.surface],
      status: 'active',
      answers: [],
      respondent: name === undefined ? { askToken } : { askToken, name },
    });
    ask.respondents.push(t);
    return t;
  };

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const body = req.method === 'POST' ? await readBody(req) : '';
    const [, kind, t, extra] = url.pathname.split('/');
    if (kind === 's' && t && sessions.has(t)) {
      const s = sessions.get(t)!;
      if (req.method === 'GET' && !extra) return send(res, 200, pageView(t, s));
      if (req.method === 'POST' && extra === 'extend') {
        if (s.status !== 'lapsed') return send(res, 409, pageView(t, s));
        s.status = 'active';
        return redirect(res, `/s/${t}`);
      }
      if (req.method === 'POST' && !extra) {
        if (s.status === 'lapsed' || s.status === 'expired') return send(res, 410, pageView(t, s));
        const form = new URLSearchParams(body);
        if (s.status !== 'active' || form.get('_revision') !== String(s.revision)) {
          return send(res, 409, pageView(t, s));
        }
        const surface = s.surfaces[s.revision - 1]!;
        const input = formToAnswer(surface, form);
        const check = validateAnswer(surface, input);
        if (!check.ok) {
          return send(res, 422, {
            kind: 'form',
            surface,
            revision: s.revision,
            actionUrl: `/s/${t}`,
            values: input.values,
            errors: check.errors,
          });
        }
        s.answers.push(check.answer);
        s.status = s.respondent ? 'completed' : 'answered';
        return redirect(res, `/s/${t}`);
      }
    }
    if (kind === 'a' && t && asks.has(t) && !extra) {
      const ask = asks.get(t)!;
      const cookieName = `sess_ask_${t}`;
      const mine = (req.headers.cookie ?? '')
        .split(';')
        .map((c) => c.trim().split('='))
        .find(([k]) => k === cookieName)?.[1];
      if (mine && sessions.has(mine)) return redirect(res, `/s/${mine}`);
      const title = ask.surface.title;
      let name: string | undefined;
      if (ask.name) {
        if (req.method !== 'POST') {
          if (ask.respondents.length >= ask.max) return send(res, 409, { kind: 'ask_full', title });
          return send(res, 200, { kind: 'ask_name', title, actionUrl: `/a/${t}` });
        }
        name = (new URLSearchParams(body).get('name') ?? '').trim();
        const length = [...name].length;
        if (length < 1 || length > 200) {
          const error =
            length < 1 ? 'Enter your name to start.' : 'Use at most 200 characters for your name.';
          return send(res, 422, { kind: 'ask_name', title, actionUrl: `/a/${t}`, error });
        }
      }
      const started = startRespondent(t, ask, name);
      if (started === undefined) return send(res, 409, { kind: 'ask_full', title });
      return redirect(res, `/s/${started}`, {
        'set-cookie': `${cookieName}=${started}; Path=/; HttpOnly; SameSite=Lax`,
      });
    }
    send(res, 404, { kind: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    origin,
    createSession(surface) {
      const t = token();
      const s: StubSession = { revision: 1, surfaces: [surface], status: 'active', answers: [] };
      sessions.set(t, s);
      return {
        url: `${origin}/s/${t}`,
        answers: () => [...s.answers],
        status: () => s.status,
        publish(next) {
          if (s.status !== 'answered') throw new Error(`publish on a ${s.status} session`);
          s.surfaces.push(next);
          s.revision++;
          s.status = 'active';
        },
        complete() {
          if (s.status !== 'answered') throw new Error(`complete on a ${s.status} session`);
          s.status = 'completed';
        },
        lapse() {
          s.status = 'lapsed';
        },
        expire() {
          s.status = 'expired';
        },
      };
    },
    createAsk(surface, options) {
      const t = token();
      const ask: StubAsk = { surface, max: options.max, name: options.name ?? false, respondents: [] };
      asks.set(t, ask);
      return {
        url: `${origin}/a/${t}`,
        respondents: () =>
          ask.respondents.map((r) => {
            const s = sessions.get(r)!;
            return {
              ...(s.respondent?.name ? { name: s.respondent.name } : {}),
              status: s.status,
              answers: s.answers,
            };
          }),
      };
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => (e ? reject(e) : resolve()));
      }),
  };
}
