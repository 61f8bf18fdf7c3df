/**
 * A request body parsed once (`parseBody`) and the checks made on it before any MCP code sees it:
 * the unsafe-key guard (a JSON body that names `__proto__`, `constructor` or `prototype` as a key
 * anywhere is refused with a JSON-RPC `Invalid params` error in the request's protocol era, told
 * by `requestEra` as the SDK will route it) and the refusal of a JSON-RPC batch from a client
 * whose protocol version has no batching (`batchRefusal`).
 *
 * It reads keys, the body's shape and the protocol headers, never the values of tool arguments:
 * it does not validate them (the engine does) and does not answer malformed JSON (the SDK does,
 * in its own words).
 */
import { classifyInboundRequest } from '@modelcontextprotocol/server';
import { isUnsafeKey } from '../index.js';
import { INVALID_PARAMS, INVALID_REQUEST, type JsonRpcId, jsonRpcError, requestIdOf } from './responses.js';

/** A parsed body: the value and the first unsafe key found, if any. */
export type ParsedBody = { ok: true; value: unknown; unsafeKey?: string } | { ok: false };

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

/** The protocol era a request belongs to, exactly as the SDK entry will route it. */
export function requestEra(headers: Headers, body: unknown): 'legacy' | 'modern' {
  const outcome = classifyInboundRequest({
    httpMethod: 'POST',
    ...optionalHeader('protocolVersionHeader', headers.get('mcp-protocol-version')),
    ...optionalHeader('mcpMethodHeader', headers.get('mcp-method')),
    ...optionalHeader('mcpNameHeader', headers.get('mcp-name')),
    body,
  });
  return outcome.kind === 'legacy' ? 'legacy' : 'modern';
}

function optionalHeader<K extends string>(key: K, value: string | null): { [P in K]?: string } {
  return value === null ? {} : ({ [key]: value } as { [P in K]: string });
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

/** The first protocol version without JSON-RPC batching. */
const NO_BATCHING_SINCE = '2025-06-18';

/**
 * The refusal of a JSON-RPC batch from a client that declared a protocol version without
 * batching (2025-06-18 and later): `400` with `Invalid Request` and `id: null`, and nothing in the
 * batch runs. A 2025-03-26 client (no version header) may still send batches.
 */
export function batchRefusal(headers: Headers, body: unknown): Response | undefined {
  if (!Array.isArray(body)) return undefined;
  const version = headers.get('mcp-protocol-version');
  if (version === null || version < NO_BATCHING_SINCE) return undefined;
  return jsonRpcError(
    400,
    INVALID_REQUEST,
    `Invalid Request: JSON-RPC batches are not part of MCP since ${NO_BATCHING_SINCE}; send one message per request`,
    null,
  );
}
