/**
 * What a failed Sess call means for an interaction, by the phase it failed in: the error
 * mapping table of `docs/architecture.md` as code. Each classifier returns an outcome the engine
 * acts on (remove the intent, record `create_unknown`, keep a request saved, block, or resume).
 *
 * Messages are written here, never copied from the failure: a Sess error's text could carry
 * something the caller must not see, so only codes, statuses, fixed words and the origin the
 * client was configured with (never a secret) pass through.
 */
import { SessMcpError } from '../contract/errors.js';
import { type ConnectCause, SessApiError } from '../contract/ports.js';

/** Any failure, made a {@link SessApiError}. A foreign throw counts as a lost outcome. */
export function asSessApiError(error: unknown): SessApiError {
  if (error instanceof SessApiError) return error;
  if (
    typeof error === 'object' &&
    error !== null &&
    (error as { name?: unknown }).name === 'SessApiError' &&
    typeof (error as { kind?: unknown }).kind === 'string'
  ) {
    return error as SessApiError;
  }
  return new SessApiError('unknown_outcome', 'Sess call failed unexpectedly', { cause: error });
}

const CONTEXT_MISSING_MESSAGE =
  'No trusted Sess workspace is configured to verify answers. Set SESS_EXPECTED_WORKSPACE_ID.';

/**
 * `NOT_CONFIGURED` saying which part of the configuration is wrong, so the owner knows what to
 * change: Sess refusing the key (401), or the client's own refusal (no key, a key a bearer token
 * cannot carry, an origin, a trusted workspace), whose message holds fixed words only.
 */
function notConfigured(err: SessApiError): SessMcpError {
  const what =
    err.kind === 'api' && err.status === 401
      ? 'Sess refused the API key (HTTP 401): it is wrong, revoked or not for this Sess.'
      : err.kind === 'configuration' || err.notSentKind === 'configuration'
        ? err.message
        : 'The Sess client is not configured correctly (origin, key or trusted workspace).';
  return new SessMcpError('NOT_CONFIGURED', `${what} Ask the owner to fix the configuration.`);
}

/**
 * Sess answered something this server cannot trust. For a read nothing changed; for a mutation
 * (`tool`) Sess may have applied it, and its saved request waits for the identical repeat.
 * `reason` is a fixed word for the check that failed: the client's word for a `protocol` error,
 * the verification reason for a receipt, `protocol` when neither names one. Never data.
 */
function protocolError(err: SessApiError, tool?: string): SessMcpError {
  const outcome =
    tool === undefined
      ? 'nothing was changed'
      : `the ${tool} request may have taken effect at Sess and stays saved; repeat the identical call once the owner has checked Sess`;
  return new SessMcpError(
    'SESS_PROTOCOL_ERROR',
    `Sess sent a response this server cannot trust (malformed or self-contradictory); ${outcome}. Ask the owner to check the Sess origin and version.`,
    { reason: err.protocolReason ?? err.reason ?? 'protocol' },
  );
}

/**
 * What each {@link ConnectCause} says after "Sess at <origin> could not be reached while …:", and
 * whether it looks like the owner's configuration rather than an outage: a host name that does
 * not resolve or a TLS certificate that is not trusted or names another host comes back the same
 * on every retry (a typo in the origin, a proxy or a private certificate authority), so the agent
 * is told not to retry (`NOT_CONFIGURED`); a refused or unreachable connection, a lookup that
 * failed for now and a connect timeout are what an outage looks like (`SESS_UNAVAILABLE`).
 */
const CONNECT_CAUSES: Readonly<Record<ConnectCause, { text: string; configuration: boolean }>> = {
  name_not_resolved: { text: 'its host name does not resolve (DNS)', configuration: true },
  name_lookup_failed: { text: 'its host name could not be looked up just now (DNS)', configuration: false },
  connection_refused: { text: 'the connection was refused', configuration: false },
  unreachable: { text: 'there is no route to its host', configuration: false },
  connect_timeout: { text: 'no connection was made in time', configuration: false },
  tls_certificate: {
    text: 'its TLS certificate is not trusted (expired, not yet valid, self-signed or of an unknown issuer)',
    configuration: true,
  },
  tls_name_mismatch: { text: 'its TLS certificate is for another host name', configuration: true },
};

/**
 * Sess was not reached while `what`, or answered that it cannot serve now. A connection that was
 * never made names the origin and why ({@link CONNECT_CAUSES}); one whose cause looks like
 * configuration is `NOT_CONFIGURED` (not retryable), every other `SESS_UNAVAILABLE` (retryable).
 * For a mutation (`tool`) nothing was applied and its saved request waits for the identical call.
 */
function unavailable(what: string, err: SessApiError, tool?: string): SessMcpError {
  const status = err.status === undefined ? '' : ` (HTTP ${err.status})`;
  const connect = err.connectCause === undefined ? undefined : CONNECT_CAUSES[err.connectCause];
  const where = err.origin === undefined ? 'Sess' : `Sess at ${err.origin}`;
  const why = connect === undefined ? '' : `: ${connect.text}`;
  if (connect?.configuration === true) {
    const outcome =
      tool === undefined
        ? 'Nothing was sent'
        : `Nothing was applied and the request stays saved: repeat the identical ${tool} call once it is fixed`;
    return new SessMcpError(
      'NOT_CONFIGURED',
      `${where} could not be reached while ${what}${why}. That looks like a configuration mistake, not an outage, so trying again will not help. ${outcome}. Ask the owner to check the Sess origin (SESS_API_ORIGIN for the stdio server, sessOrigin over HTTP).`,
    );
  }
  const next = tool === undefined ? 'nothing changed. Try again later.' : stillSaved(tool);
  // The Sess failure is kept as the cause (never in the message or on the wire): a watcher reads
  // the `Retry-After` it carries.
  return new SessMcpError(
    'SESS_UNAVAILABLE',
    `${where} could not be reached while ${what}${status}${why}; ${next}`,
    { cause: err },
  );
}

/** Sess's own `503 unavailable` error body: the request was refused before anything was done. */
function saysNothingDone(err: SessApiError): boolean {
  return err.status === 503 && err.apiCode === 'unavailable';
}

/** The tail of a mutation that was certainly not applied: the saved request waits for a repeat. */
function stillSaved(tool: string): string {
  return `nothing was applied and the request stays saved. Repeat the identical ${tool} call later.`;
}

// ---------------------------------------------------------------------------------------------
// create

/** What a failed create means. */
export type CreateFailure =
  /** Sess certainly created nothing: remove the intent and report `error`. */
  | { kind: 'not_created'; error: SessMcpError }
  /** A Session may exist: record `create_unknown` with `reason`. */
  | { kind: 'unknown'; reason: string };

/** Classify a failed create (Session or Ask). */
export function classifyCreateFailure(error: unknown): CreateFailure {
  const err = asSessApiError(error);
  switch (err.kind) {
    case 'not_sent':
      return err.notSentKind === 'configuration'
        ? { kind: 'not_created', error: notConfigured(err) }
        : { kind: 'not_created', error: unavailable('creating the link', err) };
    case 'configuration':
      return { kind: 'not_created', error: notConfigured(err) };
    case 'api': {
      const status = err.status ?? 0;
      if (status === 401) return { kind: 'not_created', error: notConfigured(err) };
      if (status >= 400 && status < 500) {
        if (err.apiCode === 'plan_limit') {
          return {
            kind: 'not_created',
            error: new SessMcpError(
              'PLAN_LIMIT_REACHED',
              'The Sess workspace reached a limit of its plan; no link was created.',
            ),
          };
        }
        if (status === 429 || status === 408) {
          // Rate limited, or the request not received in time: certainly not created, and it may work later.
          return { kind: 'not_created', error: unavailable('creating the link', err) };
        }
        const details: { field?: string; limit?: number; length?: number } = {};
        if (err.field !== undefined) details.field = err.field;
        if (err.limit !== undefined) details.limit = err.limit;
        if (err.length !== undefined) details.length = err.length;
        const where = err.field === undefined ? '' : ` at ${err.field}`;
        const sizes =
          err.limit !== undefined && err.length !== undefined
            ? ` It is ${err.length} characters; the limit is ${err.limit}.`
            : '';
        return {
          kind: 'not_created',
          error: new SessMcpError(
            'CREATE_REJECTED',
            `Sess refused to create the link (HTTP ${status}${err.apiCode === undefined ? '' : ` ${err.apiCode}`})${where}.${sizes} No link exists.`,
            details,
          ),
        };
      }
      // Sess's own `503 unavailable` promises nothing was done (docs/sess-api.md); any other 5xx may have.
      if (saysNothingDone(err)) return { kind: 'not_created', error: unavailable('creating the link', err) };
      return { kind: 'unknown', reason: 'server_error' };
    }
    case 'transport':
    case 'timeout':
    case 'unknown_outcome':
    case 'aborted':
      return { kind: 'unknown', reason: err.kind };
    case 'protocol':
    case 'verification':
      return { kind: 'unknown', reason: 'protocol' };
  }
}

/** The error for a record whose create outcome is unknown. */
export function createOutcomeUnknown(state: 'create_intent' | 'create_unknown'): SessMcpError {
  return new SessMcpError(
    'CREATE_OUTCOME_UNKNOWN',
    'The link may or may not have been created: the answer to the create request was lost. Do not create another one for the same question; ask the owner to check Sess (owner procedure).',
    { state, reason: state === 'create_intent' ? 'create_interrupted' : 'create_outcome_lost' },
  );
}

// ---------------------------------------------------------------------------------------------
// read, wait, verify

/** What a failed read, wait or verification means. */
export type ReadFailure =
  /** Report `error`; nothing changes. */
  | { kind: 'fail'; error: SessMcpError }
  /** The caller's signal cut the call: the wait ends as `needs_resume`. */
  | { kind: 'aborted' }
  /** The interaction needs its owner. */
  | { kind: 'block'; code: 'VERIFICATION_FAILED' | 'RECOVERY_BLOCKED'; reason: string };

/** Classify a failed read, wait or receipt verification. */
export function classifyReadFailure(error: unknown, what: string): ReadFailure {
  const err = asSessApiError(error);
  switch (err.kind) {
    case 'aborted':
      return { kind: 'aborted' };
    case 'not_sent':
      return {
        kind: 'fail',
        error: err.notSentKind === 'configuration' ? notConfigured(err) : unavailable(what, err),
      };
    case 'configuration':
      return { kind: 'fail', error: notConfigured(err) };
    case 'protocol':
      return { kind: 'fail', error: protocolError(err) };
    case 'api':
      // A rejected key is the owner's to fix, not a passing outage.
      if (err.status === 401) return { kind: 'fail', error: notConfigured(err) };
      if (err.status === 404) return { kind: 'block', code: 'RECOVERY_BLOCKED', reason: 'session_not_found' };
      return { kind: 'fail', error: unavailable(what, err) };
    case 'transport':
    case 'timeout':
    case 'unknown_outcome':
      return { kind: 'fail', error: unavailable(what, err) };
    case 'verification':
      switch (err.reason) {
        case 'key_set_unavailable':
        case 'key_refresh_cooldown':
          return {
            kind: 'fail',
            error: new SessMcpError(
              'SESS_UNAVAILABLE',
              'The Sess receipt keys could not be fetched right now, so the answer was not released; nothing changed. Try again later.',
            ),
          };
        case 'context_missing':
          return {
            kind: 'fail',
            error: new SessMcpError('NOT_CONFIGURED', CONTEXT_MISSING_MESSAGE, { reason: 'context_missing' }),
          };
        default:
          return { kind: 'block', code: 'VERIFICATION_FAILED', reason: err.reason ?? 'unverified' };
      }
  }
}

// ---------------------------------------------------------------------------------------------
// publish, complete, withdraw

/** What a failed publish, complete or withdraw means. */
export type MutationFailure =
  /** The saved request stays; report `error` (repeat the identical call to replay it). */
  | { kind: 'pending'; error: SessMcpError }
  /** Sess refused deterministically: block with `MUTATION_REJECTED`. */
  | { kind: 'block'; reason: string }
  /**
   * Withdraw only: Sess certainly did not apply it (`409` an answer came first, `410`, another
   * `4xx`): the saved request is cleared and the record is left as it was.
   */
  | { kind: 'refused'; status: number; apiCode?: string }
  /**
   * Withdraw only: `404`/`405` on the endpoint. A read tells a Sess that does not offer withdrawal
   * from an unknown Session or Ask.
   */
  | { kind: 'not_offered' };

/** Classify a failed publish or complete. */
export function classifyMutationFailure(
  error: unknown,
  tool: 'sess_publish' | 'sess_complete' | 'sess_withdraw',
): MutationFailure {
  const err = asSessApiError(error);
  const unknown = (): MutationFailure => ({
    kind: 'pending',
    error: new SessMcpError(
      'OUTCOME_UNKNOWN',
      `The answer to ${tool} was lost, so it may or may not have taken effect. Repeat the identical ${tool} call: it replays the saved request.`,
    ),
  });
  switch (err.kind) {
    case 'not_sent':
      if (err.notSentKind === 'configuration') return { kind: 'block', reason: 'not_sent_configuration' };
      return {
        kind: 'pending',
        error: unavailable(`sending ${tool}`, err, tool),
      };
    case 'api': {
      const status = err.status ?? 0;
      // Rate limited, or the request not received in time (408): nothing was applied.
      if (status === 429 || status === 408) {
        return {
          kind: 'pending',
          error: unavailable(`sending ${tool}`, err, tool),
        };
      }
      // A rejected key did nothing: the request stays saved for after the owner fixed the key.
      if (status === 401) return { kind: 'pending', error: notConfigured(err) };
      if (status >= 400 && status < 500) return { kind: 'block', reason: err.apiCode ?? `http_${status}` };
      if (saysNothingDone(err)) return { kind: 'pending', error: unavailable(`sending ${tool}`, err, tool) };
      return unknown();
    }
    case 'transport':
    case 'timeout':
    case 'unknown_outcome':
    case 'aborted':
      return unknown();
    case 'configuration':
      return { kind: 'pending', error: notConfigured(err) };
    case 'protocol':
    case 'verification':
      return { kind: 'pending', error: protocolError(err, tool) };
  }
}

/**
 * Classify a failed withdraw (or Ask close). Unlike publish and complete, a deterministic refusal
 * never blocks the record: a withdraw Sess did not apply leaves the question as it was, so an
 * answer that came first is never lost. Failures that may have taken effect keep the request saved.
 */
export function classifyWithdrawFailure(error: unknown): MutationFailure {
  const err = asSessApiError(error);
  const status = err.status ?? 0;
  if (err.kind === 'api' && status >= 400 && status < 500 && status !== 401 && status !== 429) {
    if (status === 404 || status === 405) return { kind: 'not_offered' };
    return err.apiCode === undefined
      ? { kind: 'refused', status }
      : { kind: 'refused', status, apiCode: err.apiCode };
  }
  return classifyMutationFailure(err, 'sess_withdraw');
}
