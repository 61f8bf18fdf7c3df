/**
 * One authenticated call to the Sess API: reads the API key, builds the headers, runs the exchange
 * (`errors.ts`), turns an error body into an `api` error with only Sess's fixed words, checks the
 * `Sess-Workspace-Id` header (against the workspace the credential must belong to, the expected
 * one and the one seen before), and hands back the parsed JSON of a success.
 *
 * It knows no endpoint and decodes no view (`client.ts` and `decode.ts` do). The API key is read
 * from `credential()` on every call and never put in an error; neither is any of Sess's free text.
 */
import * as v from 'valibot';
import { SessApiError } from '../core/contract/ports.js';
import { SESS_ID_RULE } from '../core/contract/rules.js';
import { keyOfAnotherWorkspace, protocol, refuseToSend } from './errors.js';
import { type ResponseHeaders, runExchange, type Transport } from './exchange.js';
import { ErrorBodySchema, HEADERS, retryAfterMsOf } from './wire.js';

/** The largest response body the client reads, in bytes. */
const MAX_RESPONSE_BYTES = 8_388_608;

// What of a server's own words may go into a message: an error code, a JSON pointer.
const SAFE_API_CODE = /^[a-z][a-z0-9_]{0,63}$/;
const SAFE_POINTER = /^(\/[A-Za-z0-9_~.-]{0,64}){0,16}$/;
// Printable ASCII without spaces: nothing that could break out of the Authorization header.
const BEARER_TOKEN = /^[\x21-\x7e]+$/;

/** One request to the API. */
export interface Call {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** A create, publish or complete: a lost answer leaves its outcome unknown. */
  mutation: boolean;
  /** A short, secret-free description, such as `create a Session`. */
  what: string;
  /** The status a success must have. */
  expectStatus: number;
  /** The deadline of this call. @default the caller's `requestTimeoutMs` */
  timeoutMs?: number;
  signal?: AbortSignal | undefined;
}

/** A successful call: its parsed JSON, headers, and the workspace its header named (if any). */
export interface CallResult {
  json: unknown;
  headers: ResponseHeaders;
  workspaceId?: string;
}

/** What {@link createCaller} needs. */
export interface CallerSettings {
  origin: string;
  credential: () => string | Promise<string>;
  fetch: typeof fetch;
  /** Sends the requests instead of `fetch` when set (`node-transport.ts`). */
  transport?: Transport | undefined;
  expectedWorkspaceId: string | undefined;
  /** The workspace the credential must belong to; a response naming another is refused. */
  credentialWorkspaceId: string | undefined;
  requestTimeoutMs: number;
}

/** Sends calls for one client, remembering the workspace its responses named. */
export interface Caller {
  send(call: Call): Promise<CallResult>;
  /** The workspace named by `Sess-Workspace-Id` on this client's responses so far. */
  seenWorkspaceId(): string | undefined;
}

/** A caller bound to one origin and credential. */
export function createCaller(settings: CallerSettings): Caller {
  let seen: string | undefined;

  async function apiKey(): Promise<string> {
    let key: unknown;
    try {
      key = await settings.credential();
    } catch {
      // Its message is not kept: a provider may have put the key in it.
      throw new SessApiError('configuration', 'The Sess API key could not be read.');
    }
    if (typeof key !== 'string' || key.length === 0) {
      throw new SessApiError(
        'configuration',
        'No Sess API key is configured: the credential is empty (SESS_API_KEY for the stdio server, principal.credential() over HTTP).',
      );
    }
    if (!BEARER_TOKEN.test(key)) {
      throw new SessApiError('configuration', 'The Sess API key has characters a bearer token cannot carry.');
    }
    return key;
  }

  /**
   * Check `Sess-Workspace-Id` against the workspace the credential must belong to, the expected
   * and the previously seen workspace. `applied`: the response is a mutation's success.
   */
  function noteWorkspace(headers: ResponseHeaders, what: string, applied: boolean): string | undefined {
    const header = headers.get(HEADERS.workspaceId);
    if (header === null) return undefined;
    if (!SESS_ID_RULE.test(header))
      throw protocol(
        what,
        'the Sess-Workspace-Id header is not a workspace id',
        'workspace_header_malformed',
      );
    const mine = settings.credentialWorkspaceId;
    if (mine !== undefined && header !== mine) throw keyOfAnotherWorkspace(what, header, mine, applied);
    if (settings.expectedWorkspaceId !== undefined && header !== settings.expectedWorkspaceId) {
      throw protocol(
        what,
        'the Sess-Workspace-Id header names another workspace than the expected one',
        'workspace_header_foreign',
      );
    }
    if (seen !== undefined && header !== seen) {
      throw protocol(
        what,
        'the Sess-Workspace-Id header changed between responses',
        'workspace_header_changed',
      );
    }
    seen = header;
    return header;
  }

  async function send(call: Call): Promise<CallResult> {
    if (call.signal?.aborted) {
      throw new SessApiError('aborted', `The call to ${call.what} was aborted by the caller.`);
    }
    let body: string | undefined;
    if (call.body !== undefined) {
      try {
        body = JSON.stringify(call.body);
      } catch {
        throw refuseToSend(call.what, 'its body is not JSON');
      }
    }
    const headers: Record<string, string> = {
      accept: 'application/json',
      [HEADERS.authorization]: `Bearer ${await apiKey()}`,
      ...call.headers,
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await runExchange({
      fetch: settings.fetch,
      transport: settings.transport,
      url: settings.origin + call.path,
      method: call.method,
      headers,
      ...(body === undefined ? {} : { body }),
      mutation: call.mutation,
      what: call.what,
      timeoutMs: call.timeoutMs ?? settings.requestTimeoutMs,
      signal: call.signal,
      maxBytes: MAX_RESPONSE_BYTES,
    });
    const applied = call.mutation && response.status >= 200 && response.status < 300;
    const workspaceId = noteWorkspace(response.headers, call.what, applied);
    if (response.status !== call.expectStatus) {
      if (response.status >= 400) {
        const waitFor =
          response.status === 429 || response.status === 503
            ? retryAfterMsOf(response.headers.get(HEADERS.retryAfter), Date.now())
            : undefined;
        throw apiError(response.status, response.text, call.what, waitFor);
      }
      throw protocol(call.what, `unexpected HTTP ${response.status}`, 'unexpected_status');
    }
    const contentType = response.headers.get('content-type') ?? '';
    if (!/^application\/json\s*(;|$)/i.test(contentType))
      throw protocol(call.what, 'the body is not JSON', 'content_type_not_json');
    let json: unknown;
    try {
      json = JSON.parse(response.text);
    } catch {
      throw protocol(call.what, 'the body is not JSON', 'body_not_json');
    }
    return workspaceId === undefined
      ? { json, headers: response.headers }
      : { json, headers: response.headers, workspaceId };
  }

  return { send, seenWorkspaceId: () => seen };
}

/**
 * An error response as an `api` error (or `protocol`, for a 4xx that is not Sess's), with the
 * wait its `Retry-After` asked for.
 */
function apiError(status: number, text: string, what: string, retryAfterMs?: number): SessApiError {
  const waitFor = retryAfterMs === undefined ? {} : { retryAfterMs };
  let parsed: v.SafeParseResult<typeof ErrorBodySchema> | undefined;
  try {
    parsed = v.safeParse(ErrorBodySchema, JSON.parse(text));
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || !parsed.success) {
    // A proxy's 5xx page is still an unavailable server; a 4xx without Sess's body is not Sess.
    if (status >= 500)
      return new SessApiError('api', `Sess failed to ${what} (HTTP ${status}).`, { status, ...waitFor });
    // `408`: a server (Node's own, or a proxy) that did not receive the whole request in time
    // answers so before any handler runs. An overloaded Sess sends it; it contradicts nothing.
    if (status === 408) {
      return new SessApiError('api', `Sess did not receive the request to ${what} in time (HTTP 408).`, {
        status,
      });
    }
    return protocol(what, `HTTP ${status} without a Sess error body`, 'error_body_missing');
  }
  const { limit, length } = parsed.output.error;
  // A code or pointer of another shape is dropped (then the status alone classifies the error):
  // it would be the server's free text in our message.
  const code = SAFE_API_CODE.test(parsed.output.error.code) ? parsed.output.error.code : undefined;
  const pointer = parsed.output.error.field;
  const field = pointer !== undefined && SAFE_POINTER.test(pointer) ? pointer : undefined;
  const extra = [
    field === undefined ? '' : ` at ${field}`,
    limit === undefined ? '' : ` (limit ${limit}${length === undefined ? '' : `, length ${length}`})`,
  ].join('');
  // Sess's own `message` is left out: only fixed words and numbers go into ours.
  return new SessApiError('api', `Sess refused to ${what}: HTTP ${status} ${code ?? 'error'}${extra}.`, {
    status,
    ...(code === undefined ? {} : { apiCode: code }),
    ...(field === undefined ? {} : { field }),
    ...(limit === undefined ? {} : { limit }),
    ...(length === undefined ? {} : { length }),
    ...waitFor,
  });
}
