/**
 * Shared helpers of the local-runtime tests: a sample Surface and a tiny raw API caller on
 * `fetch` (these tests speak the wire directly, not through the client).
 */
import type { Surface } from '../../src/core/model/surface.js';
import type { LocalSess } from '../../src/testing/index.js';
import { messageField, surfaceOf, whatChangedRecord } from '../support/surfaces.js';

/** A Surface with a record, an optional text field and a boolean. */
export function sampleSurface(title = 'Approve this commit?'): Surface {
  return surfaceOf(title, [
    whatChangedRecord(),
    messageField(),
    { type: 'field', name: 'push', label: 'Push too', schema: { type: 'boolean' } },
  ]);
}

/** Wire JSON as tests read it (any shape; the assertions check it). */
// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary wire JSON
export type WireJson = any;

/** A raw API response. */
export interface Raw {
  status: number;
  headers: Headers;
  text: string;
  json: WireJson;
}

let counter = 0;
/** A fresh idempotency key. */
export function newKey(): string {
  counter += 1;
  return `key-${Date.now()}-${counter}`;
}

/** Call the API of `sess` with its API key (or `apiKey`). */
export async function call(
  sess: LocalSess,
  method: string,
  path: string,
  options: {
    body?: unknown;
    key?: string | null;
    ifMatch?: number | string;
    apiKey?: string | null;
    signal?: AbortSignal;
  } = {},
): Promise<Raw> {
  const headers: Record<string, string> = {};
  const apiKey = options.apiKey === undefined ? sess.apiKey : options.apiKey;
  if (apiKey !== null) headers.authorization = `Bearer ${apiKey}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.key !== undefined && options.key !== null) headers['idempotency-key'] = options.key;
  if (options.ifMatch !== undefined)
    headers['if-match'] = typeof options.ifMatch === 'number' ? `"${options.ifMatch}"` : options.ifMatch;
  const init: RequestInit = { method, headers };
  if (options.body !== undefined)
    init.body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  if (options.signal) init.signal = options.signal;
  const res = await fetch(`${sess.origin}${path}`, init);
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Create a Session and return its wire view. */
export async function createSession(
  sess: LocalSess,
  body: Record<string, unknown> = {},
  apiKey?: string,
): Promise<WireJson> {
  const res = await call(sess, 'POST', '/v1/sessions', {
    body: { interaction: sampleSurface(), ...body },
    key: newKey(),
    ...(apiKey === undefined ? {} : { apiKey }),
  });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
  return res.json;
}

/** The answer used throughout. */
export const ANSWER = { action: 'approve', values: { message: 'Greet users by first name', push: true } };

/**
 * A Session answered once with {@link ANSWER} through its page, and what a follow-up needs: the
 * answer's event id and a publish body that names it.
 */
export async function answeredSession(
  sess: LocalSess,
): Promise<{ s: WireJson; eventId: string; next: object }> {
  const s = await createSession(sess);
  await sess.submitAnswer(s.human_url, ANSWER);
  const eventId: string = (await call(sess, 'GET', `/v1/sessions/${s.id}`)).json.responses[0].event_id;
  return { s, eventId, next: { response_event_id: eventId, interaction: sampleSurface('Next?') } };
}
