/**
 * The smallest mount of the answer page: one Session served by a `node:http` handler, the way a
 * server wires `renderPage`, `formToAnswer`, `validateAnswer` and `answerToForm` together.
 *
 * It is deliberately minimal (one Session, no revisions, no expiry): the real mount is the local
 * runtime's `page-routes.ts`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Answer, Surface } from '../../src/core/model/surface.js';
import {
  answerToForm,
  formToAnswer,
  PAGE_CSP,
  type PageView,
  renderPage,
  validateAnswer,
} from '../../src/testing/page/index.js';

/** Serve one Session's page at `path`: the form, inline errors, then "waiting". */
export function examplePageHandler(surface: Surface, path: string, onAnswer: (answer: Answer) => void) {
  let answered = false;
  const send = (res: ServerResponse, status: number, view: PageView) => {
    res.writeHead(status, {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': PAGE_CSP,
    });
    res.end(renderPage(view));
  };
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.url !== path) return send(res, 404, { kind: 'not_found' });
    if (answered)
      return send(res, req.method === 'POST' ? 409 : 200, {
        kind: 'waiting',
        title: surface.title,
        pageUrl: path,
      });
    if (req.method !== 'POST') return send(res, 200, { kind: 'form', surface, revision: 1, actionUrl: path });

    let body = '';
    for await (const chunk of req) body += String(chunk);
    const input = formToAnswer(surface, new URLSearchParams(body));
    const check = validateAnswer(surface, input);
    if (!check.ok) {
      const { values } = input;
      return send(res, 422, {
        kind: 'form',
        surface,
        revision: 1,
        actionUrl: path,
        values,
        errors: check.errors,
      });
    }
    answered = true;
    onAnswer(check.answer);
    res.writeHead(303, { location: path });
    res.end();
  };
}

/** Answer a page like a browser, without one: `303` when accepted, `422` with the form otherwise. */
export async function exampleSubmit(pageUrl: string, surface: Surface, answer: Answer, revision: number) {
  const res = await fetch(pageUrl, {
    method: 'POST',
    body: answerToForm(surface, answer, revision),
    redirect: 'manual',
  });
  return res.status;
}
