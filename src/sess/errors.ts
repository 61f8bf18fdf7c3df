/**
 * The {@link SessApiError}s of the Sess client, made in one place: how a failed exchange becomes a
 * kind (definitely not sent `not_sent`, with the origin and why no connection was made, possibly
 * sent `transport`, a mutation whose answer was lost `unknown_outcome`, out of time `timeout`,
 * ended by the caller `aborted`), a request the client refuses to build, a response that breaks
 * the wire, and a receipt that did not verify.
 * The mapping of these kinds to tool error codes is the engine's, in `docs/architecture.md`
 * ("Error mapping").
 *
 * Only error shapes are inspected here: codes and names, never messages, and nothing a message
 * could leak. This module sends nothing (`exchange.ts`) and decodes no body.
 */
import { type ConnectCause, SessApiError, type VerificationReason } from '../core/contract/ports.js';

/** A request the client refuses to build: nothing is sent, and repeating it cannot help. */
export function refuseToSend(what: string, problem: string): SessApiError {
  return new SessApiError('not_sent', `The request to ${what} was not sent: ${problem}.`, {
    notSentKind: 'configuration',
  });
}

/**
 * A response that names another workspace than the one the credential must belong to
 * (`credentialWorkspaceId`: the HTTP principal's `workspaceId`): the API key is of another
 * workspace. Before Sess carried anything out it is `configuration`, for the owner to fix; on a
 * create's, publish's, complete's or withdraw's success (`applied`) it is `protocol`, since the
 * change was made in that other workspace. Both ids passed the Sess id rule, so neither can carry
 * anything but an id.
 */
export function keyOfAnotherWorkspace(
  what: string,
  keyWorkspace: string,
  credentialWorkspace: string,
  applied: boolean,
): SessApiError {
  if (applied) {
    return protocol(
      what,
      'it names another workspace than the one the API key was given for',
      'workspace_header_other_key',
    );
  }
  return new SessApiError(
    'configuration',
    `The Sess API key belongs to workspace ${keyWorkspace}, not to ${credentialWorkspace}, the workspace this caller is configured for (principal.workspaceId over HTTP); nothing was changed.`,
  );
}

/**
 * The failure of the read that learns the key's workspace before a create, as the create's own:
 * the create was not sent. A key of another workspace and a refused key stay what they are;
 * an answer that could not be trusted is the client refusing to send; anything else (no
 * connection, a timeout, a server error) is a transport failure with its origin and cause.
 */
export function notSentBeforeCreate(what: string, error: SessApiError): SessApiError {
  if (error.kind === 'configuration' || error.kind === 'aborted') return error;
  if (error.kind === 'api' && error.status === 401) return error;
  if (error.kind === 'protocol') {
    return refuseToSend(
      what,
      `the answer naming the workspace of the API key could not be trusted (${error.protocolReason ?? 'protocol'})`,
    );
  }
  const status = error.status === undefined ? '' : `, HTTP ${error.status}`;
  return new SessApiError(
    'not_sent',
    `The request to ${what} was not sent: the workspace of the API key could not be learnt first (${error.kind}${status}).`,
    {
      notSentKind: 'transport',
      ...(error.connectCause === undefined ? {} : { connectCause: error.connectCause }),
      ...(error.origin === undefined ? {} : { origin: error.origin }),
    },
  );
}

/** What each verification reason says; never a receipt, a key or a value. */
const REASON_TEXT: Record<VerificationReason, string> = {
  malformed: 'the receipt is malformed',
  bad_signature: 'the receipt signature is not valid',
  unknown_key_id: 'the receipt is signed with a key Sess does not list',
  foreign_key: 'the receipt is signed with a key of another workspace',
  claims_mismatch:
    'the receipt is for another answer, Session, revision, event, Surface, issuer, Ask or respondent',
  key_set_unavailable: 'the receipt key set could not be fetched; try again later',
  key_refresh_cooldown:
    'the receipt is signed with a key not yet in the cached key set; try again in a few seconds',
  context_missing: 'no trusted workspace is known (set SESS_EXPECTED_WORKSPACE_ID)',
};

/** The caller's signal ended a receipt verification. */
export function verificationAborted(): SessApiError {
  return new SessApiError('aborted', 'The receipt verification was aborted by the caller.');
}

/** A receipt that did not verify, for `reason`. */
export function refuseReceipt(reason: VerificationReason, cause?: unknown): SessApiError {
  return new SessApiError('verification', `The receipt did not verify: ${REASON_TEXT[reason]}.`, {
    reason,
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * A response that breaks the wire (malformed, self-contradictory, of another object): fail closed.
 * `reason` names the check that failed in one fixed word, for diagnostics (`problem` is prose).
 */
export function protocol(what: string, problem: string, reason: string): SessApiError {
  return new SessApiError('protocol', `Sess sent an invalid response to ${what}: ${problem}.`, {
    protocolReason: reason,
  });
}

/**
 * Error codes, as Node's fetch (undici) puts them on `cause.code` and `node:http` on the error,
 * that fail before a single request byte can reach the server, each with its
 * {@link ConnectCause}: name resolution, refused or unreachable connections and TLS handshake
 * failures. Edge runtimes give no code; their failures count as possibly sent.
 */
const CONNECT_CAUSES: Readonly<Record<string, ConnectCause>> = {
  ENOTFOUND: 'name_not_resolved',
  EAI_NONAME: 'name_not_resolved',
  EAI_FAIL: 'name_not_resolved',
  EAI_AGAIN: 'name_lookup_failed',
  ECONNREFUSED: 'connection_refused',
  ENETUNREACH: 'unreachable',
  EHOSTUNREACH: 'unreachable',
  EADDRNOTAVAIL: 'unreachable',
  UND_ERR_CONNECT_TIMEOUT: 'connect_timeout',
  CERT_HAS_EXPIRED: 'tls_certificate',
  CERT_NOT_YET_VALID: 'tls_certificate',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'tls_certificate',
  SELF_SIGNED_CERT_IN_CHAIN: 'tls_certificate',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'tls_certificate',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'tls_certificate',
  ERR_TLS_CERT_ALTNAME_INVALID: 'tls_name_mismatch',
};

function codeOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const code = (value as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** A connection that was never made: Node's code (one of {@link CONNECT_CAUSES}) and its cause. */
export interface ConnectFailure {
  code: string;
  cause: ConnectCause;
}

/**
 * The connect-phase failure `error` proves, or `undefined` when the request may have left this
 * process: the failure (or, for a happy-eyeballs `AggregateError`, every attempt, the first one
 * giving the cause) carries a code of {@link CONNECT_CAUSES}.
 */
export function connectFailureOf(error: unknown): ConnectFailure | undefined {
  let current: unknown = error;
  // The code sits on `cause` (undici) or one level deeper (wrapped by a custom fetch).
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const code = codeOf(current);
    if (code !== undefined && Object.hasOwn(CONNECT_CAUSES, code))
      return { code, cause: CONNECT_CAUSES[code]! };
    const nested = (current as { errors?: unknown }).errors;
    if (Array.isArray(nested) && nested.length > 0) {
      const each = nested.map((inner) => connectFailureOf(inner));
      return each.every((failure) => failure !== undefined) ? each[0] : undefined;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** True when a fetch failure proves the request never left this process ({@link connectFailureOf}). */
export function isDefinitelyNotSent(error: unknown): boolean {
  return connectFailureOf(error) !== undefined;
}

/** What a request was doing when it failed, for {@link classifyFailure}. */
export interface FailureContext {
  /** A create, publish or complete: losing its answer leaves the outcome unknown. */
  mutation: boolean;
  /** The caller's signal ended the call. */
  aborted: boolean;
  /** The client's own deadline ended the call. */
  timedOut: boolean;
  /** `fetch` had already resolved with the response head: the server surely received the request. */
  responseStarted: boolean;
  /** A short, secret-free description of the request, such as `create a Session`. */
  what: string;
  /** The Sess origin the request was for (scheme, host and port: no secret). */
  origin: string;
}

/**
 * Turn anything `fetch` (or reading its body) threw into a {@link SessApiError}.
 *
 * Order matters: the caller's abort wins, then the client's own deadline, then a proven
 * not-sent failure, then the possibly-sent ones.
 */
export function classifyFailure(error: unknown, context: FailureContext): SessApiError {
  const { what } = context;
  if (context.aborted) {
    return new SessApiError('aborted', `The call to ${what} was aborted by the caller.`);
  }
  if (context.timedOut) {
    if (context.mutation) {
      return new SessApiError(
        'unknown_outcome',
        `No answer in time to ${what}; the request may have taken effect (repeat the identical request to learn the outcome).`,
      );
    }
    return new SessApiError('timeout', `Sess did not answer in time to ${what}.`);
  }
  const connect = context.responseStarted ? undefined : connectFailureOf(error);
  if (connect !== undefined) {
    return new SessApiError(
      'not_sent',
      `Could not connect to Sess at ${context.origin} to ${what} (${connect.code}); nothing was sent.`,
      {
        notSentKind: 'transport',
        connectCause: connect.cause,
        origin: context.origin,
        cause: safeCause(error),
      },
    );
  }
  if (context.mutation) {
    return new SessApiError(
      'unknown_outcome',
      `The connection to Sess failed after the request to ${what} was sent; its outcome is unknown.`,
      { cause: safeCause(error) },
    );
  }
  return new SessApiError('transport', `The connection to Sess failed while trying to ${what}.`, {
    cause: safeCause(error),
  });
}

/**
 * A cause that is safe to keep: only the error's name and code, rebuilt, so that no message of a
 * custom `fetch` (which might echo headers) rides along.
 */
function safeCause(error: unknown): Error {
  const inner =
    typeof error === 'object' && error !== null ? (error as { cause?: unknown }).cause : undefined;
  const code = codeOf(inner) ?? codeOf(error);
  const name = error instanceof Error ? error.name : typeof error;
  const safe = new Error(code === undefined ? name : `${name} (${code})`);
  if (code !== undefined) (safe as Error & { code?: string }).code = code;
  return safe;
}
