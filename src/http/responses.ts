/**
 * The HTTP answers the pipeline gives before a request reaches the MCP SDK: Host and
 * Origin refusals, the Bearer challenges, size, media type and deadline refusals, and the
 * unsafe-key refusal in the request's protocol era.
 *
 * Every message here is a fixed sentence: nothing a client sent (a header, a token, a body) is
 * echoed back. This module decides no policy; the preflight stages (`preflight/`) decide which answer applies.
 */

/** A JSON-RPC request id as it may be echoed back. */
export type JsonRpcId = string | number | null;

/** A JSON-RPC id a request can carry (`null` is not one a request uses). */
export function isJsonRpcId(value: unknown): value is string | number {
  return typeof value === 'string' || typeof value === 'number';
}

/**
 * The id of a single JSON-RPC request (an object with a `method` and a string or number `id`), if
 * `body` is one: the id an answer may echo and a cancellation may name. A batch, a notification
 * or anything else has none.
 */
export function requestIdOf(body: unknown): string | number | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const { method, id } = body as { method?: unknown; id?: unknown };
  return typeof method === 'string' && isJsonRpcId(id) ? id : undefined;
}

/** The JSON-RPC error code the SDK uses for transport-level refusals. */
const SERVER_ERROR = -32000;

/** JSON-RPC "Invalid params". */
export const INVALID_PARAMS = -32602;
/** JSON-RPC `Invalid Request`. */
export const INVALID_REQUEST = -32600;

/** A JSON-RPC error body with an HTTP status, in the shape the SDK's own entry answers use. */
export function jsonRpcError(
  status: number,
  code: number,
  message: string,
  id: JsonRpcId = null,
  data?: unknown,
  headers?: Record<string, string>,
): Response {
  const error: { code: number; message: string; data?: unknown } = { code, message };
  if (data !== undefined) error.data = data;
  return Response.json(
    { jsonrpc: '2.0', error, id },
    { status, ...(headers === undefined ? {} : { headers }) },
  );
}

/** `403`: the `Host` header is missing or not on the allowlist (DNS rebinding defence). */
export function hostRejected(): Response {
  return jsonRpcError(403, SERVER_ERROR, 'Forbidden: the Host header is not allowed for this endpoint');
}

/** `403`: the request carries an `Origin` that is not on the allowlist. */
export function originRejected(): Response {
  return jsonRpcError(403, SERVER_ERROR, 'Forbidden: the Origin header is not allowed for this endpoint');
}

/** Quote a value for an auth-param of a `WWW-Authenticate` challenge (RFC 9110 quoted-string). */
function quoted(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * A `Bearer` challenge (RFC 6750 §3) with its auth-params in a fixed order: `error`, `scope`
 * (the scopes this endpoint requires, space-separated, when it requires any), then RFC 9728's
 * `resource_metadata`.
 */
function bearerChallenge(
  error: 'invalid_token' | 'insufficient_scope' | undefined,
  requiredScopes: readonly string[],
  resourceMetadataUrl: string | undefined,
): string {
  const params: string[] = [];
  if (error !== undefined) params.push(`error=${quoted(error)}`);
  if (requiredScopes.length > 0) params.push(`scope=${quoted(requiredScopes.join(' '))}`);
  if (resourceMetadataUrl !== undefined) params.push(`resource_metadata=${quoted(resourceMetadataUrl)}`);
  return params.length === 0 ? 'Bearer' : `Bearer ${params.join(', ')}`;
}

/**
 * `401`: no principal for this request. The challenge names the scopes the endpoint requires and
 * its resource metadata, and carries `error="invalid_token"` only when the request presented an
 * `Authorization` header (a request with none gets no error code, RFC 6750 §3.1).
 */
export function unauthenticated(
  presented: boolean,
  requiredScopes: readonly string[],
  resourceMetadataUrl: string | undefined,
): Response {
  const challenge = bearerChallenge(
    presented ? 'invalid_token' : undefined,
    requiredScopes,
    resourceMetadataUrl,
  );
  return Response.json(
    { error: 'invalid_token', error_description: 'Authentication required' },
    { status: 401, headers: { 'WWW-Authenticate': challenge } },
  );
}

/** `403 insufficient_scope` naming every required scope (RFC 6750 §3.1). */
export function insufficientScope(
  requiredScopes: readonly string[],
  resourceMetadataUrl: string | undefined,
): Response {
  return Response.json(
    { error: 'insufficient_scope', error_description: 'The access token lacks a required scope' },
    {
      status: 403,
      headers: {
        'WWW-Authenticate': bearerChallenge('insufficient_scope', requiredScopes, resourceMetadataUrl),
      },
    },
  );
}

/** `500`: the host's `authenticate` failed or returned something that is not a principal. */
export function authenticationFailed(): Response {
  return Response.json(
    { error: 'server_error', error_description: 'Authentication could not be completed' },
    { status: 500 },
  );
}

/** `503`: the host's `authenticate` did not answer before the request deadline. */
export function authenticationTimedOut(): Response {
  return jsonRpcError(
    503,
    SERVER_ERROR,
    'Service Unavailable: authentication did not complete in time',
    null,
  );
}

/** `503`: the handler has been closed. */
export function handlerClosed(): Response {
  return jsonRpcError(503, SERVER_ERROR, 'Service Unavailable: this endpoint is shutting down');
}

/** `413`: the body is larger than `maxBodyBytes`, by its declared length or as streamed. */
export function bodyTooLarge(maxBodyBytes: number): Response {
  return jsonRpcError(413, SERVER_ERROR, `Payload Too Large: the request body is over ${maxBodyBytes} bytes`);
}

/** `415`: a POST whose media type is not `application/json`, in the SDK's own words. */
export function unsupportedMediaType(): Response {
  return jsonRpcError(415, SERVER_ERROR, 'Unsupported Media Type: Content-Type must be application/json');
}

/** `408`: the body did not arrive before the request deadline. */
export function bodyTimedOut(): Response {
  return jsonRpcError(408, SERVER_ERROR, 'Request Timeout: the request body did not arrive in time');
}

/**
 * `400`: something mounted before the handler (a body parser) read the request body, so the
 * handler cannot. The message says what the server's owner must change.
 */
export function bodyConsumed(): Response {
  return jsonRpcError(
    400,
    -32700,
    'Parse error: the request body was read before this handler saw it; mount the MCP handler before any body parser',
  );
}

/** `400`: the body could not be read (the client went away or the stream failed). */
export function bodyUnreadable(): Response {
  return jsonRpcError(400, -32700, 'Parse error: the request body could not be read');
}

/** `500`: something failed in this handler; no detail is given to the client. */
export function internalError(id: JsonRpcId = null): Response {
  return jsonRpcError(500, -32603, 'Internal server error', id);
}
