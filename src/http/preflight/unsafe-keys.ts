/**
 * The body parsed once (`parseBody`) and the unsafe-key guard on it: a JSON body that names
 * `__proto__`, `constructor` or `prototype` as a key anywhere is refused before any MCP code sees
 * it, with a JSON-RPC `Invalid params` error in the request's protocol era.
 *
 * It reads the parsed body's keys, never the values of tool arguments: it does not validate them
 * (the engine does), does not read the body from the request (`body.ts` does) and does not answer
 * malformed JSON (the SDK does, in its own words).
 */
import { isUnsafeKey } from '../../index.js';
import { INVALID_PARAMS, type JsonRpcId, jsonRpcError, requestIdOf } from '../responses.js';
import { type ParsedBody, type PreflightContext, type Refusal, refusal } from './context.js';
import { requestEra } from './era.js';

/**
 * The first unsafe key anywhere in a parsed JSON value. Iterative, so a deeply nested body cannot
 * overflow the stack and slip through; `JSON.parse` defines `__proto__` as an own data property
 * (it never sets the prototype), so `Object.keys` sees every key exactly as sent.
 */
export function findUnsafeKey(value: unknown): string | undefined {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (next === null || typeof next !== 'object') continue;
    if (Array.isArray(next)) {
      for (const item of next) if (item !== null && typeof item === 'object') stack.push(item);
      continue;
    }
    for (const key of Object.keys(next)) {
      if (isUnsafeKey(key)) return key;
      const child = (next as Record<string, unknown>)[key];
      if (child !== null && typeof child === 'object') stack.push(child);
    }
  }
  return undefined;
}

/** Parse a body once and note the first unsafe key, if any. */
export function parseBody(text: string): ParsedBody {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false };
  }
  const unsafeKey = findUnsafeKey(value);
  return unsafeKey === undefined ? { ok: true, value } : { ok: true, value, unsafeKey };
}

/**
 * The refusal of a body with an unsafe key, in the request's era:
 * - 2026-07-28 (modern): an entry-gate rejection, HTTP `400` with the JSON-RPC error and the
 *   request's id, as the SDK answers its own `-32602` envelope rejections (a modern client reads
 *   a 400 JSON-RPC error for its request as the call's error).
 * - 2025 era (legacy): the JSON-RPC error in-band, HTTP `200` `application/json`, as a 2025
 *   Streamable HTTP server answers a request whose params it refuses; a notification or batch,
 *   which has no id to answer, gets `400` with `id: null`.
 */
export function unsafeKeyResponse(era: 'legacy' | 'modern', body: unknown, key: string): Response {
  const id: JsonRpcId = requestIdOf(body) ?? null;
  const message = `Invalid params: the key "${key}" is not accepted anywhere in a request`;
  const status = era === 'legacy' && id !== null ? 200 : 400;
  return jsonRpcError(status, INVALID_PARAMS, message, id, { unsafeKey: key });
}

/** Refuses a body naming an unsafe key anywhere, in the request's era (`http.unsafe_key`). */
export function unsafeKeyStage(ctx: PreflightContext): Refusal | undefined {
  const { parsed } = ctx;
  if (parsed?.ok !== true || parsed.unsafeKey === undefined) return undefined;
  const era = requestEra(ctx.incoming.headers, parsed.value);
  return refusal(unsafeKeyResponse(era, parsed.value, parsed.unsafeKey), 'http.unsafe_key', false);
}
