/**
 * The answer page of the local Sess runtime: what a person sees when they open a Sess link, and
 * how their form post becomes an answer. The runtime (`src/testing`) mounts these functions in
 * its `node:http` server and decides which view to show; this module holds no state, opens no
 * socket and never logs.
 *
 * - {@link renderPage}: a whole HTML document for a {@link PageView}.
 * - {@link formToAnswer} / {@link answerToForm}: the form encoding, both ways.
 * - {@link validateAnswer}: the field-schema checks with messages for the person.
 *
 * This file only re-exports, from `render.ts` (every view), `fields.ts` (the form encoding),
 * `validate.ts` (the answer checks), `html.ts` (escaping, the document frame, the CSP) and
 * `live.ts` (the one script). Not here: the routes that serve these views
 * (`../server/page-routes.ts`) and the state they show (`../model/`).
 */
export { answerToForm, type FieldKind, fieldKind, formName, formToAnswer, surfaceFields } from './fields.js';
export { escapeHtml, PAGE_CSP } from './html.js';
export { LIVE_SCRIPT, LIVE_SCRIPT_SOURCE } from './live.js';
export { type PageView, renderPage } from './render.js';
export { ACTION_ERROR_KEY, type AnswerCheck, validateAnswer } from './validate.js';
