/**
 * The protocol era of a request and the era stage: a JSON-RPC batch from a client whose
 * `MCP-Protocol-Version` has no batching (2025-06-18 and later) is refused before anything in
 * it runs. {@link requestEra} tells which era (2025 or 2026-07-28) the SDK will serve a request
 * in, so a refusal given before the SDK can be shaped the way that era expects.
 *
 * It does not route requests (the SDK does) and does not check keys (`unsafe-keys.ts`).
 */
import { classifyInboundRequest } from '@modelcontextprotocol/server';
import { INVALID_REQUEST, jsonRpcError } from '../responses.js';
import { type PreflightContext, type Refusal, refusal } from './context.js';

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

/** Refuses a batch the request's protocol version does not allow (`400`, `http.batch_refused`). */
export function eraStage(ctx: PreflightContext): Refusal | undefined {
  if (ctx.parsed?.ok !== true) return undefined;
  const batch = batchRefusal(ctx.incoming.headers, ctx.parsed.value);
  return batch === undefined ? undefined : refusal(batch, 'http.batch_refused', false);
}
